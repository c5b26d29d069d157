/**
 * The definitions back-fill against the running server, on either event store: events are captured and
 * stored, persons.db is taken back to version 3 (no definition tables, no back-fill state: a data folder
 * from before migration 4), and the next start derives the definitions from the stored events while new
 * ones are recorded, ends the same when killed while it runs, resumes from a cursor left mid-way, and never
 * runs again once done.
 */
import type { Test } from 'tap'
import { openDatabase } from '../../../src/storage/index.js'
import { startServer, type TestServer } from '../../helpers/server.js'
import { readUntil } from '../../helpers/wait.js'

export interface StoreUnderTest {
  name: string
  env: () => Record<string, string>
  /** Told the data folder once the first server has made it. */
  onDataDir: (dir: string) => void
  /**
   * A bound and cursor as the store's scan writes them: the bound at the last event before `after_done`, the
   * cursor just past every event of `first` (the first name in the store's order).
   */
  cursorPast: (teamId: number) => Promise<{ first: string; bound: string; cursor: string }>
  /** The earliest and latest `created_at` (ms) of the stored events named `name`. */
  createdRange: (teamId: number, name: string) => Promise<[number, number]>
}

const DAY_MS = 86_400_000
const DONE_LOG = 'event and property definitions back-filled'
const START_LOG = 'back-filling event and property definitions from the event store'

/** Three batches, so the stored events have three processing times; ≈2,400 events, more than two pages. */
function batches(): unknown[][] {
  const backdated = new Date(Date.now() - 3 * DAY_MS).toISOString()
  // First processed, last in ClickHouse's key order (name), with a Numeric first value.
  const first = [{ event: 'z_event', properties: { distinct_id: 'u0', flavour: 5 } }]
  const bulk: unknown[] = []
  for (let i = 0; i < 2000; i++) bulk.push({ event: 'viewed', properties: { distinct_id: `u${i % 50}`, idx: i, section: 'docs' } })
  for (let i = 0; i < 300; i++) {
    bulk.push({ event: 'purchase', properties: { distinct_id: `u${i % 50}`, amount: 9.5, paid: true, paid_at: '2024-05-01T10:00:00Z', note: null, $set: { plan: 'pro' } } })
  }
  for (let i = 0; i < 50; i++) bulk.push({ event: 'backdated', timestamp: backdated, properties: { distinct_id: 'u1', old_key: 'x' } })
  bulk.push({ event: '$groupidentify', properties: { distinct_id: 'u1', $group_type: 'company', $group_key: 'acme', $group_set: { seats: 12 } } })
  // Processed last, first in ClickHouse's key order: its text value must not decide flavour's type.
  const last = [{ event: 'a_event', properties: { distinct_id: 'u0', flavour: 'mint' } }]
  return [first, bulk, last]
}

/** persons.db as a build before migration 4 left it: no definitions, no back-fill state (nor the later cookieless tables). */
function downgradeToVersion3(dataDir: string): void {
  const db = openDatabase(`${dataDir}/persons.db`)
  db.exec(`DROP TABLE event_definitions; DROP TABLE property_definitions; DROP TABLE event_properties;
    DROP TABLE definitions_backfill; DROP TABLE definitions_backfill_types;
    DROP TABLE cookieless_salts; DROP TABLE cookieless_identifies; DROP TABLE cookieless_sessions;
    DELETE FROM schema_migrations WHERE version >= 4`)
  db.close()
}

function backfillRow(dataDir: string): { bound: string | null; cursor: string | null; done_at: string | null } {
  const db = openDatabase(`${dataDir}/persons.db`, { readonly: true })
  try {
    return db.prepare('SELECT bound, cursor, done_at FROM definitions_backfill').get() as never
  } finally {
    db.close()
  }
}

