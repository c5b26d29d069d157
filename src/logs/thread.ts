/**
 * logs.db on a thread of its own (src/storage/read-thread.ts): better-sqlite3 is synchronous, and a commit with
 * FULL sync or a query over a day of logs would hold the event loop. Inserts and reads queue on the thread in
 * order; a thread that died fails the calls it held (the insert's request answers 503, and the SDK sends again).
 */
import type { MessagePort } from 'node:worker_threads'
import type { RegexEngine } from '../storage/events/index.js'
import { ReadThread, serveReads } from '../storage/read-thread.js'
import { SqliteLogStore } from './sqlite.js'
import type { LogStore } from './types.js'

const ENTRY = new URL('../../workers/logs-store.js', import.meta.url)

export class ThreadedLogStore implements LogStore {
  readonly #thread: ReadThread

  constructor(options: { file: string; entry?: URL; onThreadStart?: (threadId: number) => void }) {
    this.#thread = new ReadThread({ entry: options.entry ?? ENTRY, workerData: options.file, name: 'the logs thread', onThreadStart: options.onThreadStart })
  }

  insert: LogStore['insert'] = (...args) => this.#thread.call('insert', args)
  query: LogStore['query'] = (...args) => this.#thread.call('query', args)
  checkpoint: LogStore['checkpoint'] = (...args) => this.#thread.call('checkpoint', args)
  attributes: LogStore['attributes'] = (...args) => this.#thread.call('attributes', args)
  values: LogStore['values'] = (...args) => this.#thread.call('values', args)
  sparkline: LogStore['sparkline'] = (...args) => this.#thread.call('sparkline', args)

  close(): Promise<void> {
    return this.#thread.close()
  }
}

/** The thread's side; `regex` runs the regex filters (the entry hands in the flags' safe engine). */
export function serveLogs(port: MessagePort, file: string, regex: RegexEngine): void {
  serveReads(port, () => new SqliteLogStore(file, regex))
}
