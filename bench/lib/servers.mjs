// The processes a run talks to: skylark itself (the compiled CLI, `skylark serve`, on a free port with a
// fresh temp DATA_DIR), the two baselines, and a throw-away ClickHouse like test/helpers/clickhouse.ts starts.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
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

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

export function clickhouseBinary() {
  const found = spawnSync('sh', ['-c', 'command -v clickhouse-server || ls /usr/sbin/clickhouse-server 2>/dev/null'], { encoding: 'utf8' })
  return found.stdout.trim().split('\n')[0] || null
}

const USERS_XML = `<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`

function configXml(dir, httpPort, tcpPort) {
  return `<yandex>
  <logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/error.log</errorlog><console>0</console></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <mark_cache_size>5368709</mark_cache_size>
  <max_concurrent_queries>50</max_concurrent_queries>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mlock_executable>false</mlock_executable>
</yandex>
`
}

/**
 * ClickHouse for the run: the server at CLICKHOUSE_URL when set (databases created by the run are dropped at
 * the end), else a clickhouse-server from PATH in a temp folder (removed at the end), else null.
 */
export async function startClickHouse() {
  const query = (url) => async (sql, body) => {
    const res = await fetch(`${url}/?query=${encodeURIComponent(sql)}`, { method: 'POST', body })
    const text = await res.text()
    if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${text.slice(0, 500)}`)
    return text
  }
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
  const dir = mkdtempSync(join(tmpdir(), 'skylark-bench-ch-'))
  const httpPort = await freePort()
  const tcpPort = await freePort()
  writeFileSync(join(dir, 'config.xml'), configXml(dir, httpPort, tcpPort))
  writeFileSync(join(dir, 'users.xml'), USERS_XML)
  const url = `http://127.0.0.1:${httpPort}`
  const proc = spawn(binary, [`--config-file=${join(dir, 'config.xml')}`], { cwd: dir, stdio: 'ignore' })
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      if ((await fetch(`${url}/ping`)).ok) break
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`clickhouse-server did not start (see ${dir}/error.log)`)
    await sleep(100)
  }
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
