/**
 * The embedded store's reads on a thread of their own (src/storage/read-thread.ts). better-sqlite3 is
 * synchronous, so on the main thread a read that scans (a property filter few events match, events/values, a
 * dashboard's 30 days, an experiment's exposures) held the event loop, and every /capture/ and /decide waited
 * behind it: with 300,000 events, a 0.42 s filter scan asked back to back took /capture/ from 7.9 k to 54 req/s
 * (p50 1 → 460 ms, docs/performance.md). ClickHouse's reads are asynchronous already and stay where they are.
 *
 * `ThreadedEventStore` is the caller's side, an ordinary EventStore; `serveQueries` runs in the thread
 * (workers/event-query.ts is its entry). The thread opens the store at its first read, so a missing events.db is
 * that read's error, and it is started again at the next read after it died.
 */
import type { MessagePort } from 'node:worker_threads'
import { ReadThread, serveReads } from '../read-thread.js'
import type { RegexEngine } from './sqlite-actions.js'
import { SqliteEventStore } from './sqlite.js'
import type { EventStore } from './types.js'

type Method = Exclude<keyof EventStore, 'close'>

const ENTRY = new URL('../../../workers/event-query.js', import.meta.url)

export interface QueryThreadOptions {
  file: string
  /** The thread's entry module; the compiled workers/event-query.js beside this file's by default. */
  entry?: URL
  /** Told the thread's id each time one starts (for logs). */
  onThreadStart?: (threadId: number) => void
  /** The thread's niceness (ReadThreadOptions.nice). */
  nice?: number
}

export class ThreadedEventStore implements EventStore {
  readonly #thread: ReadThread

  constructor(options: QueryThreadOptions) {
    this.#thread = new ReadThread({ entry: options.entry ?? ENTRY, workerData: options.file, name: 'the event query thread', onThreadStart: options.onThreadStart, nice: options.nice })
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
  distinctIdTallies: EventStore['distinctIdTallies'] = (...args) => this.#call('distinctIdTallies', args)
  distinctIdTimes: EventStore['distinctIdTimes'] = (...args) => this.#call('distinctIdTimes', args)
  experimentVariants: EventStore['experimentVariants'] = (...args) => this.#call('experimentVariants', args)
  experimentExposures: EventStore['experimentExposures'] = (...args) => this.#call('experimentExposures', args)
  hogqlQuery: EventStore['hogqlQuery'] = (...args) => this.#call('hogqlQuery', args)

  /** Ends the thread once the reads asked before are answered; a later read starts another. */
  close(): Promise<void> {
    return this.#thread.close()
  }

  #call<T>(method: Method, args: unknown[]): Promise<T> {
    return this.#thread.call<T>(method, args)
  }
}

/**
 * The thread's side: one read-only store, calls answered in order. `regex` runs action steps' regexes
 * (sqlite-actions.ts); the entry hands in the flags' safe engine.
 */
export function serveQueries(port: MessagePort, file: string, regex: RegexEngine): void {
  serveReads(port, () => new SqliteEventStore(file, regex))
}
