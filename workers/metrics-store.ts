/** Entry of the metrics store's thread (metrics.db or ClickHouse), started by the main thread (src/metrics/thread.ts). */
import { parentPort, workerData } from 'node:worker_threads'
import { compileSearchRegex } from '../src/flags/index.js'
import { serveMetrics } from '../src/metrics/thread.js'
import type { OtlpStoreTarget } from '../src/storage/otlp-ingest.js'

if (!parentPort) throw new Error('metrics-store must run as a worker thread')
serveMetrics(parentPort, workerData as OtlpStoreTarget, compileSearchRegex)
