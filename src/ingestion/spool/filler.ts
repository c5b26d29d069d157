/**
 * The zero fill ahead of a segment's frames (writer.ts), written 16 KB at a time through a descriptor without
 * O_DSYNC. Linux (6.x) caches a file in folios as large as the writes that made them, and a later write into
 * part of a folio dirties all of it: with 1 MB zero writes every 13 KB group write sent ≈1 MB to the disk
 * (58 KB of device writes an event under /capture/, `write_bytes` of the pool threads); 16 KB writes keep it
 * at ≈29 KB (4 KB writes: ≈17 KB, at four times the writes).
 *
 * A fill is a hundred writes, so it runs on a thread of its own (workers/spool-fill.ts): chained through the
 * event loop, each write waited for the main thread between two requests, and under /batch/ load the fill fell
 * behind the frames, whose writes then waited for it. Written in one burst and synced once, a fill slowed the
 * group writes of the same file (/capture/ 10.1 → 8.8 k req/s against the fill made through the event loop,
 * five alternated 12 s runs each), so the thread pauses 0.2 ms between writes and syncs every 256 KB: 9.6–12.2
 * k against 9.2–10.6 k for the event loop's fill in four rounds of three; a 2 MB fill takes ≈35 ms.
 */
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs'
import { Worker, type MessagePort } from 'node:worker_threads'

/** Makes [from, to) of the file at `path` zeros on the disk; resolves when they are durable. */
export type ZeroFill = (path: string, from: number, to: number) => Promise<void>

const FILL_WRITE_BYTES = 16 * 1024
const ZEROS = Buffer.alloc(FILL_WRITE_BYTES)
const FILL_PAUSE_MS = 0.2
const FILL_SYNC_BYTES = 256 * 1024
const sleeper = new Int32Array(new SharedArrayBuffer(4))

/** Zeros over [from, to) of the file at `path`, synced every FILL_SYNC_BYTES and on return; `pauseMs` between two writes. */
export function writeZerosSync(path: string, from: number, to: number, pauseMs = 0): void {
  const fd = openSync(path, 'r+')
  try {
    for (let at = from; at < to; ) {
      const written = writeSync(fd, ZEROS, 0, Math.min(ZEROS.length, to - at), at)
      if (written === 0) throw new Error('the disk took no bytes of the zero fill')
      at += written
      if ((at - from) % FILL_SYNC_BYTES === 0) fdatasyncSync(fd)
      if (pauseMs > 0 && at < to) Atomics.wait(sleeper, 0, 0, pauseMs)
    }
    fdatasyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

interface FillRequest {
  id: number
  path: string
  from: number
  to: number
}

interface FillDone {
  id: number
  error: string | null
}

/** The fill thread's loop (workers/spool-fill.ts). */
export function serveFills(port: MessagePort): void {
  port.on('message', ({ id, path, from, to }: FillRequest) => {
    let error: string | null = null
    try {
      writeZerosSync(path, from, to, FILL_PAUSE_MS)
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure)
    }
    port.postMessage({ id, error } satisfies FillDone)
  })
}

const WORKER_URL = new URL('../../../workers/spool-fill.js', import.meta.url)

/**
 * The main thread's side: one fill thread, started on the first fill and again after it died (a fill it had
 * not answered fails, which only costs the frames after it their speed; writer.ts).
 */
export class FillThread {
  #worker: Worker | null = null
  #nextId = 0
  readonly #pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>()
  readonly #onThreadStart

  /** `onThreadStart`: told the thread's id each time one starts (for logs). */
  constructor(onThreadStart?: (threadId: number) => void) {
    this.#onThreadStart = onThreadStart
  }

  readonly fill: ZeroFill = (path, from, to) =>
    new Promise((resolve, reject) => {
      const id = ++this.#nextId
      this.#pending.set(id, { resolve, reject })
      this.#thread().postMessage({ id, path, from, to } satisfies FillRequest)
    })

  #thread(): Worker {
    if (this.#worker) return this.#worker
    const worker = new Worker(WORKER_URL)
    this.#onThreadStart?.(worker.threadId)
    worker.unref()
    worker.on('message', ({ id, error }: FillDone) => {
      const waiting = this.#pending.get(id)
      this.#pending.delete(id)
      if (error === null) waiting?.resolve()
      else waiting?.reject(new Error(error))
    })
    worker.on('error', () => {})
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = null
      for (const waiting of this.#pending.values()) waiting.reject(new Error('the spool fill thread stopped'))
      this.#pending.clear()
    })
    this.#worker = worker
    return worker
  }

  async close(): Promise<void> {
    await this.#worker?.terminate()
    this.#worker = null
  }
}
