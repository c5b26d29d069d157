#!/usr/bin/env node
// The benchmark suite: `npm run bench` (everything), `npm run bench:capture|batch|decide` (subsets).
//
// Runs each scenario of bench/scenarios/*.mjs against a server it starts itself (the compiled
// `bin/skylark.js serve`, free port, fresh temp DATA_DIR; the embedded store, and ClickHouse when
// CLICKHOUSE_URL is set or clickhouse-server is on PATH), beside two baselines measured in the same run with
// the same load settings (bench/baselines: raw uWS and plain node:http reading the same body and answering
// 200), and for /capture/ a third, the durable floor (uws-durable: uWS answering after the same kind of group
// write as the spool's). Each scenario's request is sent once and checked before the load; a /decide that
// does not answer 200 is reported "not available". Results: bench/results/<date>-<sha>[-<subset>].{json,md,svg}.
//
// Options (flag or environment variable; defaults sized for this 2-core machine, where the load generator
// shares the cores with the server):
//   --connections N   BENCH_CONNECTIONS   50      --pipelining N   BENCH_PIPELINING   1
//                     (above 1, uWS closes the connections of /capture/, /batch/, mixed and POST /decide:
//                     their answers wait for the spool or the answer batch; see docs/performance.md, "Caveats")
//   --duration S      BENCH_DURATION      6       --warmup S       BENCH_WARMUP       2
//   --group G[,G]     capture|batch|decide (default all)      --only NAME[,NAME]   scenario names
//   --sinks LIST      sqlite,clickhouse (default: both when ClickHouse is available)
//   --no-wrk          skip the wrk runs                        --no-baselines       skip the baselines
//   --drain S         BENCH_DRAIN_MAX 15: longest wait for the consumer to store the backlog
//   --retries N       BENCH_RETRIES 0: repeats of a run that other processes disturbed (>0.25 cores);
//                     every run records those "other cores" and the report marks disturbed runs
//   --cpu-prof        run the server with --cpu-prof; summaries go into the results, a flame graph of each
//                     thread beside them (<run>-flames/), the profiles to
//                     $TMPDIR/skylark-bench-profiles/<run>/<server>/ (open them in Chrome DevTools)
//   --env KEY=VALUE   extra server environment (repeatable), e.g. --env SPOOL_FSYNC_INTERVAL_MS=0
//   --node-arg FLAG   extra Node flag for the server (repeatable), e.g. --node-arg=--perf-basic-prof-only-functions
//                     so that `perf record` names the JIT's functions
//   --no-build        use dist/ as it is          --out DIR   (default bench/results)
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { sampleRows } from './lib/ceiling.mjs'
import { storeCounter, waitForDrain } from './lib/e2e.mjs'
import { loadFields, usageFields } from './lib/fields.mjs'
import { autocannonOptions, describeAutocannon, startBackground } from './lib/load.mjs'
import { leastDisturbed, measure } from './lib/measure.mjs'
import { summariseProfiles, threadRoles } from './lib/profile.mjs'
import { elapsed, elapsedS, fmt, say, status } from './lib/progress.mjs'
import { writeResults } from './lib/results.mjs'
import { runBaselines, runCeiling, runLag } from './lib/runs.mjs'
import { checkScenario, contextFor } from './lib/scenario-context.mjs'
import { snapshotBuild, startBaseline, startClickHouse, startSkylark } from './lib/servers.mjs'
import { startSpeedProbe } from './lib/speed.mjs'
import { runSteady } from './lib/steady.mjs'
import { gitInfo, machineInfo, processMemory, round, rssWatch } from './lib/system.mjs'
import { evaluateTargets } from './lib/targets.mjs'

