/** Entry of the event store's insert thread, started by the consumer thread (src/storage/events/sink-thread.ts). */
import { parentPort, workerData } from 'node:worker_threads'
import { serveSink, type SinkSpec } from '../src/storage/events/sink-thread.js'

if (!parentPort) throw new Error('event-sink must run as a worker thread')
serveSink(parentPort, workerData as SinkSpec)
