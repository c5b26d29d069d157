/**
 * Run by catch-up.test.ts in a process that may not raise threads (no CAP_SYS_NICE): the real priority watch
 * over a lowered thread, with a consumer whose first events wait, then one far behind. Its log lines, and when
 * the backlog appeared, go to stdout as JSON lines timed from the start; it ends once the watch has warned.
 */
import pino from 'pino'
import { PriorityWatch } from '../../../src/ingestion/consumer/priority-watch.js'
import { BEHIND_BYTES } from '../../../src/ingestion/consumer/starvation.js'
import { idleThread } from '../../helpers/threads.js'

const WARMING_MS = 1000
const started = performance.now()
const say = (fields: object) => process.stdout.write(`${JSON.stringify({ at: performance.now() - started, ...fields })}\n`)

const { worker, tid } = await idleThread()
let backlogBytes = 0
let warned = (): void => {}
const warning = new Promise<void>((resolve) => (warned = resolve))
const write = (line: string) => {
  say({ line })
  if (line.includes('may not raise them')) warned()
}
const logger = pino({ level: 'info' }, { write })
const watch = new PriorityWatch('idle', 19, logger, () => ({ backlogBytes, stored: 0, waiting: true }))
await new Promise((resolve) => setTimeout(resolve, WARMING_MS))
say({ behind: true })
backlogBytes = BEHIND_BYTES
// Well past the 5 s a guard left raised by the refused warm-up would take to look again.
let timer: NodeJS.Timeout | undefined
await Promise.race([warning, new Promise((resolve) => (timer = setTimeout(resolve, 6000)))])
clearTimeout(timer)
watch.stop()
await worker.terminate()
