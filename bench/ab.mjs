#!/usr/bin/env node
// Alternated A/B runs of builds or settings:
//
//   node bench/ab.mjs --revs HEAD~1,HEAD --only batch-100,batch-1000 --sinks clickhouse [--reps 2]
//   node bench/ab.mjs --revs .,.:SINK_FLUSH_INTERVAL_MS=250 --only batch-100 --sinks sqlite
//   node bench/ab.mjs --revs HEAD~1,. --only decide-50 --wrk --reps 4
//
// A revision is a git revision (checked out into its own worktree under $TMPDIR, sharing this checkout's
// node_modules, and built once) or `.`, this working tree as it is (uncommitted changes included). After a
// colon it may carry server environment of its own (`KEY=VALUE`, several joined by `+`); `--env KEY=VALUE`
// applies to all. Each rep runs every revision once, in turn, through that revision's own bench/run.mjs
// (no baselines; wrk only with --wrk, for the scenarios that use it): the machine drifts by ±15 % between runs of one build (docs/performance.md,
// "Caveats"), so builds are compared run for run, never a series of one against a series of the other.
// Prints a line per run (requests/s, p99, stored events/s, the ingestion lag p50 / max where the suite samples
// it, peak RSS, CPU by thread, ClickHouse's CPU and its merges, and the CPU probe's reading where the revision's
// suite has the probe: on a machine whose vCPUs change speed, a pair of runs is only a comparison when the
// readings are close; for the `lag` scenario the p50 and p99 of each path) and the medians per revision.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

const { values: args } = parseArgs({
  options: {
    revs: { type: 'string' },
    only: { type: 'string' },
    sinks: { type: 'string' },
    reps: { type: 'string', default: '2' },
    env: { type: 'string', multiple: true, default: [] },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    wrk: { type: 'boolean', default: false },
  },
})
if (!args.revs || !args.only) {
  console.error('usage: node bench/ab.mjs --revs REV[:KEY=VALUE[+KEY=VALUE]],REV… --only SCENARIO[,…] [--sinks LIST] [--reps N] [--env KEY=VALUE] [--wrk]')
  process.exit(2)
}

const git = (...a) => execFileSync('git', ['-C', ROOT, ...a], { encoding: 'utf8' }).trim()
const created = []

/** The directory holding `rev` built: this tree for `.`, else a worktree made for it (one per commit). */
function checkout(rev, dirs) {
  if (rev === '.') return ROOT
  const sha = git('rev-parse', '--verify', `${rev}^{commit}`)
  if (dirs.has(sha)) return dirs.get(sha)
  const dir = mkdtempSync(join(tmpdir(), `skylark-ab-${sha.slice(0, 8)}-`))
  git('worktree', 'add', '--detach', dir, sha)
  created.push(dir)
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  dirs.set(sha, dir)
  return dir
}

function build(dir) {
  execFileSync(process.execPath, [join(dir, 'scripts', 'build-if-needed.mjs')], { cwd: dir, stdio: 'inherit' })
}

