/** Entry of the embedded logs store's thread, started by the main thread (src/logs/thread.ts). */
import { parentPort, workerData } from 'node:worker_threads'
import { compileRegex } from '../src/flags/index.js'
import { serveLogs, type LogStoreTarget } from '../src/logs/thread.js'

if (!parentPort) throw new Error('logs-store must run as a worker thread')
serveLogs(parentPort, workerData as LogStoreTarget, compileRegex)
