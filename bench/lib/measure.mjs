// One measured load: warm-up, then the window in which the load generator, the CPU sampler, the metrics
// scrape, the ingestion lag sampler and the CPU speed probe all measure the same seconds; and the repeats of a
// run that other processes disturbed.
import { elu, scrape, startLagSampler } from './e2e.mjs'
import { autocannonOptions, runAutocannon, runWrk } from './load.mjs'
import { elapsed, fmt, say, status } from './progress.mjs'
import { runSteady } from './steady.mjs'
import { round, startSampler, waitForQuiet } from './system.mjs'

/**
 * `pids`: `metrics` (scrape /metrics around the window), `lag` (sample the ingestion lag), `sample` (the
 * processes the CPU sampler watches). `afterWarmup` runs as the window opens; `speed` is the run's CPU probe.
 */
export async function measure({ url, requests, loadgen, load, pids, label, speed, afterWarmup = async () => {} }) {
  const tick = (phase, total) => (seconds, count) =>
    status(`${label} ${phase} ${seconds}/${total} s${count !== null ? ` ${fmt(count)} req/s` : ''}  [${elapsed()}]`)
  // wrk and the steady generator run as processes of their own; autocannon runs in this one
  let loadgenPid = null
  const onSpawn = (pid) => (loadgenPid = pid)
  const run = async (durationS, phase) => {
    const l = { ...load, durationS }
    if (loadgen === 'wrk') return runWrk(url, requests, l, { onSpawn, onTick: tick(phase, durationS) })
    return runAutocannon(autocannonOptions(url, requests, l), tick(phase, durationS))
  }
  // What the load is measured against: the store counted, the metrics scraped, the CPU sampler started.
  const open = async () => {
    await afterWarmup()
    const before = pids.metrics ? await scrape(url) : null
    const lag = pids.lag ? startLagSampler(url) : null
    return { before, from: Date.now(), lag, sampler: startSampler({ ...pids.sample, loadgen: loadgen === 'autocannon' ? 'self' : () => loadgenPid }) }
  }
  let opening = null
  let result
  if (loadgen === 'steady') {
    // One process warms up and measures (steady-client.mjs says why); the window opens when it switches.
    const onTick = (phase, seconds, count) => tick(phase, phase === 'load' ? load.durationS : load.warmupS)(seconds, count)
    const options = { connections: load.connections, rate: load.overallRate, warmupS: load.warmupS, durationS: load.durationS }
    result = await runSteady(url, requests, options, { onSpawn, onTick, onMeasure: () => (opening = open()) })
  } else {
    if (load.warmupS > 0) await run(load.warmupS, 'warm-up')
    opening = open()
    await opening // opened before the load starts
    result = await run(load.durationS, 'load')
  }
  const { before, from, lag, sampler } = await opening
  const usage = sampler.stop()
  const ingestionLagS = await lag?.stop()
  const cpuSpeed = speed.between(from, Date.now())
  const after = before ? await scrape(url) : null
  const memory = after
    ? { mainHeapMB: round(after.m.nodejs_heap_size_total_bytes / 2 ** 20), mainExternalMB: round(after.m.nodejs_external_memory_bytes / 2 ** 20) }
    : null
  return { result, usage, elu: before && after ? elu(before, after) : null, memory, cpuSpeed, ingestionLagS }
}

/**
 * Runs `once(attempt, quiet)` after waiting for a quiet machine, again while other processes used more than
 * `suite.disturbed` cores during it (up to `suite.retries` times), and keeps the least disturbed run.
 */
export async function leastDisturbed(suite, label, once) {
  let entry = null
  for (let attempt = 1; attempt <= suite.retries + 1; attempt++) {
    const quiet = await waitForQuiet(suite.quiet)
    const run = await once(attempt, quiet)
    if (entry === null || run.otherCores < entry.otherCores) entry = run
    entry.attempts = attempt
    if (run.otherCores <= suite.disturbed) break
    say(`  ${label}: disturbed (other processes used ${fmt(run.otherCores, 2)} cores)${attempt <= suite.retries ? ', measuring again' : ''}`)
  }
  return entry
}