/** One run of run.mjs from `dir`; its scenarios, and its `lag` probes apart, as recorded in the results file. */
function runOnce(dir, env) {
  const out = mkdtempSync(join(tmpdir(), 'skylark-ab-run-'))
  try {
    const pass = ['only', 'sinks', 'duration', 'warmup', 'connections'].flatMap((k) => (args[k] ? [`--${k}`, args[k]] : []))
    const envArgs = [...args.env, ...env].flatMap((e) => ['--env', e])
    try {
      execFileSync(process.execPath, [join(dir, 'bench', 'run.mjs'), ...pass, ...envArgs, '--no-baselines', ...(args.wrk ? [] : ['--no-wrk']), '--no-build', '--out', out], {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'pipe'],
        maxBuffer: 64 * 1024 * 1024,
      })
    } catch (error) {
      // run.mjs reports progress on stderr: show it only when the run failed.
      process.stderr.write(String(error.stderr ?? '').split('\n').slice(-20).join('\n'))
      throw error
    }
    const file = readdirSync(out).find((f) => f.endsWith('.json'))
    const report = file ? JSON.parse(readFileSync(join(out, file), 'utf8')) : {}
    return [...(report.scenarios ?? []), ...(report.lag ?? []).map((l) => ({ ...l, kind: 'lag' }))]
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

/** The `lag` scenario's paths: label and key of its p50/p99 in the results file. */
const LAG_PATHS = [
  ['events API', 'eventsMs'],
  ['persons API', 'personsMs'],
  ['/decide', 'decideMs'],
]

const fmt = (v, digits = 0) => (typeof v === 'number' ? v.toLocaleString('en-US', { maximumFractionDigits: digits }) : '–')
const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b)
  return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const specs = args.revs.split(',').map((spec) => {
  const [rev, extra] = spec.split(/:(.*)/s)
  return { label: spec, rev, env: extra ? extra.split('+') : [] }
})
const results = new Map(specs.map((s) => [s.label, []]))
try {
  const dirs = new Map()
  for (const spec of specs) spec.dir = checkout(spec.rev, dirs)
  for (const dir of new Set(specs.map((s) => s.dir))) build(dir)
  const width = Math.max(...specs.map((s) => s.label.length))
  for (let rep = 1; rep <= Number(args.reps); rep++) {
    for (const spec of specs) {
      for (const s of runOnce(spec.dir, spec.env)) {
        if (s.status !== 'ok') {
          console.log(`${spec.label.padEnd(width)}  ${s.name}@${s.sink}  ${s.status}: ${s.reason ?? ''}`)
          continue
        }
        results.get(spec.label).push(s)
        if (s.kind === 'lag') {
          console.log(`${spec.label.padEnd(width)}  ${runName(s).padEnd(24)} ${LAG_PATHS.map(([path, key]) => `${path} p50 ${fmt(s[key].p50)} p99 ${fmt(s[key].p99)} ms`).join('  ')}`)
          continue
        }
        const threads = s.serverThreadCores
        const ch = s.clickhouseCores === undefined ? '' : `  clickhouse ${fmt(s.clickhouseCores, 2)} (merges ${fmt(s.clickhouseThreadCores?.merges, 2)})`
        console.log(
          `${spec.label.padEnd(width)}  ${runName(s).padEnd(24)} req/s ${fmt(s.rps).padStart(7)}  p99 ${fmt(s.latencyMs?.p99, 2)} ms  stored/s ${fmt(s.e2e?.storedPerS).padStart(7)}${s.ingestionLagS ? `  lag ${fmt(s.ingestionLagS.p50, 2)} / ${fmt(s.ingestionLagS.max, 2)} s` : ''}  RSS ${fmt(s.peakRssMB)} MB  server ${fmt(s.serverCores, 2)} (main ${fmt(threads?.main, 2)}; ${(threads?.others ?? []).slice(0, 3).map((c) => fmt(c, 2)).join(', ')})${ch}${s.background?.latencyMs ? `  beside: ${fmt(s.background.rps, 1)} req/s p50 ${fmt(s.background.latencyMs.p50)} ms` : ''}  CPU probe ${fmt(s.cpuSpeed?.nsPerUnit)} ns`,
        )
      }
    }
  }
  console.log('\nmedians')
  for (const spec of specs) {
    for (const [name, runs] of byScenario(results.get(spec.label))) {
      if (runs[0].kind === 'lag') {
        console.log(`${spec.label.padEnd(width)}  ${name.padEnd(24)} p99 ${LAG_PATHS.map(([path, key]) => `${path} ${fmt(median(runs.map((r) => r[key].p99)))} ms`).join('  ')}  (${runs.length} runs)`)
        continue
      }
      console.log(`${spec.label.padEnd(width)}  ${name.padEnd(24)} stored/s ${fmt(median(runs.map((r) => r.e2e?.storedPerS)))}  req/s ${fmt(median(runs.map((r) => r.rps)))}  p99 ${fmt(median(runs.map((r) => r.latencyMs?.p99)), 2)} ms  RSS ${fmt(median(runs.map((r) => r.peakRssMB)))} MB  (${runs.length} runs)`)
    }
  }
} finally {
  for (const dir of created) {
    try {
      git('worktree', 'remove', '--force', dir)
    } catch {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** `scenario@sink`, and the load generator when it is not autocannon. */
function runName(r) {
  return `${r.name}@${r.sink}${r.loadgen && r.loadgen !== 'autocannon' ? ` ${r.loadgen}` : ''}`
}

function byScenario(runs) {
  const out = new Map()
  for (const r of runs) {
    const key = runName(r)
    out.set(key, [...(out.get(key) ?? []), r])
  }
  return out
}
