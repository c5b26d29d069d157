// The sinks' own insert ceilings, for the rows the /batch/ scenario stored: sampled from the store after the
// scenario, repeated with fresh uuids, written without the service in between.
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { round } from './system.mjs'

const require = createRequire(import.meta.url)
const SAMPLE = 1000
/** A module of the service as built (dist/), so the ceilings use its own schema and ids. */
const dist = (root, path) => import(pathToFileURL(join(root, 'dist', 'src', path)).href)

/** Up to SAMPLE stored rows, as the store holds them. */
export async function sampleRows(server, sink, clickhouse) {
  if (sink === 'clickhouse') {
    const text = await clickhouse.query(`SELECT * FROM ${server.env.CLICKHOUSE_DATABASE}.events LIMIT ${SAMPLE} FORMAT JSONEachRow`)
    return text.split('\n').filter(Boolean).map((line) => JSON.parse(line))
  }
  const Database = require('better-sqlite3')
  const db = new Database(join(server.dataDir, 'events.db'), { readonly: true, fileMustExist: true })
  try {
    return db.prepare(`SELECT * FROM events LIMIT ${SAMPLE}`).all()
  } finally {
    db.close()
  }
}

/**
 * A ceiling is the best of its samples: nothing makes an insert faster than the sink can go, and a slower one
 * shared the machine with something. The median had let one run's ClickHouse ceiling read 59.9 k rows/s from
 * samples of 81.6 k, 59.9 k and 59.1 k, and /batch/ 100 0.85× of it (0.63× of the best).
 */
const best = (values) => Math.max(...values)

/**
 * SQLite: a fresh events.db migrated with the service's own migrations (dist/), the service's prepared
 * `INSERT OR IGNORE`, all `rows` in one transaction; WAL + synchronous=NORMAL and the events file's page size
 * through the service's openDatabase. The best rows/s of `repeats` fresh files. The rows get what the service
 * gives them: UUIDv7s, ordered in time as capture's are (random v4s read ≈5 % lower, the unique index taking
 * them all over), and the insert thread's blocks.
 */
export async function sqliteCeiling(root, sample, rows, repeats) {
  const { openDatabase, migrate } = await dist(root, 'storage/sqlite/database.js')
  const { EVENTS_MIGRATIONS, EVENTS_PAGE_SIZE, EVENTS_BLOCK_ROWS } = await dist(root, 'storage/sqlite/migrations/events.js')
  const { uuidv7 } = await dist(root, 'common/ids.js')
  const columns = ['block', 'uuid', 'team_id', 'event', 'distinct_id', 'person_id', 'properties', 'timestamp', 'created_at', 'group_0', 'group_1', 'group_2', 'group_3', 'group_4', 'elements_chain']
  const params = []
  for (let i = 0; i < rows; i++) {
    const row = sample[i % sample.length]
    params.push(columns.map((c) => (c === 'uuid' ? uuidv7() : c === 'block' ? Math.floor(i / EVENTS_BLOCK_ROWS) : row[c])))
  }
  const rates = []
  const windows = []
  const bytes = sample.reduce((n, r) => n + r.properties.length, 0) / sample.length
  for (let r = 0; r < repeats; r++) {
    const dir = mkdtempSync(join(tmpdir(), 'skylark-bench-sqlite-'))
    const db = openDatabase(join(dir, 'events.db'), { pageSize: EVENTS_PAGE_SIZE })
    try {
      migrate(db, EVENTS_MIGRATIONS)
      const insert = db.prepare(`INSERT OR IGNORE INTO events (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`)
      const writeAll = db.transaction(() => {
        for (const p of params) insert.run(...p)
      })
      const start = performance.now()
      const from = Date.now()
      writeAll()
      rates.push(rows / ((performance.now() - start) / 1000))
      windows.push([from, Date.now()])
      for (const p of params) p[1] = uuidv7()
    } finally {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
  return { sink: 'sqlite', rows, repeats, rowsPerS: round(best(rates)), allRowsPerS: rates.map((x) => round(x)), windows, avgPropertiesBytes: round(bytes) }
}

/**
 * Waits (up to `maxMs`) until the server runs no background merges, which the /batch/ scenarios' hundreds of
 * parts can start, so a sample does not share the cores with them. Returns the merges still running then.
 */
async function waitForMerges(clickhouse, maxMs = 120_000) {
  const deadline = Date.now() + maxMs
  for (;;) {
    const running = Number((await clickhouse.query('SELECT count() FROM system.merges')).trim())
    if (running === 0 || Date.now() >= deadline) return running
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

/**
 * ClickHouse: a table created by the service's own migrateClickHouse (dist/), one HTTP INSERT of `rows`
 * pre-serialised JSONEachRow lines (the sampled rows with fresh UUIDv7s, as capture gives), each sample once the server has no
 * merges running. The best of `repeats` fresh databases after one warm-up insert that is not counted: the
 * server's first large insert was the slowest sample in every run (31.5 k, 44.6 k rows/s against 55–94 k for
 * the two after it, no merges running), as if it paid for memory it then kept.
 */
export async function clickhouseCeiling(root, clickhouse, sample, rows, repeats, dbPrefix) {
  const { migrateClickHouse } = await dist(root, 'storage/events/clickhouse-schema.js')
  const { uuidv7 } = await dist(root, 'common/ids.js')
  const rates = []
  const windows = []
  const mergesAtStart = []
  let bodyBytes = 0
  let warmupRowsPerS = null
  for (let r = -1; r < repeats; r++) {
    const database = clickhouse.database(`${dbPrefix}_ceiling_${r < 0 ? 'warmup' : r}`)
    await migrateClickHouse({ url: clickhouse.url, database, user: 'default', password: '', cluster: null })
    const lines = []
    for (let i = 0; i < rows; i++) lines.push(JSON.stringify({ ...sample[i % sample.length], uuid: uuidv7() }))
    // Encoded before the clock starts: a 250 MB string's UTF-8 encoding inside the request is client work.
    const body = Buffer.from(lines.join('\n') + '\n')
    bodyBytes = body.length
    const merges = await waitForMerges(clickhouse)
    const start = performance.now()
    const from = Date.now()
    await clickhouse.query(`INSERT INTO ${database}.events FORMAT JSONEachRow`, body)
    const rate = rows / ((performance.now() - start) / 1000)
    if (r < 0) warmupRowsPerS = round(rate)
    else {
      rates.push(rate)
      windows.push([from, Date.now()])
      mergesAtStart.push(merges)
    }
    const stored = Number((await clickhouse.query(`SELECT count() FROM ${database}.events`)).trim())
    if (stored !== rows) throw new Error(`ClickHouse ceiling: inserted ${rows} rows, table holds ${stored}`)
  }
  return { sink: 'clickhouse', rows, repeats, rowsPerS: round(best(rates)), allRowsPerS: rates.map((x) => round(x)), windows, bytesPerRow: round(bodyBytes / rows), warmupRowsPerS, mergesAtStart }
}