const BENCH = dirname(fileURLToPath(import.meta.url))
const ROOT = join(BENCH, '..')
/** Scenario files in run order (a file not listed here runs after these). */
const ORDER = ['capture', 'lag', 'batch', 'sink-ceiling', 'flags-list', 'decide', 'mixed']
/** The server environment: product defaults except a spool big enough that /batch/ overload shows the front's rate, not 503s. */
const SERVER_ENV = { SPOOL_MAX_BYTES: '16GB', SHUTDOWN_TIMEOUT_MS: '3000' }

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string' },
    pipelining: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    group: { type: 'string' },
    only: { type: 'string' },
    sinks: { type: 'string' },
    'no-wrk': { type: 'boolean' },
    'no-baselines': { type: 'boolean' },
    drain: { type: 'string' },
    'cpu-prof': { type: 'boolean' },
    'no-build': { type: 'boolean' },
    out: { type: 'string' },
    env: { type: 'string', multiple: true },
    'node-arg': { type: 'string', multiple: true },
    retries: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
})
if (args.help) {
  // The comment block at the top of this file is the help text.
  const lines = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1)
  const header = lines.slice(0, lines.findIndex((l) => !l.startsWith('//')))
  process.stdout.write(header.map((l) => l.slice(3)).join('\n') + '\n')
  process.exit(0)
}
const num = (flag, env, fallback) => {
  const value = Number(args[flag] ?? process.env[env] ?? fallback)
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${flag} must be a number`)
  return value
}
const LOAD = {
  connections: num('connections', 'BENCH_CONNECTIONS', 50),
  pipelining: num('pipelining', 'BENCH_PIPELINING', 1),
  durationS: num('duration', 'BENCH_DURATION', 6),
  warmupS: num('warmup', 'BENCH_WARMUP', 2),
}
for (const pair of args.env ?? []) {
  const eq = pair.indexOf('=')
  if (eq < 1) throw new Error(`--env needs KEY=VALUE, got ${pair}`)
  SERVER_ENV[pair.slice(0, eq)] = pair.slice(eq + 1)
}
/**
 * What every run of the suite shares (bench/lib/runs.mjs and measure.mjs take it): the load, the repeats of a
 * run that other processes disturbed (more than `disturbed` cores: marked in the report, repeated with
 * --retries), the wait for a quiet machine before each run (recorded either way), and, once main() has them,
 * the CPU speed probes and the private copy of the compiled service (snapshotBuild).
 */
const suite = {
  load: LOAD,
  retries: num('retries', 'BENCH_RETRIES', 0),
  disturbed: 0.25,
  quiet: { threshold: 0.3, maxMs: 3000 },
  benchDir: BENCH,
  speed: null,
  buildRoot: null,
}
const DRAIN_MAX_MS = num('drain', 'BENCH_DRAIN_MAX', 15) * 1000
const groups = args.group ? args.group.split(',') : null
const only = args.only ? args.only.split(',') : null
const outDir = args.out ?? join(BENCH, 'results')

// ── scenarios ─────────────────────────────────────────────────────────────────────────────────────────
async function loadScenarios() {
  const files = readdirSync(join(BENCH, 'scenarios')).filter((f) => f.endsWith('.mjs') && !f.startsWith('_'))
  const rank = (f) => (ORDER.indexOf(f.replace(/\.mjs$/, '')) + 1 || ORDER.length + 1)
  files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
  const all = []
  for (const file of files) {
    const mod = await import(pathToFileURL(join(BENCH, 'scenarios', file)).href)
    for (const s of mod.default) all.push({ ...s, file })
  }
  const selected = all.filter((s) => (!groups || s.groups.some((g) => groups.includes(g))) && (!only || only.includes(s.name)))
  return { all, selected }
}

function loadFor(scenario, done, sink) {
  const load = { ...LOAD, ...(scenario.load ?? {}) }
  if (typeof load.overallRate === 'function') load.overallRate = load.overallRate(done, sink)
  return load
}

// ── the skylark side ──────────────────────────────────────────────────────────────────────────────────
/** The steady generator's own latency at the same rate against the raw uWS baseline (what it adds). */
async function steadyFloor(requests, load) {
  const server = await startBaseline(BENCH, 'uws-raw')
  try {
    const r = await runSteady(server.url, requests, { connections: load.connections, rate: load.overallRate, warmupS: load.warmupS, durationS: Math.min(load.durationS, 4) })
    return { p50: round(r.latencyMs.p50, 2), p99: round(r.latencyMs.p99, 2) }
  } finally {
    await server.stop()
  }
}

/** The report being built (module-level: the scenario runners add to it). */
let report = null

async function main() {
  if (!args['no-build']) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.mjs')], { stdio: 'inherit' })
  const build = snapshotBuild(ROOT)
  suite.buildRoot = build.root
  const { all, selected: scenarios } = await loadScenarios()
  if (scenarios.length === 0) throw new Error('no scenario matches the selection')
  const useWrk = !args['no-wrk'] && machineInfo(ROOT).wrk !== null
  const git = gitInfo(ROOT)
  const needsClickHouse = scenarios.some((s) => s.sinks.includes('clickhouse')) && (!args.sinks || args.sinks.includes('clickhouse'))
  const clickhouse = needsClickHouse ? await startClickHouse() : null
  const sinks = (args.sinks ? args.sinks.split(',') : ['sqlite', 'clickhouse']).filter((s) => s === 'sqlite' || (s === 'clickhouse' && clickhouse))
  const runId = `${new Date().toISOString().slice(0, 10)}-${git.sha}${groups || only ? `-${(groups ?? only).join('+')}` : ''}`
  // Profiles are large: they stay outside the tree; their summaries go into the results.
  const profileRoot = join(tmpdir(), 'skylark-bench-profiles', runId)
  const speed = (suite.speed = startSpeedProbe())
  report = {
    suite: 'skylark-bench/1',
    runId,
    date: new Date().toISOString(),
    git,
    machine: { ...machineInfo(ROOT), clickhouse: clickhouse?.version ?? null },
    options: { ...LOAD, drainMaxS: DRAIN_MAX_MS / 1000, retries: suite.retries, disturbedAboveCores: suite.disturbed, sinks, wrk: useWrk, serverEnv: SERVER_ENV, groups, only, cpuProf: Boolean(args['cpu-prof']), serverNodeArgs: args['node-arg'] ?? [], speedProbePinned: speed.pinned },
    autocannon: null,
    wrkCommand: null,
    notes: [
      'autocannon runs in the runner process (one Node thread) and saturates its core below the uWS ceiling without pipelining (≈80–90 k req/s on the earlier machines, ≈20 k on the Firecracker one; the raw uWS autocannon row says where in this run): autocannon rows of fast routes measure the load generator, see the wrk rows.',
      'The load generator shares the 2 cores with the server (no pinning); "other cores" is CPU used by anything else on the machine during the measured window.',
      'autocannon latencies have whole-millisecond resolution; wrk and the steady-rate generator (bench/lib/steady.mjs, used for rate-limited runs) report microseconds.',
      `"CPU probe ns" is how long a fixed unit of JSON and SHA-1 work took on the machine's vCPUs during the measured window (bench/lib/speed.mjs; the median of each vCPU's reports, averaged${speed.pinned ? '' : '; unpinned: taskset is missing'}): higher is slower. A vCPU of a shared host can run at half speed for seconds at a time, so a ratio whose two runs read far apart compares different machines.`,
    ],
    baselines: [],
    scenarios: [],
    lag: [],
    ceilings: [],
  }
  say(`skylark bench ${runId}: ${scenarios.length} scenario definitions, sinks ${sinks.join(', ')}, ${LOAD.connections} connections, pipelining ${LOAD.pipelining}, ${LOAD.warmupS} s warm-up + ${LOAD.durationS} s${useWrk ? ', wrk too' : ''}`)

  const done = {}
  const samples = {}
  let current = null // { key, server, ctx }
  const stopCurrent = async () => {
    if (!current) return
    const { server, key } = current
    current = null
    // VmHWM: the server's peak RSS over its whole life (for a fresh server, exactly its scenario's peak).
    const hwm = processMemory(server.pid)?.hwm ?? null
    await server.stop({ graceful: Boolean(args['cpu-prof']) })
    const summary = args['cpu-prof'] && server.profileDir && existsSync(server.profileDir) ? summariseProfiles(server.profileDir, build.root, 15, threadRoles(server.threadLines)) : null
    for (const s of [...report.scenarios, ...report.lag].filter((x) => x.serverKey === key)) {
      if (hwm !== null) s.serverVmHwmMB = round(hwm / 2 ** 20)
      if (summary) s.profile = summary
    }
  }
  let serverSeq = 0
  const serverFor = async (scenario, sink, unitName) => {
    const key = scenario.server === 'fresh' ? `${unitName}#${++serverSeq}` : `${scenario.server}@${sink}`
    if (current?.key === key) return current
    await stopCurrent()
    const env = { ...SERVER_ENV }
    if (sink === 'clickhouse') {
      env.CLICKHOUSE_URL = clickhouse.url
      env.CLICKHOUSE_DATABASE = clickhouse.database(`skylark_bench_${Date.now().toString(36)}_${serverSeq}`)
    }
    let nodeArgs = [...(args['node-arg'] ?? [])]
    let profileDir = null
    if (args['cpu-prof']) {
      profileDir = join(profileRoot, key.replace(/[^a-z0-9@.-]+/gi, '_'))
      // A run of the same commit earlier has the same folder: its profiles must not be summarised again.
      rmSync(profileDir, { recursive: true, force: true })
      mkdirSync(profileDir, { recursive: true })
      nodeArgs.push('--cpu-prof', '--cpu-prof-dir', profileDir)
    }
    const server = await startSkylark(build.root, { env, nodeArgs })
    server.profileDir = profileDir
    current = { key, server, ctx: contextFor(server) }
    return current
  }

  try {
    if (!args['no-baselines']) {
      say('baselines')
      await runBaselines(scenarios, all, useWrk, report, suite)
    }
    for (const sink of sinks) {
      for (const scenario of scenarios.filter((s) => s.sinks.includes(sink))) {
        if (scenario.kind === 'ceiling') {
          await stopCurrent()
          await runCeiling(scenario, sink, samples, clickhouse, report, runId, suite)
          continue
        }
        if (scenario.kind === 'lag') {
          const unit = `${scenario.name}@${sink}`
          const { server, ctx, key } = await serverFor(scenario, sink, unit)
          await runLag(scenario, sink, server, ctx, done, report, unit, suite)
          report.lag.at(-1).serverKey = key
          await stopCurrent()
          continue
        }
        const loadgens = scenario.loadgens.filter((g) => g !== 'wrk' || useWrk)
        for (const loadgen of loadgens) {
          const unit = `${scenario.name}@${sink}${loadgen === 'wrk' ? ':wrk' : ''}`
          const { server, ctx, key } = await serverFor(scenario, sink, unit)
          const entry = await runLoadScenario({ scenario, sink, loadgen, server, ctx, clickhouse, done, unit })
          entry.serverKey = key
          report.scenarios.push(entry)
          if (entry.status === 'ok') done[unit] = entry
          if (entry.status === 'ok' && scenario.ceilingRows && !samples[sink]) samples[sink] = { rows: await sampleRows(server, sink, clickhouse), from: unit }
          if (scenario.server === 'fresh') await stopCurrent()
        }
      }
      await stopCurrent()
    }
  } finally {
    await stopCurrent().catch(() => {})
    if (clickhouse) await clickhouse.destroy().catch(() => {})
    speed.stop()
    build.destroy()
  }

  report.targets = evaluateTargets(report)
  report.durationS = elapsedS()
  writeResults(report, outDir, build.root)
}

