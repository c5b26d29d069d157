import t from 'tap'
import { DefinitionRecorder } from '../../../src/persons/index.js'
import type { CapturedEvent } from '../../../src/ingestion/types.js'
import { FakeGeoIp, T0, TEAM, ev, harness, type Harness } from './fixtures.js'

const HOUR = 3_600_000

interface Setup {
  h: Harness
  recorder: DefinitionRecorder
  /** Processes the events and records their definitions at `now`, in one transaction, as the consumer does. */
  record(now: number, ...events: CapturedEvent[]): void
  /** How many statements changed rows in the last record(). */
  changes(): number
  events(): Array<{ name: string; created_at: string; last_seen_at: string }>
  properties(kind?: number): Array<{ name: string; property_type: string | null; is_numerical: number; group_type_index: number }>
  pairs(): string[]
}

function setup(options: { geo?: boolean } = {}): Setup {
  const h = harness({ geoip: options.geo ? new FakeGeoIp() : null })
  const recorder = new DefinitionRecorder(h.db)
  let before = 0
  let after = 0
  const tx = h.db.transaction((now: number, events: CapturedEvent[]) => {
    const outcomes = h.stage.process(events)
    recorder.observe(events, outcomes, now)
    before = h.db.prepare('SELECT total_changes()').pluck().get() as number
    recorder.write()
    after = h.db.prepare('SELECT total_changes()').pluck().get() as number
  })
  return {
    h,
    recorder,
    record: (now, ...events) => tx(now, events),
    changes: () => after - before,
    events: () => h.db.prepare('SELECT name, created_at, last_seen_at FROM event_definitions ORDER BY name').all() as never,
    properties: (kind = 1) =>
      h.db.prepare('SELECT name, property_type, is_numerical, group_type_index FROM property_definitions WHERE type = ? ORDER BY group_type_index, name').all(kind) as never,
    pairs: () => (h.db.prepare('SELECT event || \' \' || property AS p FROM event_properties ORDER BY event, property').all() as Array<{ p: string }>).map((r) => r.p),
  }
}

t.test('an event records its name, its property keys with the type of their first value, and which event each was seen on', async (t) => {
  const s = setup()
  s.record(T0, ev('signed up', 'u1', { plan: 'pro', seats: 3, trial: true, ends_at: '2024-05-01T00:00:00Z', extra: null }))
  t.same(s.events(), [{ name: 'signed up', created_at: new Date(T0).toISOString(), last_seen_at: new Date(T0).toISOString() }])
  t.same(
    s.properties().map((p) => [p.name, p.property_type, p.is_numerical]),
    [['ends_at', 'DateTime', 0], ['extra', null, 0], ['plan', 'String', 0], ['seats', 'Numeric', 1], ['trial', 'Boolean', 0]],
  )
  t.same(s.pairs(), ['signed up ends_at', 'signed up extra', 'signed up plan', 'signed up seats', 'signed up trial'])

  // A later value of another type changes nothing; a key first seen as null gets its type from the first telling value.
  s.record(T0 + 1000, ev('signed up', 'u2', { plan: 7, seats: 'many', trial: 'no', ends_at: 'soon', extra: 42 }))
  t.same(
    s.properties().map((p) => [p.name, p.property_type]),
    [['ends_at', 'DateTime'], ['extra', 'Numeric'], ['plan', 'String'], ['seats', 'Numeric'], ['trial', 'Boolean']],
  )
})

t.test('known names cost no write; last_seen_at moves once an hour per event name', async (t) => {
  const s = setup()
  s.record(T0, ev('view', 'u1', { a: 1, b: 'x' }))
  s.record(T0 + 60_000, ev('view', 'u1', { a: 2, b: 'y' }), ev('view', 'u2', { b: 'z', a: 3 }))
  t.equal(s.changes(), 0, 'the same keys again: nothing written')
  t.equal(s.events()[0].last_seen_at, new Date(T0).toISOString())

  s.record(T0 + HOUR, ev('view', 'u1', { a: 4 }))
  t.equal(s.changes(), 1, 'the next hour: one update of last_seen_at')
  t.same(s.events(), [{ name: 'view', created_at: new Date(T0).toISOString(), last_seen_at: new Date(T0 + HOUR).toISOString() }])

  s.record(T0 + HOUR + 1000, ev('view', 'u1', { a: 5, c: true }))
  t.equal(s.changes(), 2, 'a new key: its definition and its pairing with the event')
  s.record(T0 + HOUR + 2000, ev('click', 'u1', { a: 5 }))
  t.equal(s.changes(), 2, 'a known key on a new event: the event and the pairing, not the definition again')
  t.same(s.pairs(), ['click a', 'view a', 'view b', 'view c'])
})

