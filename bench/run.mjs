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
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { clickhouseCeiling, sampleRows, sqliteCeiling } from './lib/ceiling.mjs'
import { elu, runLagProbes, scrape, startLagSampler, storeCounter, waitForDrain } from './lib/e2e.mjs'
import { autocannonOptions, describeAutocannon, runAutocannon, runWrk, startBackground } from './lib/load.mjs'
import { startSpeedProbe } from './lib/speed.mjs'
import { summariseProfiles, threadLabel, threadRoles } from './lib/profile.mjs'
import { writeFlameGraph } from './lib/flame.mjs'
import { runSteady } from './lib/steady.mjs'
import { renderMarkdown, renderSvg } from './lib/report.mjs'
import { snapshotBuild, startBaseline, startClickHouse, startSkylark } from './lib/servers.mjs'
import { gitInfo, machineInfo, processMemory, round, startSampler, waitForQuiet } from './lib/system.mjs'
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
const RETRIES = num('retries', 'BENCH_RETRIES', 0)
/** Other processes' CPU (cores) above which a run counts as disturbed: marked in the report, repeated with --retries. */
const DISTURBED = 0.25
/** Wait at most this long for a quiet machine before each run (recorded either way). */
const QUIET = { threshold: 0.3, maxMs: 3000 }
const DRAIN_MAX_MS = num('drain', 'BENCH_DRAIN_MAX', 15) * 1000
const groups = args.group ? args.group.split(',') : null
const only = args.only ? args.only.split(',') : null
const outDir = args.out ?? join(BENCH, 'results')

// ── progress ──────────────────────────────────────────────────────────────────────────────────────────
const tty = process.stderr.isTTY
let lastPlain = 0
function status(text) {
  if (tty) process.stderr.write(`\r\x1b[K${text}`)
  else if (Date.now() - lastPlain > 5000) {
    process.stderr.write(`  … ${text}\n`)
    lastPlain = Date.now()
  }
}
function say(text) {
  if (tty) process.stderr.write('\r\x1b[K')
  process.stderr.write(text + '\n')
  lastPlain = 0
}
const fmt = (n, digits = 0) => (n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }))
const started = Date.now()
const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`

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

// ── measuring one load ────────────────────────────────────────────────────────────────────────────────
async function measure({ url, requests, loadgen, load, pids, label, afterWarmup = async () => {} }) {
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

function loadFor(scenario, done, sink) {
  const load = { ...LOAD, ...(scenario.load ?? {}) }
  if (typeof load.overallRate === 'function') load.overallRate = load.overallRate(done, sink)
  return load
}

function usageFields(usage) {
  return {
    serverCores: round(usage.cores.server, 2),
    serverThreadCores: { main: round(usage.serverThreads.main, 2), others: usage.serverThreads.others.map((c) => round(c, 2)) },
    loadgenCores: round(usage.cores.loadgen, 2),
    clickhouseCores: usage.cores.clickhouse === undefined ? undefined : round(usage.cores.clickhouse, 2),
    clickhouseThreadCores: usage.cores.clickhouse === undefined ? undefined : clickhouseThreadCores(usage.clickhouseThreads),
    otherCores: round(usage.otherCores, 2),
  }
}

/**
 * The ClickHouse server's CPU split by thread name: merges (the background pool, `BackgrProcPool` in 18.x and
 * `MergeMutate` later), HTTP handlers (the inserts and the counting queries), the rest.
 */
function clickhouseThreadCores(byName) {
  const split = { merges: 0, http: 0, other: 0 }
  for (const [name, cores] of Object.entries(byName)) {
    const kind = /backgr|merge|mutat/i.test(name) ? 'merges' : /http/i.test(name) ? 'http' : 'other'
    split[kind] += cores
  }
  return { merges: round(split.merges, 2), http: round(split.http, 2), other: round(split.other, 2) }
}

function loadFields(result) {
  return {
    rps: round(result.rps),
    ok: result.ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: result.statusCodes,
    latencyMs: Object.fromEntries(Object.entries(result.latencyMs).map(([k, v]) => [k, round(v, 2)])),
  }
}

// ── baselines ─────────────────────────────────────────────────────────────────────────────────────────
const PLACEHOLDER = { token: `phc_${'x'.repeat(43)}`, projectId: 1, personalKey: `phx_${'x'.repeat(43)}`, state: {} }

async function runBaselines(scenarios, all, useWrk, report) {
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
        let entry = null
        for (let attempt = 1; attempt <= RETRIES + 1; attempt++) {
          const quiet = await waitForQuiet(QUIET)
          // A fresh process per run: node:http drifts between runs of one long-lived process (perf-limits.md).
          const server = await startBaseline(BENCH, name)
          try {
            const { result, usage, cpuSpeed } = await measure({ url: server.url, requests, loadgen, load: LOAD, pids: { metrics: false, sample: { server: server.pid } }, label })
            const run = { name, body, loadgen, ...loadFields(result), ...usageFields(usage), cpuSpeed, quiet, attempt, command: result.command }
            if (entry === null || run.otherCores < entry.otherCores) entry = run
            entry.attempts = attempt
            if (run.otherCores <= DISTURBED) break
            say(`  ${label}: disturbed (other processes used ${fmt(run.otherCores, 2)} cores)${attempt <= RETRIES ? ', measuring again' : ''}`)
          } finally {
            await server.stop()
          }
        }
        report.baselines.push(entry)
        say(`  ${label}: ${fmt(entry.rps)} req/s, p50 ${fmt(entry.latencyMs.p50, 2)} ms, p99 ${fmt(entry.latencyMs.p99, 2)} ms (server ${fmt(entry.serverCores, 2)} cores, ${loadgen} ${fmt(entry.loadgenCores, 2)}, other ${fmt(entry.otherCores, 2)})`)
      }
    }
  }
}

// ── the skylark side ──────────────────────────────────────────────────────────────────────────────────
function contextFor(server) {
  const request = async (method, path, { body, headers } = {}) => {
    const res = await fetch(server.url + path, { method, headers, body })
    const text = await res.text()
    let json = null
    try {
      json = text ? JSON.parse(text) : null
    } catch {
      // not JSON
    }
    return { status: res.status, headers: res.headers, text, json }
  }
  return {
    url: server.url,
    token: server.boot.project_api_key,
    projectId: server.boot.project_id,
    personalKey: server.boot.personal_api_key,
    state: {},
    request,
    api: (method, path, body) =>
      request(method, path, {
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: { authorization: `Bearer ${server.boot.personal_api_key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      }),
  }
}

