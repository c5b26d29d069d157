/** metrics.db on a thread of its own, as logs.db is (src/logs/thread.ts explains why). */
import type { MessagePort } from 'node:worker_threads'
import type { RegexEngine } from '../storage/events/index.js'
import { ReadThread, serveReads } from '../storage/read-thread.js'
import { SqliteMetricStore } from './sqlite.js'
import type { MetricStore } from './types.js'

const ENTRY = new URL('../../workers/metrics-store.js', import.meta.url)

export class ThreadedMetricStore implements MetricStore {
  readonly #thread: ReadThread

  constructor(options: { file: string; onThreadStart?: (threadId: number) => void }) {
    this.#thread = new ReadThread({ entry: ENTRY, workerData: options.file, name: 'the metrics thread', onThreadStart: options.onThreadStart })
  }

  insert: MetricStore['insert'] = (...args) => this.#thread.call('insert', args)
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

/** The thread's side; `regex` runs the regex filters (the entry hands in the flags' safe engine). */
export function serveMetrics(port: MessagePort, file: string, regex: RegexEngine): void {
  serveReads(port, () => new SqliteMetricStore(file, regex))
}
