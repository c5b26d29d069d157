/**
 * A real ClickHouse server for tests: `clickhouse-server` from PATH (Debian's package; CI installs it),
 * started on free ports in a temp folder, stopped or killed and restarted on demand (outage tests). Outside CI the
 * tests that need it are skipped with a message when the binary is missing; in CI that is a failure.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface TestClickHouse {
  readonly url: string
  readonly dir: string
  /** Run a query over HTTP and return the body text. */
  query(sql: string): Promise<string>
  stop(): Promise<void>
  /** SIGKILL, as in a crash. */
  kill(): Promise<void>
  start(): Promise<void>
  /** Stop and remove the folder. */
  destroy(): Promise<void>
}

export function clickhouseBinary(): string | null {
  const found = spawnSync('sh', ['-c', 'command -v clickhouse-server || ls /usr/sbin/clickhouse-server 2>/dev/null'], { encoding: 'utf8' })
  const path = found.stdout.trim().split('\n')[0]
  return path ? path : null
}

/** Why ClickHouse tests can't run here, or null when they can. Throws in CI: skipping is not allowed there. */
export function clickhouseUnavailableReason(): string | null {
  if (clickhouseBinary()) return null
  if (process.env.CI) throw new Error('clickhouse-server is not installed, and CI must run the ClickHouse tests')
  return 'clickhouse-server is not on PATH (apt-get install clickhouse-server)'
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

function configXml(dir: string, httpPort: number, tcpPort: number): string {
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

const USERS_XML = `<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`

export async function startClickHouse(): Promise<TestClickHouse> {
  const binary = clickhouseBinary()
  if (!binary) throw new Error('clickhouse-server not found')
  const dir = mkdtempSync(join(tmpdir(), 'skylark-ch-'))
  const httpPort = await freePort()
  const tcpPort = await freePort()
  writeFileSync(join(dir, 'config.xml'), configXml(dir, httpPort, tcpPort))
  writeFileSync(join(dir, 'users.xml'), USERS_XML)
  const url = `http://127.0.0.1:${httpPort}`
  let proc: ChildProcess | null = null

  const query = async (sql: string): Promise<string> => {
    const res = await fetch(`${url}/?query=${encodeURIComponent(sql)}`, { method: 'POST' })
    const text = await res.text()
    if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${text}`)
    return text
  }

  const start = async (): Promise<void> => {
    proc = spawn(binary, [`--config-file=${join(dir, 'config.xml')}`], { cwd: dir, stdio: 'ignore' })
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline) {
      try {
        const res = await fetch(`${url}/ping`)
        if (res.ok) return
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error('clickhouse-server did not start within 30 s')
  }

  /** SIGTERM (ClickHouse shuts down cleanly, SIGKILL after 10 s) or SIGKILL (a crash: nothing it held in memory survives). */
  const end = async (signal: 'SIGTERM' | 'SIGKILL'): Promise<void> => {
    const p = proc
    proc = null
    if (!p || p.exitCode !== null) return
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve())
      p.kill(signal)
      setTimeout(() => p.kill('SIGKILL'), 10_000).unref()
    })
  }
  const stop = () => end('SIGTERM')
  const kill = () => end('SIGKILL')

  await start()
  return {
    url,
    dir,
    query,
    stop,
    kill,
    start,
    destroy: async () => {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
