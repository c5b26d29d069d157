// The runs other than a scenario's load against skylark: the baselines, the ack → visible probes and the sink
// insert ceilings. `suite` is the run's settings: load, retries, disturbed, quiet, speed (the CPU probe),
// buildRoot (the compiled service) and benchDir.
import { setTimeout as sleep } from 'node:timers/promises'
import { clickhouseCeiling, sqliteCeiling } from './ceiling.mjs'
import { runLagProbes, scrape } from './e2e.mjs'
import { loadFields, usageFields } from './fields.mjs'
import { startBackground } from './load.mjs'
import { leastDisturbed, measure } from './measure.mjs'
import { elapsed, fmt, say, status } from './progress.mjs'
import { startBaseline } from './servers.mjs'
import { round, rssWatch, waitForQuiet } from './system.mjs'

const PLACEHOLDER = { token: `phc_${'x'.repeat(43)}`, projectId: 1, personalKey: `phx_${'x'.repeat(43)}`, state: {} }

export async function runBaselines(scenarios, all, useWrk, report, suite) {
  const classes = new Map()
  for (const s of scenarios.filter((x) => x.kind === 'load')) {
    // the baseline reads the bodies of the scenario it is named after (/decide's is "capture"), selected or not
    const entry = classes.get(s.baseline) ?? { scenario: all.find((x) => x.name === s.baseline) ?? s, loadgens: new Set() }
    for (const g of s.loadgens) if (g === 'autocannon' || (g === 'wrk' && useWrk)) entry.loadgens.add(g)
    classes.set(s.baseline, entry)
  }
  for (const [body, { scenario, loadgens }] of classes) {
    const requests = scenario.requests(PLACEHOLDER)
    // The durable floor (uWS + JSON.parse + the spool's group write, nothing else) only for /capture/'s body:
    // what any server that syncs before it answers reaches here (docs/performance.md).
    for (const name of body === 'capture' ? ['uws-raw', 'node-http', 'uws-durable'] : ['uws-raw', 'node-http']) {
      for (const loadgen of ['autocannon', 'wrk'].filter((g) => loadgens.has(g))) {
        const label = `baseline ${name} [${body}] ${loadgen}`
        const entry = await leastDisturbed(suite, label, async (attempt, quiet) => {
          // A fresh process per run: node:http drifts between runs of one long-lived process (perf-limits.md).
          const server = await startBaseline(suite.benchDir, name)
          try {
            const pids = { metrics: false, sample: { server: server.pid } }
            const { result, usage, cpuSpeed } = await measure({ url: server.url, requests, loadgen, load: suite.load, pids, label, speed: suite.speed })
            return { name, body, loadgen, ...loadFields(result), ...usageFields(usage), cpuSpeed, quiet, attempt, command: result.command }
          } finally {
            await server.stop()
          }
        })
        report.baselines.push(entry)
        say(`  ${label}: ${fmt(entry.rps)} req/s, p50 ${fmt(entry.latencyMs.p50, 2)} ms, p99 ${fmt(entry.latencyMs.p99, 2)} ms (server ${fmt(entry.serverCores, 2)} cores, ${loadgen} ${fmt(entry.loadgenCores, 2)}, other ${fmt(entry.otherCores, 2)})`)
      }
    }
  }
}

/** Ack → visible: probes during a background /capture/ load at the scenario's rate (bench/lib/e2e.mjs runLagProbes). */
export async function runLag(scenario, sink, server, ctx, done, report, unit, suite) {
  const stopRss = rssWatch(server.pid)
  const rate = scenario.backgroundRate(done, sink)
  const { captureBodies } = await import('../scenarios/_payloads.mjs')
  const requests = captureBodies(ctx.token).map((body) => ({ method: 'POST', path: '/capture/', headers: { 'content-type': 'application/json' }, body }))
  await waitForQuiet(suite.quiet)
  const background = startBackground(server.url, requests, { rate, connections: 10 })
  try {
    await sleep(1000)
    const before = await scrape(server.url)
    const result = await runLagProbes({
      url: server.url,
      token: ctx.token,
      projectId: ctx.projectId,
      personalKey: ctx.personalKey,
      probes: scenario.probes,
      spacingMs: scenario.spacingMs,
      pollMs: scenario.pollMs[sink],
      timeoutMs: scenario.timeoutMs,
      onProgress: (n, total) => status(`${unit} probes ${n}/${total}  [${elapsed()}]`),
    })
    const after = await scrape(server.url)
    const key = 'skylark_http_requests_total{route="/capture/",status="200"}'
    const backgroundRps = ((after.m[key] ?? 0) - (before.m[key] ?? 0) - scenario.probes) / ((after.at - before.at) / 1000)
    const loadgen = await background.stop()
    const entry = {
      name: scenario.name,
      title: scenario.title,
      sink,
      status: 'ok',
      backgroundTargetRps: rate,
      backgroundRps: round(backgroundRps),
      backgroundLoadgen: loadgen && { ...loadgen, rps: round(loadgen.rps) },
      ...result,
      peakRssMB: round(stopRss() / 2 ** 20),
    }
    report.lag.push(entry)
    say(
      `✓ ${unit}: events API p50 ${fmt(entry.eventsMs.p50)} ms p99 ${fmt(entry.eventsMs.p99)} ms; persons API p50 ${fmt(entry.personsMs.p50)} ms p99 ${fmt(entry.personsMs.p99)} ms` +
        `; /decide p50 ${fmt(entry.decideMs.p50)} ms p99 ${fmt(entry.decideMs.p99)} ms` +
        ` (${entry.probes} probes, ${entry.timeouts} timeouts, background ${fmt(entry.backgroundRps)} req/s)  [${elapsed()}]`,
    )
  } catch (error) {
    report.lag.push({ name: scenario.name, sink, status: 'error', reason: error.message })
    say(`✗ ${unit}: ${error.message}`)
  } finally {
    await background.stop()
    stopRss()
  }
}

/** The sink's own insert rate for rows sampled from /batch/ (`samples[sink]`), with no skylark server running. */
export async function runCeiling(scenario, sink, samples, clickhouse, report, runId, suite) {
  const sample = samples[sink]
  if (!sample) {
    report.ceilings.push({ sink, status: 'skipped', reason: 'no /batch/ rows to copy (batch-100 did not run on this sink)' })
    return
  }
  await waitForQuiet(suite.quiet)
  status(`sink-ceiling@${sink}  [${elapsed()}]`)
  try {
    const rows = scenario.rows[sink]
    const result =
      sink === 'sqlite'
        ? await sqliteCeiling(suite.buildRoot, sample.rows, rows, scenario.repeats)
        : await clickhouseCeiling(suite.buildRoot, clickhouse, sample.rows, rows, scenario.repeats, `skylark_bench_${runId.replace(/[^a-z0-9]/gi, '_')}`)
    const { windows, ...figures } = result
    // The SQLite ceiling held this thread: the probes' reports of its windows are still in their pipes.
    await sleep(250)
    report.ceilings.push({ status: 'ok', rowsFrom: sample.from, ...figures, cpuSpeeds: windows.map(([from, to]) => suite.speed.between(from, to)) })
    say(`✓ sink-ceiling@${sink}: ${fmt(result.rowsPerS)} rows/s (best of ${result.repeats} × ${fmt(rows)} rows; ${result.allRowsPerS.map((x) => fmt(x)).join(', ')})  [${elapsed()}]`)
  } catch (error) {
    report.ceilings.push({ sink, status: 'error', reason: error.message })
    say(`✗ sink-ceiling@${sink}: ${error.message}`)
  }
}
