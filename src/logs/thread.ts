/**
 * The logs store on a thread of its own (src/storage/read-thread.ts), whichever store it is: logs.db
 * (better-sqlite3 is synchronous: a FULL-sync commit or a query over a day of logs would hold the event loop) or
 * ClickHouse (the rows' JSON and the answers' parsing would). /i/v1/logs hands its bodies to the thread
 * undecoded (src/storage/otlp-ingest.ts). Calls queue on the thread in order; a thread that died fails the
 * calls it held (an ingest answers 503, and the exporter sends again).
 */
import type { MessagePort } from 'node:worker_threads'
import type { RegexEngine } from '../storage/events/index.js'
import { otlpIngest, type OtlpIngest, type OtlpStoreTarget } from '../storage/otlp-ingest.js'
import { ReadThread, serveReads } from '../storage/read-thread.js'
import { ClickHouseLogStore } from './clickhouse.js'
import { decodeLogsRequest } from './otlp.js'
import { logRows } from './records.js'
import { SqliteLogStore } from './sqlite.js'
import type { LogService, LogStore } from './types.js'

const ENTRY = new URL('../../workers/logs-store.js', import.meta.url)

export class ThreadedLogStore implements LogService {
  readonly #thread: ReadThread

  constructor(options: { target: OtlpStoreTarget; onThreadStart?: (threadId: number) => void }) {
    this.#thread = new ReadThread({ entry: ENTRY, workerData: options.target, name: 'the logs thread', onThreadStart: options.onThreadStart })
  }

  ingest: OtlpIngest['ingest'] = (...args) => this.#thread.call('ingest', args)
  query: LogStore['query'] = (...args) => this.#thread.call('query', args)
  checkpoint: LogStore['checkpoint'] = (...args) => this.#thread.call('checkpoint', args)
  attributes: LogStore['attributes'] = (...args) => this.#thread.call('attributes', args)
  values: LogStore['values'] = (...args) => this.#thread.call('values', args)
  sparkline: LogStore['sparkline'] = (...args) => this.#thread.call('sparkline', args)

  close(): Promise<void> {
    return this.#thread.close()
  }
}

/** The thread's side; `regex` runs logs.db's regex filters (the entry hands in the flags' safe engine). */
export function serveLogs(port: MessagePort, target: OtlpStoreTarget, regex: RegexEngine): void {
  serveReads(port, () => {
    const store: LogStore = target.clickhouse ? new ClickHouseLogStore(target.clickhouse) : new SqliteLogStore(target.file, regex)
    return Object.assign(store, { ingest: otlpIngest('logs', (body, ctx) => logRows(decodeLogsRequest(body), ctx), (rows) => store.insert(rows)) })
  })
}
