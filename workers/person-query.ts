/** Entry of the persons.db read thread, started by the main thread (src/persons/scans.ts). */
import { parentPort, workerData } from 'node:worker_threads'
import { compileSearchRegex } from '../src/flags/index.js'
import { servePersonScans } from '../src/persons/scans.js'

if (!parentPort) throw new Error('person-query must run as a worker thread')
servePersonScans(parentPort, workerData as string, compileSearchRegex)
