/**
 * `skylark backup` under load. Four senders each keep one person's batches coming (`$set: {seq}` rising)
 * while the spool rotates 16 KB segments that the consumer deletes as it goes, and the command copies the
 * data folder meanwhile. A server started on the copy stores every event acknowledged before the command
 * started; each person's stored events are an unbroken run of `seq` from 1 (a spool segment deleted before it
 * was copied leaves a hole: the consumer's deletions ignored the hold); and its persons agree with its events
 * (events.db copied after the spool holds events whose person changes the copy has nowhere to take from, which
 * leaves a person's `seq` below its last stored event's). Both mistakes, made on purpose, failed every run.
 * On ClickHouse the events stay in ClickHouse, which goes on storing what the original takes after the copy:
 * the original is stopped, the copy started on the same database, and its persons are at least as new as
 * the events acknowledged before the command, with every event stored once.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { runCli, serverFor, type TestServer } from '../../helpers/server.js'
import { testDir } from '../../helpers/temp.js'
import { sleep, storedEvents, until } from './lib.js'

const PEOPLE = ['backup-a', 'backup-b', 'backup-c', 'backup-d']

/**
 * Sends one person's batches one after another (so their order is the spool's) until `stop()`; records the
 * acknowledged events and the person's last acknowledged `seq`.
 */
function sender(server: TestServer, person: string, acked: Set<string>, lastSeq: Map<string, number>) {
  let stopped = false
  const done = (async () => {
    for (let seq = 0; !stopped; ) {
      const batch = Array.from({ length: 20 }, () => {
        seq++
        return { event: 'backup', uuid: randomUUID(), distinct_id: person, properties: { seq, $set: { seq }, pad: 'b'.repeat(300) } }
      })
      const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
      if (res.status !== 200) continue
      for (const e of batch) acked.add(e.uuid)
      lastSeq.set(person, seq)
    }
  })()
  return async () => {
    stopped = true
    await done
  }
}

interface Stored {
  uuids: Set<string>
  /** Rows, before deduplication by uuid (ClickHouse's FINAL merges only rows of one sorting key). */
  rows: number
}

/** Where a test's events are stored, and how to read them back. */
interface Store {
  env: Record<string, string>
  inClickHouse: boolean
  stored(dataDir: string): Promise<Stored>
}

const sqlite: Store = {
  env: {},
  inClickHouse: false,
  stored: async (dataDir) => {
    const uuids = storedEvents(dataDir, "event = 'backup'").map((e) => e.uuid)
    return { uuids: new Set(uuids), rows: uuids.length }
  },
}

/** Per person in events.db: how many events, the lowest `seq` and the highest. */
function storedSeqs(dataDir: string): Map<string, { count: number; first: number; last: number }> {
  const db = new Database(join(dataDir, 'events.db'), { readonly: true, fileMustExist: true })
  try {
    db.pragma('busy_timeout = 5000')
    const rows = db
      .prepare(
        `SELECT distinct_id, COUNT(*) AS count, MIN(json_extract(properties, '$.seq')) AS first, MAX(json_extract(properties, '$.seq')) AS last
         FROM events WHERE event = 'backup' GROUP BY distinct_id`,
      )
      .all() as Array<{ distinct_id: string; count: number; first: number; last: number }>
    return new Map(rows.map(({ distinct_id, ...run }) => [distinct_id, run]))
  } finally {
    db.close()
  }
}

function clickhouse(url: string, query: (sql: string) => Promise<string>): Store {
  return {
    env: { CLICKHOUSE_URL: url, CLICKHOUSE_DATABASE: 'backup' },
    inClickHouse: true,
    stored: async () => {
      const uuids = (await query(`SELECT toString(uuid) FROM backup.events FINAL WHERE event = 'backup' FORMAT TabSeparated`)).trim().split('\n').filter(Boolean)
      return { uuids: new Set(uuids), rows: uuids.length }
    },
  }
}

const mainSegments = (dataDir: string) => readdirSync(join(dataDir, 'spool', 'main')).filter((n) => n.endsWith('.seg')).length

/**
 * Loads a server, backs it up meanwhile and starts a server on the copy (on ClickHouse, once the original has
 * stopped: both would share its database). Returns the copy's server, what it stored once every event
 * acknowledged before the command is there, and each person's last `seq` acknowledged before the command.
 */
