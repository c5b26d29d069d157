/** Entry of the embedded metrics store's thread, started by the main thread (src/metrics/thread.ts). */
import { parentPort, workerData } from 'node:worker_threads'
import { compileRegex } from '../src/flags/index.js'
import { serveMetrics, type MetricStoreTarget } from '../src/metrics/thread.js'

if (!parentPort) throw new Error('metrics-store must run as a worker thread')
serveMetrics(parentPort, workerData as MetricStoreTarget, compileRegex)
