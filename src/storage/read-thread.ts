/**
 * Reads of a SQLite file on a thread of their own. better-sqlite3 is synchronous, so on the main thread a read
 * that scans holds the event loop, and every /capture/ and /decide waits behind it (docs/performance.md, "Event
 * reads off the main thread"). A `ReadThread` posts each call to one worker thread, where the calls queue in
 * order, and resolves with the plain result (a structured clone) or rejects with the error the read threw: an
 * AppError as the same AppError, anything else as an Error with its message.
 *
 * The thread is started at the first call and again at the next call after it died; it is referenced only
 * while calls are outstanding, so an idle one does not keep the process alive. `serveReads` is the thread's
 * side: the entry module hands it what to open, opened at the first call (so a file that cannot be opened is
 * that call's error, and a later call tries again).
 */
import { Worker, type MessagePort } from 'node:worker_threads'
import { AppError, type AppErrorOptions, type CatalogueCode } from '../common/errors.js'
import { lowerThreadPriority } from '../common/thread-priority.js'

type Request = { id: number; method: string; args: unknown[] }
type Failure = { message: string; app?: { code: CatalogueCode; options: AppErrorOptions } }
type Reply = { id: number; ok: true; value: unknown } | ({ id: number; ok: false } & Failure)

/** A call's promise side, `ReadThread`-internal. */
type Pending = { worker: Worker; resolve: (value: unknown) => void; reject: (error: Error) => void }

export interface ReadThreadOptions {
  /** The thread's entry module (it calls `serveReads`). */
  entry: URL
  /** Handed to the entry as `workerData`. */
  workerData: unknown
  /** Names the thread in the error of the calls it left unanswered by stopping ('the event query thread'). */
  name: string
  /** Told the thread's id each time one starts (for logs). */
  onThreadStart?: (threadId: number) => void
  /**
   * The thread's niceness (Linux; 0 or absent = unchanged). A scan holds its core for hundreds of
   * milliseconds; below the request thread, it gives way each time that thread wakes (docs/performance.md,
   * "Read threads below the request thread").
   */
  nice?: number
}

/** The request that ends a thread once the calls before it are answered. */
const CLOSE = '\0close'
/** The request that lowers the thread's priority, sent first: only the thread itself can name its Linux thread. */
const NICE = '\0nice'

export class ReadThread {
  readonly #o: ReadThreadOptions
  /** Calls sent and not answered, with the thread each went to. */
  readonly #pending = new Map<number, Pending>()
  #worker: Worker | null = null
  /** Calls the current thread has not answered: it is referenced only while there are some. */
  #outstanding = 0
  #nextId = 1

  constructor(options: ReadThreadOptions) {
    this.#o = options
  }

  /** The result of `method(...args)` on the thread's opened object. */
  call<T>(method: string, args: unknown[]): Promise<T> {
    const worker = this.#worker ?? this.#spawn()
    const id = this.#nextId++
    if (this.#outstanding++ === 0) worker.ref()
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { worker, resolve: resolve as (value: unknown) => void, reject })
      worker.postMessage({ id, method, args } satisfies Request)
    })
  }

  /** Ends the thread once the calls asked before are answered; a later call starts another. */
  async close(): Promise<void> {
    const worker = this.#worker
    if (!worker) return
    this.#worker = null
    this.#outstanding = 0
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.ref()
    worker.postMessage({ id: 0, method: CLOSE, args: [] } satisfies Request)
    await exited
  }

  #spawn(): Worker {
    const worker = new Worker(this.#o.entry, { workerData: this.#o.workerData })
    this.#o.onThreadStart?.(worker.threadId)
    if (this.#o.nice) worker.postMessage({ id: 0, method: NICE, args: [this.#o.nice] } satisfies Request)
    worker.on('message', (reply: Reply) => {
      const pending = this.#pending.get(reply.id)
      this.#pending.delete(reply.id)
      // A closing thread is no longer current: it stays referenced until it has exited.
      if (this.#worker === worker && --this.#outstanding === 0) worker.unref()
      if (!pending) return
      if (reply.ok) pending.resolve(reply.value)
      else pending.reject(reply.app ? new AppError(reply.app.code, reply.app.options) : new Error(reply.message))
    })
    let failure = `${this.#o.name} stopped`
    worker.on('error', (error) => (failure = `${this.#o.name} failed: ${error.message}`))
    worker.on('exit', () => {
      if (this.#worker === worker) {
        this.#worker = null
        this.#outstanding = 0
      }
      for (const [id, pending] of this.#pending) {
        if (pending.worker !== worker) continue
        this.#pending.delete(id)
        pending.reject(new Error(failure))
      }
    })
    this.#worker = worker
    return worker
  }
}

/** What a read thread serves: its reads by name, and how to let go of what it opened. */
export interface Readable {
  close(): unknown
}

function failure(error: unknown): Failure {
  if (error instanceof AppError) {
    const options: AppErrorOptions = { detail: error.detail, attr: error.attr ?? undefined, retryAfter: error.retryAfter, extra: error.extra }
    return { message: error.message, app: { code: error.code as CatalogueCode, options } }
  }
  return { message: error instanceof Error ? error.message : String(error) }
}

/** The thread's side: `open()` at the first call (and after a call that failed to open it), calls answered in order. */
export function serveReads(port: MessagePort, open: () => Readable): void {
  let target: Readable | null = null
  port.on('message', async (request: Request) => {
    if (request.method === CLOSE) {
      await target?.close()
      port.close()
      return
    }
    if (request.method === NICE) {
      lowerThreadPriority('other', request.args[0] as number)
      return
    }
    let reply: Reply
    try {
      target ??= open()
      const read = (target as unknown as Record<string, unknown>)[request.method]
      if (typeof read !== 'function' || request.method === 'close') throw new Error(`no read named ${request.method}`)
      reply = { id: request.id, ok: true, value: await (read as (...args: unknown[]) => unknown).apply(target, request.args) }
    } catch (error) {
      reply = { id: request.id, ok: false, ...failure(error) }
    }
    port.postMessage(reply)
  })
}
