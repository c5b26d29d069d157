// The performance targets (2-core machine, ratios within one run), judged from a report.
import { round } from './system.mjs'

export function findBaseline(report, name, body, loadgen) {
  return report.baselines.find((b) => b.name === name && b.body === body && b.loadgen === loadgen) ?? null
}

const ok = (s) => s && s.status === 'ok'
const scenario = (report, name, sink, loadgen) => report.scenarios.find((s) => s.name === name && s.sink === sink && s.loadgen === loadgen)

/** Ratios of a scenario's req/s to the baselines with the same body and load generator (unrounded: judged as they are). */
export function ratios(report, s) {
  if (!ok(s) || s.load?.overallRate) return { uws: null, node: null }
  const uws = findBaseline(report, 'uws-raw', s.baseline, s.loadgen)
  const node = findBaseline(report, 'node-http', s.baseline, s.loadgen)
  return { uws: uws ? s.rps / uws.rps : null, node: node ? s.rps / node.rps : null }
}

/**
 * A ratio as the targets table shows it: two decimals, or three where two would round it onto the other side
 * of its threshold (0.4957 is shown 0.496, not 0.5 beside a "no").
 */
export function shown(value, threshold) {
  const two = round(value, 2)
  return two >= threshold === value >= threshold ? two : round(value, 3)
}

/** Probe readings this far apart (the slower over the faster) mark a ratio whose two runs saw different CPUs. */
export const SPEED_APART = 1.25

/**
 * How fast the vCPUs ran in the two windows a ratio compares (`cpuSpeed`, bench/lib/speed.mjs), as a note on
 * the target; flagged when they are SPEED_APART or more apart. Empty when either was not probed.
 */
export function speedNote(measured, against, name) {
  const a = measured?.nsPerUnit
  const b = against?.nsPerUnit
  if (!a || !b) return ''
  const apart = Math.max(a, b) / Math.min(a, b)
  const flag = apart >= SPEED_APART ? ` — ⚠ the CPUs ran ${round(apart, 2)}× slower in the ${a > b ? 'measured run' : name} than in the other` : ''
  return `; CPU probe ${a} vs ${b} ns${flag}`
}

/** The probe reading of the ceiling's best sample (the one its ratio is against). */
const bestCeilingSpeed = (ceiling) => ceiling.cpuSpeeds?.[ceiling.allRowsPerS.indexOf(ceiling.rowsPerS)] ?? null

