/**
 * A behavioural cohort's sequence (`performed_event_sequence`): the check of one person's times, the stores'
 * per-distinct-id times of the two events (alike on SQLite and ClickHouse), and the persons.db condition that
 * gathers a person's ids before checking.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { compileSqliteProperties, registerFilterFunctions, sequenceHolds, type EventRow } from '../../../src/storage/events/index.js'
import { openDatabase } from '../../../src/storage/sqlite/database.js'
import { compileSearchRegex } from '../../../src/flags/index.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores } from '../../helpers/event-stores.js'

const TEAM = 8
const HOUR = 3_600_000

t.test('a sequence holds when a second event follows a first within the window, ties included', async (t) => {
  t.ok(sequenceHolds([0], [HOUR], HOUR), 'exactly the window after')
  t.notOk(sequenceHolds([0], [HOUR + 1], HOUR), 'a millisecond late')
  t.ok(sequenceHolds([5], [5], HOUR), 'at the same time')
  t.notOk(sequenceHolds([HOUR], [0], HOUR), 'before the first one')
  t.ok(sequenceHolds([0, 10 * HOUR], [3 * HOUR, 10.5 * HOUR], HOUR), 'the nearest first event before each second one')
  t.notOk(sequenceHolds([], [1], HOUR))
  t.notOk(sequenceHolds([1], [], HOUR))
  t.ok(sequenceHolds([0, 3 * HOUR, 3.5 * HOUR], null, HOUR), 'one name: two of its events close enough')
  t.notOk(sequenceHolds([0, 2 * HOUR, 4 * HOUR], null, HOUR))
  t.notOk(sequenceHolds([7], null, HOUR), 'one event is no sequence of itself')
})

const at = (hours: number) => Date.parse('2024-06-01T00:00:00Z') + hours * HOUR
const row = (distinctId: string, event: string, hours: number): EventRow => ({
  uuid: randomUUID(),
  team_id: TEAM,
  event,
  distinct_id: distinctId,
  person_id: '00000000-0000-4000-8000-000000000001',
  properties: '{}',
  timestamp: at(hours),
  created_at: at(hours),
  groups: ['', '', '', '', ''],
  elements_chain: '',
})

t.test('both stores read each distinct id the times of both events in the window, ascending', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const rows = [{ ...row('ada', 'signup', 5), properties: '{"plan":"pro"}' }, row('ada', 'view', 4), row('ada', 'view', 1), { ...row('bob', 'view', 2), properties: '{"plan":"pro"}' }, row('cy', 'other', 2), row('dee', 'view', 50), { ...row('eve', 'view', 3), team_id: TEAM + 1 }]
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_event_sequences')
  for (const [name, store] of [['sqlite', sqlite], ['clickhouse', clickhouse]] as const) {
    t.same(await store.distinctIdTimes({ teamId: TEAM, steps: [{ event: 'view' }, { event: 'signup' }], after: at(0), before: at(48) }), [
      ['ada', [at(1), at(4)], [at(5)]],
      ['bob', [at(2)], []],
    ], `${name}: two names`)
    t.same(await store.distinctIdTimes({ teamId: TEAM, steps: [{ event: 'view' }], after: at(2), before: at(60) }), [
      ['ada', [at(4)]],
      ['bob', [at(2)]],
      ['dee', [at(50)]],
    ], `${name}: one name, from the window's start on`)
    t.same(await store.distinctIdTimes({ teamId: TEAM, steps: [{ event: null, properties: [{ key: 'plan', value: 'pro', operator: 'exact' }] }, { event: ['other', 'signup'] }], after: at(0), before: at(48) }), [
      ['ada', [at(5)], [at(5)]],
      ['bob', [at(2)], []],
      ['cy', [], [at(2)]],
    ], `${name}: steps on properties and on several names`)
  }
})

t.test("over persons.db, a person's sequence is made of all its ids' events", async (t) => {
  const db = openDatabase(':memory:')
  registerFilterFunctions(db, compileSearchRegex)
  db.exec('CREATE TABLE persons (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE person_distinct_ids (team_id INTEGER, distinct_id TEXT, person_id INTEGER)')
  db.exec(`INSERT INTO persons VALUES (1, 'ada'), (2, 'bob'), (3, 'cy');
    INSERT INTO person_distinct_ids VALUES (${TEAM}, 'anon-1', 1), (${TEAM}, 'ada', 1), (${TEAM}, 'bob', 2), (${TEAM}, 'cy', 3), (${TEAM + 1}, 'cy-elsewhere', 3)`)
  const who = (personsOf: string[], rows: Array<true | number[][]>, windowMs = HOUR) => {
    const where = compileSqliteProperties([{ personsOf, teamId: TEAM, sequence: { rows, windowMs } }])
    return (db.prepare(`SELECT name FROM persons WHERE ${where.sql} ORDER BY id`).all(...where.params) as Array<{ name: string }>).map((p) => p.name)
  }
  t.same(who(['anon-1', 'ada', 'bob'], [[[at(1)], []], [[], [at(1.5)]], [[at(1)], [at(3)]]]), ['ada'], "ada viewed anonymously, then signed up: bob's signup came too late")
  t.same(who(['anon-1', 'ada', 'bob'], [[[at(1)], []], [[], [at(1.5)]], [[at(1)], [at(3)]]], 2 * HOUR), ['ada', 'bob'], 'a wider window')
  t.same(who(['bob', 'cy'], [true, [[at(1)], []]]), ['bob'], 'an id that makes it alone')
  t.same(who(['anon-1', 'ada'], [[[at(1)]], [[at(1.2)]]]), ['ada'], 'one name, by two ids')
  t.same(who(['cy-elsewhere'], [true]), [], "another project's id")
  db.close()
})
