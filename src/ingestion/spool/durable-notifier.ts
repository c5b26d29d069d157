/**
 * Coalesces the writer's "durable up to here" reports before they cross to the consumer thread. Under
 * load the spool completes hundreds of group writes a second; posting each one woke the consumer for a
 * few events at a time (one persons.db transaction each) and cost the main thread a postMessage per write
 * (≈10 % of its profile at 10 k req/s, most of it lost to the consumer preempting it on a 2-core box).
 * Reports go out at once when the lane was quiet for `intervalMs`, else once at the end of the interval
 * with the latest offset, so the consumer sees new events at most `intervalMs` later. Acknowledgements do
 * not wait for this: it only delays when the consumer starts reading.
 */
import type { Lane } from '../types.js'

export type DurableReport = (lane: Lane, segment: number, offset: number) => void

interface Pending {
  segment: number
  offset: number
}

export class DurableNotifier {
  readonly #send: DurableReport
  readonly #intervalMs: number
  readonly #pending = new Map<Lane, Pending>()
  readonly #lastSent = new Map<Lane, number>()
  #timer: NodeJS.Timeout | null = null

  constructor(send: DurableReport, intervalMs: number) {
    this.#send = send
    this.#intervalMs = intervalMs
  }

  /** The writer's onDurable. */
  readonly report: DurableReport = (lane, segment, offset) => {
    const pending = this.#pending.get(lane)
    // The reader needs every finished segment's final offset: never let a newer segment replace it.
    if (pending && pending.segment !== segment) this.#sendLane(lane)
    const now = performance.now()
    if (now - (this.#lastSent.get(lane) ?? -Infinity) >= this.#intervalMs) {
      this.#pending.delete(lane)
      this.#lastSent.set(lane, now)
      this.#send(lane, segment, offset)
      return
    }
    if (pending && pending.segment === segment) pending.offset = offset
    else this.#pending.set(lane, { segment, offset })
    this.#timer ??= setTimeout(() => {
      this.#timer = null
      this.flush()
    }, this.#intervalMs)
  }

  /** Sends everything held back (the timer, and shutdown before the consumer is told to drain). */
  flush(): void {
    if (this.#timer) {
      clearTimeout(this.#timer)
      this.#timer = null
    }
    for (const lane of [...this.#pending.keys()]) this.#sendLane(lane)
  }

  #sendLane(lane: Lane): void {
    const pending = this.#pending.get(lane)
    if (!pending) return
    this.#pending.delete(lane)
    this.#lastSent.set(lane, performance.now())
    this.#send(lane, pending.segment, pending.offset)
  }
}