export function evaluateTargets(report) {
  const out = []
  const limit = report.options.disturbedAboveCores ?? 0.25
  const add = (target, where, value, met, detail, runs = []) => {
    const disturbed = runs.filter((r) => r && r.otherCores > limit)
    const note = disturbed.length ? ` — ⚠ ${disturbed.length} of the runs disturbed (other processes > ${limit} cores)` : ''
    out.push({ target, where, value, met, detail: detail + note })
  }
  const notMeasured = (target, where, why) => add(target, where, null, null, why)

  // /capture/ with durable acknowledgement vs the baselines: judged with wrk (autocannon saturates first).
  for (const sink of report.options.sinks) {
    for (const loadgen of ['wrk', 'autocannon']) {
      const s = scenario(report, 'capture', sink, loadgen)
      if (!ok(s)) continue
      const r = ratios(report, s)
      const note = loadgen === 'autocannon' ? ' (autocannon-bound: indicative only)' : ''
      const uws = findBaseline(report, 'uws-raw', 'capture', loadgen)
      const node = findBaseline(report, 'node-http', 'capture', loadgen)
      // Where a durable answer can go here at all: the floor's ratio, and skylark's share of it.
      const floor = findBaseline(report, 'uws-durable', 'capture', loadgen)
      const floorNote = floor && uws ? `; durable floor ${floor.rps} req/s = ${round(floor.rps / uws.rps, 2)}× raw uWS, skylark ${round(s.rps / floor.rps, 2)}× the floor` : ''
      if (r.uws !== null) add('/capture/ ≥ 0.6× raw uWS', `${sink}, ${loadgen}`, shown(r.uws, 0.6), r.uws >= 0.6, `${s.rps} vs ${uws.rps} req/s${floorNote}${note}${speedNote(s.cpuSpeed, uws.cpuSpeed, 'baseline')}`, [s, uws])
      if (r.node !== null) add('/capture/ ≥ 1.0× node:http', `${sink}, ${loadgen}`, shown(r.node, 1), r.node >= 1.0, `${s.rps} vs ${node.rps} req/s${note}${speedNote(s.cpuSpeed, node.cpuSpeed, 'baseline')}`, [s, node])
    }
  }

  // /batch/ end to end vs the sink's own insert ceiling for the same rows.
  for (const sink of report.options.sinks) {
    const ceiling = report.ceilings.find((c) => c.sink === sink && c.status === 'ok')
    for (const name of ['batch-100', 'batch-1000']) {
      const s = scenario(report, name, sink, 'autocannon')
      if (!ok(s) || !s.e2e) continue
      if (!ceiling) {
        notMeasured('/batch/ end to end ≥ 0.5× sink ceiling', `${name}, ${sink}`, 'no ceiling measured')
        continue
      }
      const ratio = s.e2e.storedPerS / ceiling.rowsPerS
      add('/batch/ end to end ≥ 0.5× sink ceiling', `${name}, ${sink}`, shown(ratio, 0.5), ratio >= 0.5, `${s.e2e.storedPerS} stored/s vs ${ceiling.rowsPerS} rows/s${speedNote(s.cpuSpeed, bestCeilingSpeed(ceiling), 'ceiling')}`, [s])
    }
  }

  // /decide?v=3, 50 flags and a stored person: against raw uWS with the same load generator (wrk is the one
  // that does not saturate first; autocannon's ratio is indicative only, as for /capture/).
  for (const loadgen of ['wrk', 'autocannon']) {
    const d50 = scenario(report, 'decide-50', 'sqlite', loadgen)
    const uws = findBaseline(report, 'uws-raw', 'capture', loadgen)
    if (d50 && !ok(d50)) notMeasured('/decide 50 flags ≥ 0.25× raw uWS', `sqlite, ${loadgen}`, d50.status)
    if (!ok(d50) || !uws) continue
    const ratio = d50.rps / uws.rps
    const note = loadgen === 'autocannon' ? ' (autocannon-bound: indicative only)' : ''
    add('/decide 50 flags ≥ 0.25× raw uWS', `sqlite, ${loadgen}`, shown(ratio, 0.25), ratio >= 0.25, `${d50.rps} vs ${uws.rps} req/s${note}${speedNote(d50.cpuSpeed, uws.cpuSpeed, 'baseline')}`, [d50, uws])
  }
  const half = report.scenarios.find((s) => s.name === 'decide-50-half-rate' && s.sink === 'sqlite')
  if (ok(half)) {
    const floor = half.generatorFloorMs ? `; the generator alone against raw uWS at that rate: p50 ${half.generatorFloorMs.p50} ms, p99 ${half.generatorFloorMs.p99} ms` : ''
    // Half of a maximum measured on faster vCPUs is more than half of what the server can do at the speed of this run.
    const max = speedNote(half.cpuSpeed, scenario(report, 'decide-50', 'sqlite', 'autocannon')?.cpuSpeed, 'run whose maximum it halves')
    // A few stalls of tens of ms decide a p99 at this load: the hypervisor's share shows whether it took the vCPUs.
    const steal = half.stealCores === undefined ? '' : `; steal ${half.stealCores} cores`
    add('/decide 50 flags p99 < 10 ms at half max', `sqlite, ${half.load.overallRate} req/s offered (${half.loadgen})`, half.latencyMs.p99, half.latencyMs.p99 < 10, `achieved ${half.rps} req/s, p50 ${half.latencyMs.p50} ms, max ${half.latencyMs.max} ms${floor}${steal}${max}`, [half])
  } else if (half) notMeasured('/decide 50 flags p99 < 10 ms at half max', 'sqlite', half.status)
  const d350 = scenario(report, 'decide-350', 'sqlite', 'autocannon')
  if (ok(d350)) {
    const perCore = d350.serverCores ? round(d350.rps / d350.serverCores) : null
    add('/decide 350 flags (mix) > 6,900 req/s per core', 'sqlite, req/s ÷ server cores', perCore, perCore !== null && perCore > 6900, `${d350.rps} req/s on ${d350.serverCores} server cores`, [d350])
  } else if (d350) notMeasured('/decide 350 flags (mix) > 6,900 req/s per core', 'sqlite', d350.status)

  // Acknowledged → visible.
  for (const lag of report.lag.filter((l) => l.status === 'ok')) {
    const visible = [['events API', lag.eventsMs], ['persons API', lag.personsMs], ['/decide', lag.decideMs]].filter(([, stats]) => stats)
    for (const [api, stats] of visible) {
      const value = stats.p99
      const complete = lag.timeouts === 0 && lag.failures === 0
      add('ack → visible p99 < 1 s', `${lag.sink}, ${api}`, value, value !== null && value < 1000 && complete, `p50 ${stats.p50} ms, ${stats.n}/${lag.probes} probes seen, poll every ${lag.pollMs} ms`)
    }
  }

  // Peak RSS in every scenario.
  const rss = [...report.scenarios.filter(ok), ...report.lag.filter(ok)].filter((s) => s.peakRssMB !== undefined)
  if (rss.length > 0) {
    const worst = rss.reduce((a, b) => (b.peakRssMB > a.peakRssMB ? b : a))
    add('peak RSS < 400 MB in every scenario', `worst: ${worst.name}@${worst.sink}${worst.loadgen === 'wrk' ? ' (wrk)' : ''}`, worst.peakRssMB, worst.peakRssMB < 400, `${rss.filter((s) => s.peakRssMB >= 400).length} of ${rss.length} scenarios at or above 400 MB`)
  }
  return out
}