async function runLoadScenario({ scenario, sink, loadgen, server, ctx, clickhouse, done, unit }) {
  const base = { name: scenario.name, title: scenario.title, sink, loadgen, baseline: scenario.baseline, eventsPerRequest: scenario.eventsPerRequest }
  const label = `${unit}`
  const stopRss = rssWatch(server.pid)
  let background = null
  try {
    status(`${label} setup`)
    try {
      await scenario.setup?.(ctx)
    } catch (error) {
      say(`✗ ${label}: setup failed — ${error.message}`)
      return { ...base, status: 'setup failed', reason: error.message }
    }
    const requests = scenario.requests(ctx)
    const verdict = await checkScenario(scenario, ctx, requests)
    if (verdict) {
      say(`${verdict.status === 'not available' ? '–' : '✗'} ${label}: ${verdict.status} — ${verdict.reason}`)
      return { ...base, ...verdict }
    }
    const load = loadFor(scenario, done, sink)
    if (scenario.load?.overallRate && !load.overallRate) {
      say(`– ${label}: skipped — its rate derives from a scenario that did not run or failed`)
      return { ...base, status: 'skipped', reason: 'its rate derives from a scenario that did not run or failed' }
    }
    // Ingestion beside the load (scenario.background): its generator is sampled by pid, so it is not a disturbance.
    background = scenario.background ? startBackground(server.url, scenario.background.requests(ctx), scenario.background) : null
    if (background) await sleep(1000)
    const pids = {
      metrics: true,
      lag: Boolean(scenario.e2e),
      sample: { server: server.pid, ...(sink === 'clickhouse' && clickhouse.pid ? { clickhouse: clickhouse.pid } : {}), ...(background ? { background: background.pid } : {}) },
    }
    const entry = await leastDisturbed(suite, label, async (attempt, quiet) => {
      const counter = scenario.e2e ? storeCounter(server, sink, clickhouse) : null
      let storedBefore = null
      let t0 = null
      // The end-to-end window starts right after the warm-up: the store is counted there.
      const afterWarmup = async () => {
        if (!counter) return
        storedBefore = await counter.count()
        t0 = performance.now()
      }
      const measured = await measure({ url: server.url, requests, loadgen, load, pids, label: attempt > 1 ? `${label} (again: disturbed)` : label, speed: suite.speed, afterWarmup })
      if (loadgen === 'autocannon') report.autocannon ??= describeAutocannon(autocannonOptions('', requests, { ...load, overallRate: undefined }))
      else report.wrkCommand ??= measured.result.command?.replace(/http:\/\/127\.0\.0\.1:\d+/, 'http://127.0.0.1:PORT')
      const run = { ...base, status: 'ok', load: { connections: load.connections, pipelining: load.pipelining, durationS: load.durationS, warmupS: load.warmupS, overallRate: load.overallRate ?? null }, quiet, attempt }
      Object.assign(run, loadFields(measured.result), usageFields(measured.usage), { cpuSpeed: measured.cpuSpeed })
      run.eventsPerS = round(run.rps * scenario.eventsPerRequest)
      run.elu = round(measured.elu, 2)
      if (measured.ingestionLagS) run.ingestionLagS = measured.ingestionLagS
      // The main thread's V8 heap and external (Buffer/ArrayBuffer) memory at the end of the load; RSS - these ≈ the worker threads.
      run.mainMemory = measured.memory
      run.requestsCycled = requests.length
      run.bodyBytes = typeof requests[0].body === 'string' ? Buffer.byteLength(requests[0].body) : requests[0].body?.length ?? 0
      if (counter) {
        const loadEnd = performance.now()
        const storedAtLoadEnd = await counter.count()
        const drain = await waitForDrain(server.url, DRAIN_MAX_MS, (stored, received) => status(`${label} draining: ${fmt(stored)}/${fmt(received)} stored  [${elapsed()}]`))
        const storedAfter = await counter.count()
        counter.close()
        const windowS = (drain.at - t0) / 1000
        run.e2e = {
          storedEvents: storedAfter - storedBefore,
          storedPerS: round((storedAfter - storedBefore) / windowS),
          storedPerSDuringLoad: round((storedAtLoadEnd - storedBefore) / ((loadEnd - t0) / 1000)),
          windowS: round(windowS, 1),
          drained: drain.drained,
          backlogLeft: Math.max(0, drain.received - storedAfter),
        }
      }
      if (loadgen === 'steady') run.generatorFloorMs = await steadyFloor(requests, load)
      return run
    })
    entry.peakRssMB = round(stopRss() / 2 ** 20)
    // What the load beside it got, over its whole life (from a second before the first warm-up to now).
    if (background) entry.background = await background.stop()
    say(
      `✓ ${label}: ${fmt(entry.rps)} req/s${scenario.eventsPerRequest ? ` (${fmt(entry.eventsPerS)} events/s)` : ''}, p50 ${fmt(entry.latencyMs.p50, 2)} ms, p99 ${fmt(entry.latencyMs.p99, 2)} ms` +
        `${entry.non2xx ? `, ${fmt(entry.non2xx)} non-2xx` : ''}${entry.e2e ? `, stored ${fmt(entry.e2e.storedPerS)}/s${entry.e2e.drained ? '' : ' (not drained)'}` : ''}` +
        `, ELU ${fmt(entry.elu, 2)}, RSS ${fmt(entry.peakRssMB)} MB  [${elapsed()}]`,
    )
    return entry
  } catch (error) {
    say(`✗ ${label}: ${error.stack ?? error}`)
    return { ...base, status: 'error', reason: error.message }
  } finally {
    await background?.stop()
    stopRss()
  }
}

main().catch((error) => {
  say(`bench failed: ${error.stack ?? error}`)
  process.exitCode = 1
})
