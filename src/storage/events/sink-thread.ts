/**
 * The event store's inserts on a thread of their own, for both stores. On the consumer thread the
 * better-sqlite3 insert was ≈44 % of its time (batch-100 profile), and building ClickHouse's JSONEachRow
 * ≈18 % plus most of its GC; that thread is the /batch/ bottleneck. Here person processing of the next rows
 * runs while the previous ones are written. Rows cross packed into one transferred buffer (packed-rows.ts).
 *
 * `ThreadedSink` is the caller's side, an ordinary EventSink with the same errors (SinkError with the same
 * permanence). `serveSink` runs in the thread (workers/event-sink.ts is its entry): SQLite's inserts are
 * synchronous, so they run one after another; ClickHouse inserts may overlap (the dead-letter replay writes
 * beside the sink loop), as they could on the consumer thread.
 */
import { Worker, type MessagePort, type ResourceLimits } from 'node:worker_threads'
import type { ThreadPolicy } from '../../common/thread-priority.js'
import { ClickHouseEventSink } from './clickhouse-sink.js'
import type { ClickHouseOptions, ServerFeatures } from './clickhouse-schema.js'
import { packedLength, packRows, transferable, type PackedRows } from './packed-rows.js'
import { SqliteEventSink } from './sqlite.js'
import { SinkError, type EventRow, type EventSink } from './types.js'

/** Which store the thread opens (structured-cloned into it as workerData). */
export type SinkSpec = { kind: 'sqlite'; file: string } | { kind: 'clickhouse'; options: ClickHouseOptions; features: ServerFeatures }

/**
 * A write sends the first `length` bytes of `packed` (a reused buffer may be longer). An append sends the
 * caller's own buffers, part i being `ranges[2i + 1]` bytes from `ranges[2i]` of `buffers[i]`. Appends and
 * commits go to one ClickHouse INSERT kept open between them (clickhouse-stream.ts).
 */
type Request =
  | { id: number; op: 'write'; packed: ArrayBuffer; length: number }
  | { id: number; op: 'append'; buffers: ArrayBuffer[]; ranges: number[]; rows: number }
  | { id: number; op: 'commit'; rows: number }
  | { id: number; op: 'delete'; teamId: number; distinctIds: readonly string[] }
  | { id: number; op: 'ping' | 'close' }
/** A write's or an append's reply hands its buffers back (`packed`, `buffers`) for later batches to be packed into. */
type Reply = { id: number; packed?: ArrayBuffer; buffers?: ArrayBuffer[] } & ({ ok: true } | { ok: false; message: string; permanent: boolean })

export interface SinkThreadOptions {
  spec: SinkSpec
  /** The thread's entry module (workers/event-sink.js). */
  entry: URL
  resourceLimits?: ResourceLimits
  /**
   * Scheduling the thread puts itself under when it starts, rather than inheriting the starting thread's:
   * that one may be raised for a while (src/ingestion/consumer/priority-watch.ts).
   */
  scheduling?: SinkScheduling
  /** Told the thread's id each time one starts (for logs). */
  onThreadStart?: (threadId: number) => void
}

export interface SinkScheduling {
  policy: ThreadPolicy
  nice: number
}

/** What the thread receives as workerData. */
export interface SinkWorkerData {
  spec: SinkSpec
  scheduling: SinkScheduling | null
}

export class ThreadedSink implements EventSink {
  readonly kind: SinkSpec['kind']
  readonly #o: SinkThreadOptions
  readonly #pending = new Map<number, (reply: Reply) => void>()
  #worker: Worker | null = null
  #nextId = 1
  /**
   * The last batch's buffer, back from the thread: with 8 MB batches a fresh malloc for each one that was
   * freed on the other thread kept ≈40 MB more resident (glibc raises its mmap threshold after such frees).
   */
  #spare: ArrayBuffer | null = null

  constructor(options: SinkThreadOptions) {
    this.#o = options
    this.kind = options.spec.kind
  }

  async write(rows: readonly EventRow[]): Promise<void> {
    const buf = packRows(rows, this.#spare)
    this.#spare = null
    await this.#send(buf)
  }

  /** Rows the consumer packed as it made them (packed-rows.ts RowPacker). */
  async writePacked(rows: PackedRows): Promise<void> {
    await this.#send(this.#joined(rows))
  }

  /**
   * ClickHouse only: adds the rows to the open INSERT; they are stored once commit() resolves. The parts'
   * buffers are handed to the thread, not copied (that copy was ≈3 % of the consumer thread's time in a drain),
   * and come back in the result: the same rows, to pack into again. A failed append leaves the caller without
   * them, which is fine: a failed span is written again from the spool (consumer.ts, #insertLost).
   */
  async appendPacked(rows: PackedRows): Promise<PackedRows> {
    const buffers: ArrayBuffer[] = []
    const ranges: number[] = []
    for (const part of rows.parts) {
      // Parts own their ArrayBuffers (packed-rows.ts): transferring one detaches no other Buffer.
      buffers.push(part.buffer as ArrayBuffer)
      ranges.push(part.byteOffset, part.length)
    }
    const reply = await this.#call({ id: 0, op: 'append', buffers, ranges, rows: rows.count }, buffers)
    if (!reply.ok) throw new SinkError(reply.message, reply.permanent)
    return { parts: viewsOf(reply.buffers ?? [], ranges), count: rows.count }
  }

  /** Ends the open INSERT, which must hold the `rows` appended since the last commit. */
  async commit(rows: number): Promise<void> {
    const reply = await this.#call({ id: 0, op: 'commit', rows })
    if (!reply.ok) throw new SinkError(reply.message, reply.permanent)
  }

  /**
   * The parts copied into one buffer of its own, which is transferred: the parts stay with the caller, which
   * may write them again after a failure (a transferred buffer does not come back from a thread that died).
   */
  #joined(rows: PackedRows): Buffer {
    const buf = transferable(packedLength(rows), this.#spare)
    this.#spare = null
    let at = 0
    for (const part of rows.parts) at += part.copy(buf, at)
    return buf
  }

  async #send(buf: Buffer): Promise<void> {
    const packed = buf.buffer as ArrayBuffer
    const reply = await this.#call({ id: 0, op: 'write', packed, length: buf.length }, [packed])
    this.#spare = reply.packed ?? null
    if (!reply.ok) throw new SinkError(reply.message, reply.permanent)
  }

