/** Entry of the embedded event store's read thread, started by the main thread (src/storage/events/query-thread.ts). */
import { parentPort, workerData } from 'node:worker_threads'
import { compileSearchRegex } from '../src/flags/index.js'
import { serveQueries } from '../src/storage/events/query-thread.js'

if (!parentPort) throw new Error('event-query must run as a worker thread')
serveQueries(parentPort, workerData as string, compileSearchRegex)
