/** Entry of the ingest consumer thread (a plain worker_threads Worker, not a pool task). */
import { parentPort, workerData } from 'node:worker_threads'
import { runConsumerThread, type ConsumerWorkerData } from '../src/ingestion/consumer/thread.js'

if (!parentPort) throw new Error('ingest-consumer must run as a worker thread')
await runConsumerThread(parentPort, workerData as ConsumerWorkerData)
