/**
 * A real ClickHouse server for tests: `clickhouse-server` from PATH (Debian's package; CI installs it),
 * started on free ports in a temp folder, stopped or killed and restarted on demand (outage tests). Outside CI the
 * tests that need it are skipped with a message when the binary is missing; in CI that is a failure.
 */
import type { ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { clickhouseBinary, clickhouseQuery, prepareClickHouse, releasePorts, spawnClickHouse } from '../../scripts/clickhouse-local.mjs'
import { ClickHouseEventSink, ClickHouseEventStore, migrateClickHouse, type ClickHouseOptions } from '../../src/storage/events/index.js'

export interface TestClickHouse {
  readonly url: string
  readonly dir: string
  /** Run a query over HTTP and return the body text. */
  query(sql: string): Promise<string>
  stop(): Promise<void>
  /** SIGKILL, as in a crash. */
  kill(): Promise<void>
  start(): Promise<void>
  /** Kill and remove the folder. */
  destroy(): Promise<void>
}

/** Why ClickHouse tests can't run here, or null when they can. Throws in CI: skipping is not allowed there. */
export function clickhouseUnavailableReason(): string | null {
  if (clickhouseBinary()) return null
  if (process.env.CI) throw new Error('clickhouse-server is not installed, and CI must run the ClickHouse tests')
  return 'clickhouse-server is not on PATH (apt-get install clickhouse-server)'
}

export async function startClickHouse(): Promise<TestClickHouse> {
  const binary = clickhouseBinary()
  if (!binary) throw new Error('clickhouse-server not found')
  const prepared = await prepareClickHouse('skylark-ch-', 2_000_000_000)
  const { dir, url } = prepared
  let proc: ChildProcess | null = null

  const query = (sql: string): Promise<string> => clickhouseQuery(url, sql)

  const start = async (): Promise<void> => {
    proc = await spawnClickHouse(binary, prepared, 30_000)
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
    // Its data goes with it, so nothing is gained by a clean stop, which takes ClickHouse 18.16 about a second.
    destroy: async () => {
      await kill()
      await releasePorts(prepared)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A ClickHouse server with a migrated database, and the store's sink and reader on it; all closed after `t`. */
export async function clickhouseEventStore(t: { teardown(fn: () => unknown): void }, database: string) {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  return { ch, ...(await openClickHouseStore(t, { url: ch.url, database, user: 'default', password: '', cluster: null })) }
}

/** The database of `options` migrated, and the store's sink and reader on it; both closed after `t`. */
export async function openClickHouseStore(t: { teardown(fn: () => unknown): void }, options: ClickHouseOptions) {
  const features = await migrateClickHouse(options)
  const sink = new ClickHouseEventSink(options, features)
  const store = new ClickHouseEventStore(options, features)
  t.teardown(async () => {
    await sink.close()
    await store.close()
  })
  return { options, features, sink, store }
}
