// The steady-rate generator (steady-client.mjs) in a process of its own, so that the runner's own work
// (samplers, autocannon's leftovers, the report) and its garbage collections stay out of the measurement.
//
// Its flags are part of the method. With V8's defaults the client shares a heap with the runner, whose
// mark-compacts came every ≈450 ms in some runs; their 4 helper threads then took the core the server's main
// thread needed (perf sched: 10–20 ms of helper CPU in 20 ms windows) and the runner's own pauses of 4–8 ms
// delayed reading the answers: p99 at half of max read 5.4–105 ms on one build (median 12.7 over eleven
// runs). In a process of its own with one GC thread (its collections never run beside it on the other core)
// and 32 MB semi-spaces (a scavenge every few seconds at these rates): 2.2–28 ms (median 5.9 over nine).
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'

const CLIENT_NODE_ARGS = ['--single-threaded-gc', '--max-semi-space-size=32']

/**
 * Sends `rate` requests/s for `warmupS` + `durationS` over up to `connections` connections and measures the
 * last `durationS` (steady-client.mjs says why the warm-up is in the same process); answers the same result
 * shape as runAutocannon. `onSpawn(pid)` gets the client's process (its CPU is the load generator's),
 * `onMeasure()` is called when the warm-up ends, `onTick(phase, second, answers)` every second.
 */
export async function runSteady(url, requests, { connections, rate, warmupS = 0, durationS }, { onSpawn = () => {}, onTick = () => {}, onMeasure = () => {} } = {}) {
  const wire = requests.map((r) => (Buffer.isBuffer(r.body) ? { ...r, body: r.body.toString('base64'), bodyBase64: true } : r))
  const proc = spawn(process.execPath, [...CLIENT_NODE_ARGS, join(import.meta.dirname, 'steady-client.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] })
  onSpawn(proc.pid)
  proc.stdin.end(JSON.stringify({ url, requests: wire, connections, rate, warmupS, durationS }))
  let result = null
  createInterface({ input: proc.stdout }).on('line', (line) => {
    const [kind, phase, second, answers] = line.split(' ')
    if (kind === 'tick') onTick(phase, Number(second), Number(answers))
    else if (kind === 'measure') onMeasure()
    else if (kind === 'result') result = JSON.parse(line.slice('result '.length))
  })
  const code = await new Promise((resolve) => proc.once('close', resolve))
  if (result === null) throw new Error(`the steady load generator exited (${code}) without a result`)
  return result
}
