/** Entry of the spool's zero-fill thread (src/ingestion/spool/filler.ts). */
import { parentPort } from 'node:worker_threads'
import { serveFills } from '../src/ingestion/spool/filler.js'

if (!parentPort) throw new Error('spool-fill must run as a worker thread')
serveFills(parentPort)