async function checkScenario(scenario, ctx, requests) {
  const targets = scenario.checkRequests ? scenario.checkRequests(requests) : [requests[0]]
  for (const req of targets) {
    const res = await ctx.request(req.method, req.path, { body: req.body, headers: req.headers })
    const verdict = scenario.check(res, req)
    if (verdict && typeof verdict === 'object' && verdict.unavailable) return { status: 'not available', reason: verdict.unavailable }
    if (verdict) return { status: 'check failed', reason: String(verdict) }
  }
  return null
}

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

/** Polls the server's RSS for the whole life of a scenario (setup, warm-up, load, drain). */
function rssWatch(pid) {
  let peak = 0
  const read = () => {
    const mem = processMemory(pid)
    if (mem) peak = Math.max(peak, mem.rss)
  }
  read()
  const timer = setInterval(read, 100)
  return () => {
    clearInterval(timer)
    read()
    return peak
  }
}

/** The report being built (module-level: the scenario runners add to it). */
let report = null
/** The vCPU speed probes, running for the whole run (bench/lib/speed.mjs). */
let speed = null
/** The private copy of the compiled service the run uses (see snapshotBuild). */
let build = null

async function main() {
  if (!args['no-build']) execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.mjs')], { stdio: 'inherit' })
  build = snapshotBuild(ROOT)
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
  speed = startSpeedProbe()
  report = {
    suite: 'skylark-bench/1',
    runId,
    date: new Date().toISOString(),
    git,
    machine: { ...machineInfo(ROOT), clickhouse: clickhouse?.version ?? null },
    options: { ...LOAD, drainMaxS: DRAIN_MAX_MS / 1000, retries: RETRIES, disturbedAboveCores: DISTURBED, sinks, wrk: useWrk, serverEnv: SERVER_ENV, groups, only, cpuProf: Boolean(args['cpu-prof']), serverNodeArgs: args['node-arg'] ?? [], speedProbePinned: speed.pinned },
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
      await runBaselines(scenarios, all, useWrk, report)
    }
    for (const sink of sinks) {
      for (const scenario of scenarios.filter((s) => s.sinks.includes(sink))) {
        if (scenario.kind === 'ceiling') {
          await runCeiling(scenario, sink, samples, clickhouse, report, stopCurrent, runId)
          continue
        }
        if (scenario.kind === 'lag') {
          const unit = `${scenario.name}@${sink}`
          const { server, ctx, key } = await serverFor(scenario, sink, unit)
          await runLag(scenario, sink, server, ctx, done, report, unit)
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
  report.durationS = Math.round((Date.now() - started) / 1000)
  writeResults(report)
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
    // A run that other processes disturbed (other cores above DISTURBED) is repeated; the least disturbed is kept.
    let entry = null
    for (let attempt = 1; attempt <= RETRIES + 1; attempt++) {
      const quiet = await waitForQuiet(QUIET)
      const counter = scenario.e2e ? storeCounter(server, sink, clickhouse) : null
      let storedBefore = null
      let t0 = null
      // The end-to-end window starts right after the warm-up: the store is counted there.
      const afterWarmup = async () => {
        if (!counter) return
        storedBefore = await counter.count()
        t0 = performance.now()
      }
      const measured = await measure({ url: server.url, requests, loadgen, load, pids, label: attempt > 1 ? `${label} (again: disturbed)` : label, afterWarmup })
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
      if (entry === null || run.otherCores < entry.otherCores) entry = run
      entry.attempts = attempt
      if (run.otherCores <= DISTURBED) break
      say(`  ${label}: disturbed (other processes used ${fmt(run.otherCores, 2)} cores)${attempt <= RETRIES ? ', measuring again' : ''}`)
    }
    entry.peakRssMB = round(stopRss() / 2 ** 20)
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

async function runLag(scenario, sink, server, ctx, done, report, unit) {
  const stopRss = rssWatch(server.pid)
  const rate = scenario.backgroundRate(done, sink)
  const { captureBodies } = await import('./scenarios/_payloads.mjs')
  const requests = captureBodies(ctx.token).map((body) => ({ method: 'POST', path: '/capture/', headers: { 'content-type': 'application/json' }, body }))
  await waitForQuiet(QUIET)
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

async function runCeiling(scenario, sink, samples, clickhouse, report, stopCurrent, runId) {
  await stopCurrent()
  const sample = samples[sink]
  if (!sample) {
    report.ceilings.push({ sink, status: 'skipped', reason: 'no /batch/ rows to copy (batch-100 did not run on this sink)' })
    return
  }
  await waitForQuiet(QUIET)
  status(`sink-ceiling@${sink}  [${elapsed()}]`)
  try {
    const rows = scenario.rows[sink]
    const result =
      sink === 'sqlite'
        ? await sqliteCeiling(build.root, sample.rows, rows, scenario.repeats)
        : await clickhouseCeiling(build.root, clickhouse, sample.rows, rows, scenario.repeats, `skylark_bench_${runId.replace(/[^a-z0-9]/gi, '_')}`)
    const { windows, ...figures } = result
    // The SQLite ceiling held this thread: the probes' reports of its windows are still in their pipes.
    await sleep(250)
    report.ceilings.push({ status: 'ok', rowsFrom: sample.from, ...figures, cpuSpeeds: windows.map(([from, to]) => speed.between(from, to)) })
    say(`✓ sink-ceiling@${sink}: ${fmt(result.rowsPerS)} rows/s (best of ${result.repeats} × ${fmt(rows)} rows; ${result.allRowsPerS.map((x) => fmt(x)).join(', ')})  [${elapsed()}]`)
  } catch (error) {
    report.ceilings.push({ sink, status: 'error', reason: error.message })
    say(`✗ sink-ceiling@${sink}: ${error.message}`)
  }
}

/** With --cpu-prof: a flame graph of each server thread's profile in <stem>-flames/, named in the report. */
function writeFlameGraphs(report, stem) {
  for (const s of report.scenarios) {
    // Scenarios served by one server share its profile entries: each thread's graph is written once.
    for (const p of s.profile ?? []) {
      if (p.flame || !existsSync(p.path)) continue
      // The profile's folder is named after its server (serverFor).
      p.flame = `${stem}-flames/${basename(dirname(p.path))}.thread${p.thread}${p.role ? `-${p.role}` : ''}.svg`
      writeFlameGraph(p.path, join(outDir, p.flame), { root: build.root, title: `${s.serverKey}, ${threadLabel(p)} (${report.runId})` })
    }
  }
}

function writeResults(report) {
  mkdirSync(outDir, { recursive: true })
  let stem = report.runId
  for (let n = 2; existsSync(join(outDir, `${stem}.json`)); n++) stem = `${report.runId}-${n}`
  const write = (ext, text) => {
    const tmp = join(outDir, `${stem}.${ext}.tmp`)
    writeFileSync(tmp, text)
    renameSync(tmp, join(outDir, `${stem}.${ext}`))
  }
  writeFlameGraphs(report, stem)
  write('json', JSON.stringify(report, null, 2) + '\n')
  write('md', renderMarkdown(report, `${stem}.svg`))
  write('svg', renderSvg(report))
  say(`\nresults: ${relative(process.cwd(), join(outDir, stem))}.{json,md,svg}  (${report.durationS} s)`)
  process.stdout.write('\n' + renderMarkdown(report, `${stem}.svg`))
}

main().catch((error) => {
  say(`bench failed: ${error.stack ?? error}`)
  process.exitCode = 1
})