  async deleteEvents(teamId: number, distinctIds: readonly string[]): Promise<void> {
    const reply = await this.#call({ id: 0, op: 'delete', teamId, distinctIds })
    if (!reply.ok) throw new SinkError(reply.message, reply.permanent)
  }

  async ping(): Promise<boolean> {
    return (await this.#call({ id: 0, op: 'ping' }).catch(() => null))?.ok === true
  }

  async close(): Promise<void> {
    const worker = this.#worker
    if (!worker) return
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    await this.#call({ id: 0, op: 'close' }).catch(() => undefined)
    await exited
  }

  #call(request: Request, transfer: ArrayBuffer[] = []): Promise<Reply> {
    const worker = this.#worker ?? this.#spawn()
    request.id = this.#nextId++
    return new Promise((resolve) => {
      this.#pending.set(request.id, resolve)
      worker.postMessage(request, transfer)
    })
  }

  /**
   * Started on first use (the consumer pings it when it creates the sink) and again after the thread died. It
   * opens the store itself, so an events.db that cannot be opened shows up as a failed write the sink writer
   * retries, not as a crash of the caller.
   */
  #spawn(): Worker {
    const workerData: SinkWorkerData = { spec: this.#o.spec, scheduling: this.#o.scheduling ?? null }
    const worker = new Worker(this.#o.entry, { workerData, resourceLimits: this.#o.resourceLimits })
    this.#o.onThreadStart?.(worker.threadId)
    worker.on('message', (reply: Reply) => {
      const resolve = this.#pending.get(reply.id)
      this.#pending.delete(reply.id)
      resolve?.(reply)
    })
    let failure = 'the event store thread stopped'
    worker.on('error', (error) => (failure = `the event store thread failed: ${error.message}`))
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = null
      // Whatever it was doing is unconfirmed; the caller retries (inserts are idempotent by uuid).
      for (const [id, resolve] of this.#pending) resolve({ id, ok: false, message: failure, permanent: false })
      this.#pending.clear()
    })
    this.#worker = worker
    return worker
  }
}

/** The thread's side: one sink; each reply carries its request's id. */
export function serveSink(port: MessagePort, spec: SinkSpec): void {
  const sink = spec.kind === 'sqlite' ? new SqliteEventSink(spec.file) : new ClickHouseEventSink(spec.options, spec.features)
  port.on('message', async (request: Request) => {
    if (request.op === 'close') {
      await sink.close()
      port.postMessage({ id: request.id, ok: true } satisfies Reply)
      port.close()
      return
    }
    const packed = request.op === 'write' ? request.packed : undefined
    const buffers = request.op === 'append' ? request.buffers : undefined
    let reply: Reply = { id: request.id, ok: true, packed, buffers }
    try {
      if (request.op === 'write') await sink.writePacked(Buffer.from(request.packed, 0, request.length))
      else if (request.op === 'delete') await sink.deleteEvents(request.teamId, request.distinctIds)
      else if (request.op === 'append' || request.op === 'commit') {
        if (!(sink instanceof ClickHouseEventSink)) throw new SinkError('only ClickHouse inserts span several batches', true)
        if (request.op === 'append') await sink.appendPacked(viewsOf(request.buffers, request.ranges), request.rows)
        else await sink.commit(request.rows)
      } else if (!(await sink.ping())) reply = { id: request.id, ok: false, message: `the ${spec.kind} event store does not answer`, permanent: false }
    } catch (error) {
      const permanent = error instanceof SinkError ? error.permanent : false
      reply = { id: request.id, ok: false, message: (error as Error).message, permanent, packed, buffers }
    }
    port.postMessage(reply, packed ? [packed] : (buffers ?? []))
  })
}

/** Part i of an append: `ranges[2i + 1]` bytes from `ranges[2i]` of `buffers[i]`. */
function viewsOf(buffers: readonly ArrayBuffer[], ranges: readonly number[]): Buffer[] {
  return buffers.map((buffer, i) => Buffer.from(buffer, ranges[2 * i], ranges[2 * i + 1]))
}
