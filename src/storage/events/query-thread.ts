/**
 * The embedded store's reads on a thread of their own. better-sqlite3 is synchronous, so on the main thread a
 * read that scans (a property filter few events match, events/values, a dashboard's 30 days, an experiment's
 * exposures) held the event loop, and every /capture/ and /decide waited behind it: with 300,000 events, a
 * 0.42 s filter scan asked back to back took /capture/ from 7.9 k to 54 req/s (p50 1 → 460 ms,
 * docs/performance.md). Here the reads queue on one thread; the main thread posts each call and gets its plain
 * result back. ClickHouse's reads are asynchronous already and stay where they are.
 *
 * `ThreadedEventStore` is the caller's side, an ordinary EventStore; `serveQueries` runs in the thread
 * (workers/event-query.ts is its entry). The thread opens the store at its first read, so a missing events.db is
 * that read's error, and it is started again at the next read after it died.
 */
import { Worker, type MessagePort } from 'node:worker_threads'
import type { RegexEngine } from './sqlite-actions.js'
import { SqliteEventStore } from './sqlite.js'
import type { EventStore } from './types.js'

type Method = Exclude<keyof EventStore, 'close'>
type Request = { id: number; method: Method | 'close'; args: unknown[] }
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string }

const ENTRY = new URL('../../../workers/event-query.js', import.meta.url)

export interface QueryThreadOptions {
  file: string
  /** The thread's entry module; the compiled workers/event-query.js beside this file's by default. */
  entry?: URL
  /** Told the thread's id each time one starts (for logs). */
  onThreadStart?: (threadId: number) => void
}

export class ThreadedEventStore implements EventStore {
  readonly #o: QueryThreadOptions
  /** Reads sent and not answered, with the thread each went to. */
  readonly #pending = new Map<number, { worker: Worker; settle: (reply: Reply) => void }>()
  #worker: Worker | null = null
  /** Reads the current thread has not answered: it is referenced only while there are some. */
  #outstanding = 0
  #nextId = 1

  constructor(options: QueryThreadOptions) {
    this.#o = options
  }

  list: EventStore['list'] = (...args) => this.#call('list', args)
  get: EventStore['get'] = (...args) => this.#call('get', args)
  propertyValues: EventStore['propertyValues'] = (...args) => this.#call('propertyValues', args)
  actors: EventStore['actors'] = (...args) => this.#call('actors', args)
  count: EventStore['count'] = (...args) => this.#call('count', args)
  breakdown: EventStore['breakdown'] = (...args) => this.#call('breakdown', args)
  dailyBreakdown: EventStore['dailyBreakdown'] = (...args) => this.#call('dailyBreakdown', args)
  funnel: EventStore['funnel'] = (...args) => this.#call('funnel', args)
  distinctIds: EventStore['distinctIds'] = (...args) => this.#call('distinctIds', args)

  /** Ends the thread once the reads asked before are answered; a later read starts another. */
  async close(): Promise<void> {
    const worker = this.#worker
    if (!worker) return
    this.#worker = null
    this.#outstanding = 0
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.ref()
    worker.postMessage({ id: 0, method: 'close', args: [] } satisfies Request)
    await exited
  }

  async #call<T>(method: Method, args: unknown[]): Promise<T> {
    return (await this.#send(this.#worker ?? this.#spawn(), method, args)) as T
  }

  #send(worker: Worker, method: Method, args: unknown[]): Promise<unknown> {
    const id = this.#nextId++
    // An idle thread does not keep the process alive.
    if (this.#outstanding++ === 0) worker.ref()
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { worker, settle: (reply) => (reply.ok ? resolve(reply.value) : reject(new Error(reply.message))) })
      worker.postMessage({ id, method, args } satisfies Request)
    })
  }

  #spawn(): Worker {
    const worker = new Worker(this.#o.entry ?? ENTRY, { workerData: this.#o.file })
    this.#o.onThreadStart?.(worker.threadId)
    worker.on('message', (reply: Reply) => {
      const pending = this.#pending.get(reply.id)
      this.#pending.delete(reply.id)
      // A closing thread is no longer current: it stays referenced until it has exited.
      if (this.#worker === worker && --this.#outstanding === 0) worker.unref()
      pending?.settle(reply)
    })
    let failure = 'the event query thread stopped'
    worker.on('error', (error) => (failure = `the event query thread failed: ${error.message}`))
    worker.on('exit', () => {
      if (this.#worker === worker) {
        this.#worker = null
        this.#outstanding = 0
      }
      for (const [id, pending] of this.#pending) {
        if (pending.worker !== worker) continue
        this.#pending.delete(id)
        pending.settle({ id, ok: false, message: failure })
      }
    })
    this.#worker = worker
    this.#outstanding = 0
    return worker
  }
}

/**
 * The thread's side: one read-only store, calls answered in order, each reply carrying its request's id.
 * `regex` runs action steps' regexes (sqlite-actions.ts); the entry hands in the flags' safe engine.
 */
export function serveQueries(port: MessagePort, file: string, regex: RegexEngine): void {
  let store: SqliteEventStore | null = null
  port.on('message', async (request: Request) => {
    if (request.method === 'close') {
      await store?.close()
      port.close()
      return
    }
    let reply: Reply
    try {
      store ??= new SqliteEventStore(file, regex)
      const read = store[request.method] as (...args: unknown[]) => Promise<unknown>
      reply = { id: request.id, ok: true, value: await read.apply(store, request.args) }
    } catch (error) {
      reply = { id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) }
    }
    port.postMessage(reply)
  })
}
