/** The metrics store on a thread of its own, metrics.db or ClickHouse, as the logs store is (src/logs/thread.ts explains why). */
import type { MessagePort } from 'node:worker_threads'
import type { RegexEngine } from '../storage/events/index.js'
import { otlpIngest, type OtlpIngest, type OtlpStoreTarget } from '../storage/otlp-ingest.js'
import { ReadThread, serveReads } from '../storage/read-thread.js'
import { ClickHouseMetricStore } from './clickhouse.js'
import { decodeMetricsRequest } from './otlp.js'
import { metricRows } from './records.js'
import { SqliteMetricStore } from './sqlite.js'
import type { MetricService, MetricStore } from './types.js'

const ENTRY = new URL('../../workers/metrics-store.js', import.meta.url)

export class ThreadedMetricStore implements MetricService {
  readonly #thread: ReadThread

  constructor(options: { target: OtlpStoreTarget; onThreadStart?: (threadId: number) => void }) {
    this.#thread = new ReadThread({ entry: ENTRY, workerData: options.target, name: 'the metrics thread', onThreadStart: options.onThreadStart })
  }

  ingest: OtlpIngest['ingest'] = (...args) => this.#thread.call('ingest', args)
  samples: MetricStore['samples'] = (...args) => this.#thread.call('samples', args)
  names: MetricStore['names'] = (...args) => this.#thread.call('names', args)
  nameSparklines: MetricStore['nameSparklines'] = (...args) => this.#thread.call('nameSparklines', args)
  attributeKeys: MetricStore['attributeKeys'] = (...args) => this.#thread.call('attributeKeys', args)
  attributeValues: MetricStore['attributeValues'] = (...args) => this.#thread.call('attributeValues', args)
  hasMetrics: MetricStore['hasMetrics'] = (...args) => this.#thread.call('hasMetrics', args)
  overview: MetricStore['overview'] = (...args) => this.#thread.call('overview', args)

  close(): Promise<void> {
    return this.#thread.close()
  }
}

/** The thread's side; `regex` runs metrics.db's regex filters (the entry hands in the flags' safe engine). */
export function serveMetrics(port: MessagePort, target: OtlpStoreTarget, regex: RegexEngine): void {
  serveReads(port, () => {
    const store: MetricStore = target.clickhouse ? new ClickHouseMetricStore(target.clickhouse) : new SqliteMetricStore(target.file, regex)
    return Object.assign(store, { ingest: otlpIngest('metrics', (body, ctx) => metricRows(decodeMetricsRequest(body), ctx), (rows) => store.insert(rows)) })
  })
}
