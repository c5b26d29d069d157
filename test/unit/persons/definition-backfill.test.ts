import t from 'tap'
import { DefinitionBackfill, DefinitionRecorder } from '../../../src/persons/index.js'
import { T0, TEAM, ev, harness } from './fixtures.js'

const HOUR = 3_600_000
const iso = (ms: number) => new Date(ms).toISOString()
const stored = (event: string, created: number, properties: Record<string, unknown>) => ({ team_id: TEAM, event, properties: JSON.stringify(properties), created })

function setup() {
  const h = harness()
  const backfill = new DefinitionBackfill(h.db)
  const live = new DefinitionRecorder(h.db)
  return {
    backfill,
    db: h.db,
    /** The consumer records an event processed at `now`. */
    record: (now: number, event: ReturnType<typeof ev>) =>
      h.db.transaction(() => {
        live.observe([event], h.stage.process([event]), now)
        live.write()
      })(),
    event: (name: string) => h.db.prepare('SELECT created_at, last_seen_at FROM event_definitions WHERE name = ?').get(name) as { created_at: string; last_seen_at: string },
    type: (name: string, kind = 1) =>
      h.db.prepare('SELECT property_type AS type, is_numerical AS numerical FROM property_definitions WHERE name = ? AND type = ?').get(name, kind) as { type: string | null; numerical: number },
  }
}

t.test('stored events merge into what the consumer recorded since, as if recorded when processed', async (t) => {
  const s = setup()
  s.record(T0 + 5 * HOUR, ev('purchase', 'u1', { amount: 'ten', fresh: true }))
  s.backfill.begin('100', T0)
  s.backfill.apply([stored('purchase', T0, { amount: 9.5, $set: { plan: 'pro' } }), stored('purchase', T0 + HOUR, { amount: 3 })], null)
  t.same(s.event('purchase'), { created_at: iso(T0), last_seen_at: iso(T0 + 5 * HOUR) }, 'first seen the earlier, last seen the later')
  t.same(s.type('amount'), { type: 'Numeric', numerical: 1 }, "the earlier event's type replaces the consumer's")
  t.equal(s.type('fresh').type, 'Boolean', 'what only the consumer saw stays')
  t.equal(s.type('plan', 2).type, 'String', 'person properties from the stored $set')
  t.same(s.backfill.state(), { bound: '100', cursor: null, done: false })
})

t.test("a type from a later page's earlier event wins; from a later event it does not", async (t) => {
  const s = setup()
  s.backfill.begin('9', T0)
  s.backfill.apply([stored('b', T0 + 2 * HOUR, { flavour: 'mint' })], '1')
  t.equal(s.type('flavour').type, 'String')
  s.backfill.apply([stored('a', T0 + HOUR, { flavour: 5 })], '2')
  t.equal(s.type('flavour').type, 'Numeric')
  s.backfill.apply([stored('c', T0 + 3 * HOUR, { flavour: true }), stored('c', T0 + 3 * HOUR, { flavour: 'x' })], '3')
  t.equal(s.type('flavour').type, 'Numeric')
  s.backfill.apply([stored('a', T0 + HOUR, { flavour: 5 })], '3')
  t.equal(s.type('flavour').type, 'Numeric', 'a page done again changes nothing')
  t.equal(s.backfill.state().cursor, '3')
  s.backfill.finish(T0 + 4 * HOUR)
  t.same(s.backfill.state(), { bound: '9', cursor: '3', done: true })
  t.equal(s.db.prepare('SELECT COUNT(*) FROM definitions_backfill_types').pluck().get(), 0, 'its bookkeeping is gone')
})

t.test('an empty store finishes at once; text that is no JSON object defines nothing', async (t) => {
  const s = setup()
  s.backfill.begin(null, T0)
  t.equal(s.backfill.state().done, true)
  const other = setup()
  other.backfill.apply([{ team_id: TEAM, event: 'x', properties: '[1]', created: T0 }, { team_id: TEAM, event: 'y', properties: '{', created: T0 }], null)
  t.equal(other.db.prepare('SELECT COUNT(*) FROM event_definitions').pluck().get(), 0)
})
