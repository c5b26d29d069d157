#!/usr/bin/env node
// Long reliability soaks: the CI tests of test/integration/reliability/ (and the crash tests) run over and
// over, with fresh seeds and bigger sizes, for as long as you give them. CI runs each once at a size that
// fits a 2-core machine in minutes; a soak is how rarer failures show up.
//
//   node bench/soak/run.mjs fuzz      --minutes 60   # HTTP fuzz, a new FUZZ_SEED every round, 300,000 requests each
//   node bench/soak/run.mjs units     --minutes 10   # in-process fuzz of decode/parse/flags, 200,000 bodies a round
//   node bench/soak/run.mjs crash     --minutes 30   # kill -9 under load, both stores (ClickHouse when installed)
//   node bench/soak/run.mjs overload  --rounds 20    # the overload storm, repeatedly (memory must not creep up)
//   node bench/soak/run.mjs shutdown  --rounds 50    # SIGTERM under load
//   node bench/soak/run.mjs disk      --rounds 50    # full disk under the spool (root: mounts a tmpfs)
//   node bench/soak/run.mjs all       --minutes 120  # round-robin over all of the above
//
// Options: --minutes M (default 10) or --rounds N, --seed S (first seed; default random, printed),
// --requests N (fuzz size). The server under test is the compiled one: run `npm run build` first (done here
// when sources are newer). A failing round stops the soak, prints the seed and keeps its log.
import { spawn, execFileSync } from 'node:child_process'
import { createWriteStream, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const LOADER = pathToFileURL(join(ROOT, 'node_modules', '@tapjs', 'typescript', 'dist', 'esm', 'import.mjs')).href

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { minutes: { type: 'string' }, rounds: { type: 'string' }, seed: { type: 'string' }, requests: { type: 'string' } },
})
const which = positionals[0] ?? 'fuzz'
const rounds = args.rounds ? Number(args.rounds) : Infinity
const deadline = Date.now() + Number(args.minutes ?? (args.rounds ? 1e9 : 10)) * 60_000
let seed = args.seed ? Number(args.seed) : Math.floor(Math.random() * 2 ** 31)

/** Each kind: the test files a round runs and the environment it gets (a fresh seed every round). */
const KINDS = {
  fuzz: (s) => [['test/integration/reliability/fuzz.test.ts'], { FUZZ_SEED: String(s), FUZZ_REQUESTS: args.requests ?? '300000' }],
  units: (s) => [['test/unit/fuzz/ingestion.test.ts', 'test/unit/fuzz/flags.test.ts'], { FUZZ_SEED: String(s), FUZZ_UNIT_CASES: '200000', FUZZ_FLAG_BODIES: '30000', FUZZ_EVALUATIONS: '20000' }],
  crash: () => [['test/integration/ingestion/crash-sqlite.test.ts', 'test/integration/ingestion/crash-clickhouse.test.ts'], {}],
  overload: () => [['test/integration/reliability/overload.test.ts'], {}],
  shutdown: () => [['test/integration/reliability/shutdown.test.ts'], {}],
  disk: () => [['test/integration/reliability/disk.test.ts'], {}],
}
const order = which === 'all' ? Object.keys(KINDS) : [which]
if (!order.every((k) => Object.hasOwn(KINDS, k))) {
  process.stderr.write(`unknown soak "${which}"; one of: ${Object.keys(KINDS).join(', ')}, all\n`)
  process.exit(2)
}

execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.mjs')], { stdio: 'inherit' })
const logs = mkdtempSync(join(tmpdir(), 'skylark-soak-'))
process.stdout.write(`soak ${which}: first seed ${seed}, logs in ${logs}\n`)

/** Each file runs alone, outside tap's runner: its timeout is the one package.json gives the runner, not tap's 30 s. */
const TAP_TIMEOUT_S = '600'

function runFile(file, env, log) {
  return new Promise((resolve) => {
    const childEnv = { ...process.env, TAP_TIMEOUT: TAP_TIMEOUT_S, ...env }
    const child = spawn(process.execPath, [`--import=${LOADER}`, join(ROOT, file)], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    const out = createWriteStream(log, { flags: 'a' })
    let text = ''
    const keep = (chunk) => {
      out.write(chunk)
      text += chunk
      if (text.length > 1_000_000) text = text.slice(-500_000)
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    child.on('exit', (code) => {
      out.end()
      resolve({ code, text })
    })
  })
}

let round = 0
let failed = false
while (round < rounds && Date.now() < deadline && !failed) {
  const kind = order[round % order.length]
  const [files, env] = KINDS[kind](seed)
  const log = join(logs, `${String(round).padStart(4, '0')}-${kind}.log`)
  const started = Date.now()
  for (const file of files) {
    const { code, text } = await runFile(file, env, log)
    const comments = text.split('\n').filter((l) => /^\s+# (\d+ requests|storm|outcomes|management outcomes|CPU)/.test(l)).map((l) => l.trim())
    process.stdout.write(`round ${round} ${kind} ${file.split('/').pop()} seed ${seed}: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${((Date.now() - started) / 1000).toFixed(0)} s ${comments.join(' ')}\n`)
    if (code !== 0) {
      failed = true
      process.stdout.write(`reproduce: FUZZ_SEED=${seed} ${Object.entries(env).filter(([k]) => k !== 'FUZZ_SEED').map(([k, v]) => `${k}=${v}`).join(' ')} node --import=${LOADER} ${file}\nlog: ${log}\n`)
      break
    }
  }
  round++
  seed = (seed + 1) >>> 0
}
process.stdout.write(`${failed ? 'soak failed' : 'soak passed'} after ${round} rounds\n`)
process.exit(failed ? 1 : 0)