async function backupUnderLoad(t: Test, store: Store) {
  // A person's events stay in the main lane (over the spike budget they would go to overflow, and the two lanes
  // are copied at different moments), so each person's stored events are a prefix of what it sent.
  const env = { ...store.env, SPOOL_SEGMENT_BYTES: '16KB', SPIKE_BURST: '1000000', SPIKE_RATE_PER_SEC: '1000000' }
  const server = await serverFor(t, { env })
  await until('the event store is connected', async () => (await server.request('GET', '/_readiness')).status === 200)
  const copy = join(testDir(t, 'skylark-backup-'), 'copy')
  // 20,000 other persons of 1 KB each make persons.db (and events.db) tens of MB, so their copies take long
  // enough for the consumer to move past a few segments before the spool is copied.
  const seeded: number[] = []
  for (let i = 0; i < 20; i++) {
    const batch = Array.from({ length: 1_000 }, (_, j) => ({ event: 'seed', distinct_id: `seed-${i}-${j}`, properties: { $set: { bio: 's'.repeat(1_000) } } }))
    seeded.push((await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })).status)
  }
  t.ok(seeded.every((status) => status === 200), 'the other persons are accepted')
  const acked = new Set<string>()
  const lastSeq = new Map<string, number>()
  const stops = PEOPLE.map((person) => sender(server, person, acked, lastSeq))
  await until('the spool has rotated', () => acked.size > 2_000, 20_000, 50)

  const before = new Set(acked)
  const seqBefore = new Map(lastSeq)
  const res = await runCli(['backup', '--to', copy, '--json'], { DATA_DIR: server.dataDir, ...store.env })
  await sleep(300)
  for (const stop of stops) await stop()
  t.equal(res.code, 0, res.stderr)
  const summary = JSON.parse(res.stdout)
  t.same(Object.keys(summary.databases).sort(), ['dead_letters.db', 'events.db', 'logs.db', 'management.db', 'metrics.db', 'persons.db'])
  t.ok(summary.spool.segments > 0, `${summary.spool.segments} spool segments copied (${summary.spool.bytes} bytes)`)
  t.equal(summary.events_in_clickhouse, store.inClickHouse)
  t.pass(`${before.size} events acknowledged before the command, ${acked.size} by the end of the load`)

  t.same(readdirSync(join(server.dataDir, 'spool', 'holds')), [], 'the hold is gone')
  await until('the server deletes consumed segments again', () => mainSegments(server.dataDir) <= 2, 20_000)
  if (store.inClickHouse) await server.stop()

  const node = await serverFor(t, { dataDir: copy, env: store.env })
  let stored = await store.stored(copy)
  await until(
    'every event acknowledged before the backup is stored',
    async () => {
      stored = await store.stored(copy)
      return [...before].every((uuid) => stored.uuids.has(uuid))
    },
    30_000,
  )
  t.pass(`${stored.uuids.size} events stored, ${stored.uuids.size - before.size} of them acknowledged after the command started`)
  t.ok([...stored.uuids].every((uuid) => acked.has(uuid)), 'and nothing that was not acknowledged')
  const personSeq = async (person: string) => {
    const res = await node.api('GET', `/api/projects/${node.boot.project_id}/persons/?distinct_id=${person}`)
    return res.body.results?.[0]?.properties?.seq as number | undefined
  }
  return { copy, seqBefore, personSeq }
}

t.test('a backup taken under load starts a server with every event acknowledged before it, and persons that agree with the events', async (t) => {
  const { copy, personSeq } = await backupUnderLoad(t, sqlite)
  for (const person of PEOPLE) {
    let seen: number | undefined
    await until(`${person}'s seq is its last stored event's`, async () => (seen = await personSeq(person)) === storedSeqs(copy).get(person)?.last, 10_000)
    t.pass(`${person}: seq ${seen} on the person and on its last stored event`)
  }
  for (const [person, run] of storedSeqs(copy)) t.same(run, { count: run.last, first: 1, last: run.last }, `${person}'s events have no hole`)
})

t.test('on ClickHouse, a copy started on the same database once the original stopped', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  const store = clickhouse(ch.url, ch.query)
  const { copy, seqBefore, personSeq } = await backupUnderLoad(t, store)
  // The events acknowledged before the command are in ClickHouse already (the original stored them), so the
  // copy's persons catch up after: its consumer replays the copied spool from the checkpoints of persons.db.
  for (const person of PEOPLE) {
    let seen: number | undefined
    await until(`${person}'s seq reaches what was acknowledged before the command`, async () => (seen = await personSeq(person)) !== undefined && seen >= seqBefore.get(person)!, 30_000)
    t.pass(`${person}: seq ${seen} on the person, ${seqBefore.get(person)} acknowledged before the command`)
  }
  const stored = await store.stored(copy)
  t.equal(stored.rows, stored.uuids.size, 'no event is stored twice')
})

t.test('backup refuses a folder with files in it, a folder that is no data folder, and no --to', async (t) => {
  const server = await serverFor(t)
  const bare = await runCli(['backup'], { DATA_DIR: server.dataDir })
  t.equal(bare.code, 2)
  t.match(bare.stderr, /backup needs --to DIR/)
  const taken = testDir(t, 'skylark-backup-taken-')
  writeFileSync(join(taken, 'keep'), 'mine')
  const refused = await runCli(['backup', '--to', taken], { DATA_DIR: server.dataDir })
  t.equal(refused.code, 2)
  t.match(refused.stderr, /not empty: a backup never overwrites/)
  t.same(readdirSync(taken), ['keep'], 'nothing in it was touched')

  const nowhere = await runCli(['backup', '--to', join(taken, 'copy')], { DATA_DIR: join(taken, 'no-such') })
  t.equal(nowhere.code, 1)
  t.match(nowhere.stderr, /backup failed: .* is not a skylark data folder/)
})
