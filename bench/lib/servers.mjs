// The processes a run talks to: skylark itself (the compiled CLI, `skylark serve`, on a free port with a
// fresh temp DATA_DIR), the two baselines, and a throw-away ClickHouse (scripts/clickhouse-local.mjs, as the tests start it).
import { execFileSync, spawn } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { clickhouseBinary, clickhouseQuery, prepareClickHouse, spawnClickHouse } from '../../scripts/clickhouse-local.mjs'
import { isThreadStart } from './profile.mjs'

/**
 * A private copy of the compiled service (dist/, bin/, package.json; node_modules linked) for the whole run:
 * other engineers rebuild dist/ in the shared tree while a run is going, and a server started from a
 * half-written dist/ fails or, worse, measures a mix of two builds.
 */
export function snapshotBuild(root) {
  const dir = mkdtempSync(join(tmpdir(), 'skylark-bench-build-'))
  for (const part of ['dist', 'bin', 'package.json']) cpSync(join(root, part), join(dir, part), { recursive: true })
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
  return { root: dir, destroy: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Starts a child process and resolves once a stdout line satisfies `ready` (which returns the port). */
function startChild(file, args, { env, cwd, ready, name, timeoutMs = 30_000 }) {
  const proc = spawn(file, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  const output = []
  // The last 200 lines, and every thread start (which the first 200 would push out of a long run's).
  const threadLines = []
  const keep = (line) => {
    output.push(line)
    if (output.length > 200) output.shift()
    if (isThreadStart(line)) threadLines.push(line)
  }
  createInterface({ input: proc.stderr }).on('line', keep)
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal)))
  const port = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in ${timeoutMs} ms:\n${output.join('\n')}`)), timeoutMs)
    createInterface({ input: proc.stdout }).on('line', (line) => {
      keep(line)
      const found = ready(line)
      if (found) {
        clearTimeout(timer)
        resolve(found)
      }
    })
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${code}) before listening:\n${output.join('\n')}`))
    })
  })
  const stop = async (signal = 'SIGTERM', graceMs = 15_000) => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill(signal)
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs)
      await exited
      clearTimeout(timer)
    }
  }
  return { proc, port, exited, output, threadLines, stop }
}

/**
 * A baseline server from bench/baselines: uws-raw, node-http, or uws-durable (the floor of a durable answer:
 * its segment file, zero-filled first, lives in a temp folder removed when it stops).
 */
export async function startBaseline(benchDir, name) {
  const args = [join(benchDir, 'baselines', `${name}.mjs`)]
  const env = { PATH: process.env.PATH ?? '' }
  let folder = null
  if (name === 'uws-durable') {
    folder = mkdtempSync(join(tmpdir(), 'skylark-bench-floor-'))
    args.push('0', join(folder, 'floor.seg'))
    env.FILL = '1'
  }
  const child = startChild(process.execPath, args, {
    env,
    name,
    ready: (line) => (line.startsWith('{"port"') ? JSON.parse(line).port : null),
    timeoutMs: 60_000,
  })
  const port = await child.port
  const stop = async () => {
    await child.stop('SIGKILL')
    if (folder) rmSync(folder, { recursive: true, force: true })
  }
  return { name, pid: child.proc.pid, port, url: `http://127.0.0.1:${port}`, stop }
}

/** The Node flags `npm start` and bin/skylark.js run the server with (test/unit/docs.test.ts keeps them equal). */
export const SERVER_NODE_ARGS = ['--max-semi-space-size=4', '--v8-pool-size=2', '--no-parallel-scavenge']
/** The environment they set for it (glibc's malloc, read at process start; same test). */
export const SERVER_PROCESS_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' }

/**
 * Starts `skylark serve` on a free port with a fresh data folder. The default project and an all-scopes
 * personal key come from `skylark bootstrap --json`, run before the server starts, as a user would.
 */
export async function startSkylark(root, { env = {}, nodeArgs = [], label = 'skylark' } = {}) {
  nodeArgs = [...SERVER_NODE_ARGS, ...nodeArgs]
  const dataDir = mkdtempSync(join(tmpdir(), 'skylark-bench-'))
  const cli = join(root, 'bin', 'skylark.js')
  const boot = JSON.parse(
    execFileSync(process.execPath, [cli, 'bootstrap', '--json', '--data-dir', dataDir], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    }),
  )
  const child = startChild(process.execPath, [...nodeArgs, cli, 'serve'], {
    cwd: dataDir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ...SERVER_PROCESS_ENV,
      ...env,
    },
    name: label,
    ready: (line) => (line.includes('"msg":"listening"') ? JSON.parse(line).port : null),
  })
  const port = await child.port
  const url = `http://127.0.0.1:${port}`
  return {
    pid: child.proc.pid,
    port,
    url,
    dataDir,
    boot,
    output: child.output,
    /** Its `thread started` log lines so far (bench/lib/profile.mjs threadRoles). */
    threadLines: child.threadLines,
    env,
    /** SIGTERM (graceful: lets a --cpu-prof profile be written) or SIGKILL (no drain wait), then remove the folder. */
    async stop({ graceful = false } = {}) {
      await child.stop(graceful ? 'SIGTERM' : 'SIGKILL', graceful ? 30_000 : 5_000)
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * ClickHouse for the run: the server at CLICKHOUSE_URL when set (databases created by the run are dropped at
 * the end), else a clickhouse-server from PATH in a temp folder (removed at the end), else null.
 */
export async function startClickHouse() {
  const query = (url) => (sql, body) => clickhouseQuery(url, sql, body)
  const external = process.env.CLICKHOUSE_URL
  if (external) {
    const url = external.replace(/\/$/, '')
    const databases = []
    const q = query(url)
    return {
      url,
      pid: null,
      external: true,
      version: (await q('SELECT version()')).trim(),
      query: q,
      database(name) {
        databases.push(name)
        return name
      },
      async destroy() {
        for (const db of databases) await q(`DROP DATABASE IF EXISTS ${db}`).catch(() => {})
      },
    }
  }
  const binary = clickhouseBinary()
  if (!binary) return null
  const prepared = await prepareClickHouse('skylark-bench-ch-', 4_000_000_000)
  const { dir, url } = prepared
  const proc = await spawnClickHouse(binary, prepared, 60_000)
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  const q = query(url)
  return {
    url,
    pid: proc.pid,
    external: false,
    version: (await q('SELECT version()')).trim(),
    query: q,
    database: (name) => name,
    async destroy() {
      if (proc.exitCode === null) {
        proc.kill('SIGTERM')
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
        await exited
        clearTimeout(timer)
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