t.test('$set and $set_once keys are person properties, with the initial and GeoIP keys the stored event carries', async (t) => {
  const s = setup({ geo: true })
  s.record(T0, ev('$pageview', 'u1', { $ip: '81.2.69.142', $browser: 'Firefox', $set: { email: 'a@b.c', age: 30 }, $set_once: { first_seen: '2024-01-01' } }))
  const person = s.properties(2).map((p) => [p.name, p.property_type])
  for (const expected of [
    ['email', 'String'],
    ['age', 'Numeric'],
    ['first_seen', 'DateTime'],
    ['$browser', 'String'],
    ['$initial_browser', 'String'],
    ['$geoip_country_code', 'String'],
    ['$initial_geoip_city_name', 'String'],
    ['$geoip_postal_code', null],
  ]) {
    t.ok(person.some((p) => p[0] === expected[0] && p[1] === expected[1]), `person property ${expected[0]}: ${expected[1]}`)
  }
  const event = s.properties(1).map((p) => p.name)
  t.ok(event.includes('$geoip_country_code') && event.includes('$ip') && event.includes('$browser'), "the GeoIP keys are the event's too")
  t.notOk(event.includes('$set') || event.includes('$set_once') || event.includes('email'), '$set and its keys are not event properties')
})

t.test('a personless event records no person properties', async (t) => {
  const s = setup()
  s.record(T0, ev('ping', 'anon', { $process_person_profile: false, $set: { email: 'x' }, n: 1 }))
  t.same(s.properties(2), [])
  t.same(s.properties(1).map((p) => p.name), ['$process_person_profile', 'n'])
})

t.test('$groupidentify records its name and its $group_set keys as that group type properties, nothing else', async (t) => {
  const s = setup()
  s.record(
    T0,
    ev('$groupidentify', 'u1', { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme', employees: 50 } }),
    ev('$groupidentify', 'u1', { $group_type: 'team', $group_key: 't1', $group_set: { size: 'big' } }),
  )
  t.same(s.events().map((e) => e.name), ['$groupidentify'])
  t.same(s.properties(1), [], 'no event properties')
  t.same(
    s.properties(3).map((p) => [p.group_type_index, p.name, p.property_type]),
    [[0, 'employees', 'Numeric'], [0, 'name', 'String'], [1, 'size', 'String']],
  )
})

t.test('what PostHog leaves out: special keys, $feature/ pairings, too-long names, its own events, events with over 10,000 updates', async (t) => {
  const s = setup()
  const long = 'k'.repeat(201)
  s.record(
    T0,
    ev('e', 'u1', { $groups: { company: 'acme' }, $unset: ['x'], '$feature/beta': true, [long]: 1, ['é'.repeat(101)]: 2, ok: 1 }),
    ev('$$plugin_metrics', 'u1', { a: 1 }),
    ev('n'.repeat(201), 'u1', { a: 1 }),
  )
  t.same(s.events().map((e) => e.name), ['e'])
  t.same(s.properties().map((p) => [p.name, p.property_type]), [['$feature/beta', 'String'], ['ok', 'Numeric']], '$group_0 too is left out')
  t.same(s.pairs(), ['e ok'], 'a flag key is not paired with the event')

  const wide: Record<string, number> = {}
  for (let i = 0; i < 5000; i++) wide[`k${i}`] = i
  s.record(T0, ev('wide', 'u1', wide))
  t.notOk(s.events().some((e) => e.name === 'wide'), '1 + 2 × 5,000 updates: nothing recorded')
})

t.test('NUL in a name is stored as U+FFFD; projects are kept apart', async (t) => {
  const s = setup()
  s.record(T0, ev('a\u0000b', 'u1', { 'k\u0000': 1 }), ev('a\u0000b', 'u1', { k: 1 }, { team_id: TEAM + 1 }))
  t.same(s.h.db.prepare('SELECT team_id, name FROM event_definitions ORDER BY team_id').all(), [
    { team_id: TEAM, name: 'a\uFFFDb' },
    { team_id: TEAM + 1, name: 'a\uFFFDb' },
  ])
  t.same(s.h.db.prepare('SELECT team_id, name FROM property_definitions ORDER BY team_id').all(), [
    { team_id: TEAM, name: 'k\uFFFD' },
    { team_id: TEAM + 1, name: 'k' },
  ])
})

t.test('after a rollback reset() forgets what memory held, and the events record again', async (t) => {
  const s = setup()
  s.h.db.exec('SAVEPOINT outer')
  s.record(T0, ev('lost', 'u1', { a: 1 }))
  s.h.db.exec('ROLLBACK TO outer')
  s.h.db.exec('RELEASE outer')
  t.same(s.events(), [])
  s.recorder.reset()
  s.record(T0 + 1000, ev('lost', 'u1', { a: 1 }))
  t.same(s.events().map((e) => e.name), ['lost'])
  t.same(s.properties().map((p) => p.name), ['a'])

  // A new recorder (a restart) over the same rows writes nothing new and keeps created_at.
  const again = new DefinitionRecorder(s.h.db)
  s.h.db.transaction(() => {
    const events = [ev('lost', 'u1', { a: 'text' })]
    again.observe(events, s.h.stage.process(events), T0 + 2 * HOUR)
    again.write()
  })()
  t.same(s.events(), [{ name: 'lost', created_at: new Date(T0 + 1000).toISOString(), last_seen_at: new Date(T0 + 2 * HOUR).toISOString() }])
  t.same(s.properties().map((p) => [p.name, p.property_type]), [['a', 'Numeric']], 'the first type stays')
})