export function backfillSuite(t: Test, store: StoreUnderTest): void {
  t.test(`definitions back-fill (${store.name})`, async (t) => {
    let server: TestServer = await startServer({ env: store.env() })
    const dataDir = server.dataDir
    store.onDataDir(dataDir)
    t.teardown(async () => {
      await server.stop()
      server.cleanup()
    })
    const teamId = server.boot.project_id
    const restart = async () => {
      await server.stop()
      server = await startServer({ dataDir, env: store.env() })
    }
    const get = async (path: string) => (await server.api('GET', `/api/projects/${teamId}${path}`)).body
    const capture = async (batch: unknown[]) => {
      const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
      if (res.status !== 200) throw new Error(`batch answered ${res.status}`)
    }
    const eventNames = async () => (await get('/event_definitions/?limit=100')).results.map((d: { name: string }) => d.name)
    const properties = async (query: string) =>
      Object.fromEntries((await get(`/property_definitions/?limit=500&${query}`)).results.map((d: any) => [d.name, d.property_type]))
    const logged = (msg: string) => server.stdout.some((line) => line.includes(`"msg":"${msg}"`))
    /** What the uninterrupted back-fill (with the one event recorded meanwhile) ended with. */
    let complete: unknown = null

    const [first, bulk, last] = batches()
    await capture(first)
    await readUntil('the first event recorded', eventNames, (names) => names.includes('z_event'))
    await capture(bulk)
    await readUntil('the bulk recorded', eventNames, (names) => names.length === 5)
    // ClickHouse 18.16 keeps created_at in whole seconds: the first and last events must not share one.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    await capture(last)
    await readUntil('the last event recorded', eventNames, (names) => names.length === 6)
    await readUntil('the back-fill of a new folder done', async () => backfillRow(dataDir).done_at, (done) => done !== null)
    await server.stop()
    downgradeToVersion3(dataDir)

    t.test('an upgraded folder gets the definitions of the events stored before', async (t) => {
      server = await startServer({ dataDir, env: store.env() })
      // Recorded by the consumer while the back-fill runs: stored later, so its type does not win.
      await capture([{ event: 'purchase', properties: { distinct_id: 'u9', amount: 'ten', fresh_key: true } }])
      await readUntil('the back-fill done', async () => backfillRow(dataDir).done_at, (done) => done !== null, 60_000)
      await readUntil('the new event recorded', () => properties('type=event'), (event) => 'fresh_key' in event)
      await readUntil('the back-fill logged', async () => logged(START_LOG) && logged(DONE_LOG), (both) => both)
      t.same(await eventNames(), ['$groupidentify', 'a_event', 'backdated', 'purchase', 'viewed', 'z_event'].sort())
      const event = await properties('type=event')
      t.match(event, { idx: 'Numeric', section: 'String', amount: 'Numeric', paid: 'Boolean', paid_at: 'DateTime', note: null, old_key: 'String', flavour: 'Numeric' })
      t.equal(event.fresh_key, 'Boolean', 'what the consumer records meanwhile is kept')
      t.match(await properties('type=person'), { plan: 'String' })
      t.same(Object.keys(await properties('type=group&group_type_index=0')), ['seats'])
      const purchaseOnly = await get(`/property_definitions/?limit=100&event_names=${encodeURIComponent('["purchase"]')}&filter_by_event_names=true`)
      t.same(purchaseOnly.results.map((d: any) => d.name), ['$ip', 'amount', 'fresh_key', 'note', 'paid', 'paid_at'], 'keys paired with their events')

      const defs = Object.fromEntries((await get('/event_definitions/?limit=100')).results.map((d: any) => [d.name, d]))
      const [viewedFirst] = await store.createdRange(teamId, 'viewed')
      t.equal(defs.viewed.created_at, new Date(viewedFirst).toISOString(), 'first seen: when the first event was processed')
      const [zFirst, zLast] = await store.createdRange(teamId, 'z_event')
      t.equal(defs.z_event.created_at, new Date(zFirst).toISOString())
      t.equal(defs.z_event.last_seen_at, new Date(zLast).toISOString())
      const [purchaseFirst] = await store.createdRange(teamId, 'purchase')
      t.equal(defs.purchase.created_at, new Date(purchaseFirst).toISOString(), 'the earlier of the two first sightings')
      t.ok(Date.parse(defs.purchase.last_seen_at) > Date.parse(defs.z_event.last_seen_at), 'last seen: the event recorded since')
      complete = { names: await eventNames(), event, person: await properties('type=person') }
    })

    t.test('killed while it runs, it finishes after the restart with the same result', async (t) => {
      await server.stop()
      downgradeToVersion3(dataDir)
      server = await startServer({ dataDir, env: store.env() })
      // Wherever the kill lands (before the first page, or between slices), the next start must end the same.
      // Killed as soon as a page is done (mostly mid-way; if it is already over, the check below still holds).
      for (let row = backfillRow(dataDir); row.cursor === null && row.done_at === null; row = backfillRow(dataDir)) await new Promise((r) => setTimeout(r, 2))
      await server.kill()
      const { done_at: doneAtKill, cursor } = backfillRow(dataDir)
      t.comment(`killed with cursor ${cursor}, done: ${doneAtKill !== null}`)
      server = await startServer({ dataDir, env: store.env() })
      await readUntil('the back-fill done', async () => backfillRow(dataDir).done_at, (done) => done !== null, 60_000)
      t.same({ names: await eventNames(), event: await properties('type=event'), person: await properties('type=person') }, complete)
    })

    t.test('it does not run again', async (t) => {
      const db = openDatabase(`${dataDir}/persons.db`)
      db.prepare("DELETE FROM event_definitions WHERE name = 'viewed'").run()
      db.close()
      await restart()
      await capture([{ event: 'after_done', properties: { distinct_id: 'u1' } }])
      await readUntil('the new event recorded', eventNames, (names) => names.includes('after_done'))
      t.notOk(logged(START_LOG))
      t.notOk((await eventNames()).includes('viewed'), 'what was deleted by hand stays deleted')
    })

    t.test('a back-fill stopped half-way resumes from its cursor', async (t) => {
      await server.stop()
      // The state of a run that stopped past every event of the first name, its bound before `after_done`.
      const { first: skipped, bound, cursor } = await store.cursorPast(teamId)
      const db = openDatabase(`${dataDir}/persons.db`)
      db.exec('DELETE FROM event_definitions; DELETE FROM property_definitions; DELETE FROM event_properties')
      db.prepare('UPDATE definitions_backfill SET bound = ?, cursor = ?, done_at = NULL').run(bound, cursor)
      db.close()
      await restart()
      await readUntil('the back-fill done', async () => backfillRow(dataDir).done_at, (done) => done !== null, 60_000)
      const names = await eventNames()
      t.notOk(names.includes(skipped), `${skipped}, before the cursor, is not read again`)
      t.ok(names.includes('viewed') && names.includes('purchase'), 'the rest is')
      t.notOk(names.includes('after_done'), 'nor what was stored after the bound')
    })
  })
}
