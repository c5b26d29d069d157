/** Entry of the logs store's thread (logs.db or ClickHouse), started by the main thread (src/logs/thread.ts). */
import { parentPort, workerData } from 'node:worker_threads'
import { compileSearchRegex } from '../src/flags/index.js'
import { serveLogs } from '../src/logs/thread.js'
import type { OtlpStoreTarget } from '../src/storage/otlp-ingest.js'

if (!parentPort) throw new Error('logs-store must run as a worker thread')
serveLogs(parentPort, workerData as OtlpStoreTarget, compileSearchRegex)
