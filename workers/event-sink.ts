/** Entry of the event store's insert thread, started by the consumer thread (src/storage/events/sink-thread.ts). */
import { parentPort, workerData } from 'node:worker_threads'
import { lowerThreadPriority } from '../src/common/thread-priority.js'
import { serveSink, type SinkWorkerData } from '../src/storage/events/sink-thread.js'

if (!parentPort) throw new Error('event-sink must run as a worker thread')
const { spec, scheduling } = workerData as SinkWorkerData
if (scheduling) lowerThreadPriority(scheduling.policy, scheduling.nice)
serveSink(parentPort, spec)
