/** Entry of the event store's insert thread, started by the consumer thread (src/storage/events/sqlite-thread.ts). */
import { parentPort, workerData } from 'node:worker_threads'
import { serveSqliteSink } from '../src/storage/events/sqlite-thread.js'

if (!parentPort) throw new Error('sqlite-sink must run as a worker thread')
serveSqliteSink(parentPort, (workerData as { file: string }).file)
