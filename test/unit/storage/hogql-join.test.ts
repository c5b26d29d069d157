import t from 'tap'
import { parseHogqlQuery } from '../../../src/storage/events/hogql-query.js'
import { joinBelow, joinRows } from '../../../src/storage/events/hogql-join.js'
import { runHogqlQuery, runHogqlQueryOver } from '../../../src/storage/events/hogql-query-run.js'
import type { HogqlValue } from '../../../src/storage/events/hogql-math.js'
import type { AnswerValue } from '../../../src/storage/events/hogql-values.js'

const clock = { now: Date.UTC(2024, 5, 1), zone: 'UTC' }
const plan = (text: string) => parseHogqlQuery(text, clock)

/** The query's rows over its sides' rows as given (each side's columns in its query's order). */
async function run(text: string, sides: HogqlValue[][][]): Promise<AnswerValue[][]> {
  const p = plan(text)
  return runHogqlQuery(p, await joinRows(p.join!, sides, null), null).map((row) => row.slice(0, p.shown))
}

t.test("each table of a join is a query of the columns read of it, found by its table's name or alias, or as the one table that has the field", async (t) => {
  const p = plan("select e.event, p.properties.email, distinct_id, is_identified from events e left join persons p on e.person_id = p.id")
  t.same(p.join!.sides.map((s) => s.table), ['events', 'persons'])
  t.same(p.join!.sides.map((s) => s.shown), [3, 3], 'events: person_id, event, distinct_id; persons: id, properties.email, is_identified')
  t.same(p.join!.columns.map((c) => c.type), ['UUID', 'UUID', 'String', 'Nullable(String)', 'String', 'Int8'], 'typed as each table types them')
  t.same(p.join!.steps.map((s) => s.kind), ['left'])
  t.same(p.columns.map((c) => c.name), ['e.event', 'p.properties.email', 'distinct_id', 'is_identified'], 'columns named as written')
  t.same(plan('select events.event from events join persons on events.person_id = persons.id').join!.sides[0].shown, 2, "the table's own name qualifies too")
  t.equal(plan('select count() from events e join persons p on e.person_id = p.id and e.distinct_id = p.properties.email').join!.steps[0].keys.length, 2, 'ON reads ANDed equalities')
})

t.test('a condition of WHERE on one table moves into its query, unless an outer join may leave that table unmatched', async (t) => {
  const where = "where e.timestamp > '2024-03-01' and p.properties.plan = 'pro' and e.event = p.properties.first"
  const inner = plan(`select e.event from events e join persons p on e.person_id = p.id ${where}`)
  t.same(inner.join!.sides.map((s) => s.where !== null), [true, true], 'INNER: each side takes its own')
  t.equal(inner.join!.sides[0].after, Date.UTC(2024, 2, 1), "the events' time bound narrows what the store reads")
  t.ok(inner.where !== null, 'a condition of both tables stays')
  const left = plan(`select e.event from events e left join persons p on e.person_id = p.id ${where}`)
  t.same(left.join!.sides.map((s) => s.where !== null), [true, false], "LEFT: the persons' condition stays after the join")
  const right = plan(`select e.event from events e right join persons p on e.person_id = p.id ${where}`)
  t.same(right.join!.sides.map((s) => s.where !== null), [false, true])
  const full = plan(`select e.event from events e full join persons p on e.person_id = p.id ${where}`)
  t.same(full.join!.sides.map((s) => s.where !== null), [false, false])
  const aliased = plan("select lower(e.event) as event from events e join persons p on e.person_id = p.id where event = 'x'")
  t.equal(aliased.join!.sides[0].where, null, "a condition reading a column's alias stays: the alias is not the field")
})

t.test('rows join on their keys as a hash join: each pair of matches, NULL keys matching nothing, the unmatched by the join kind', async (t) => {
  const events = [['u1', 'view'], ['u1', 'buy'], ['u2', 'view'], [null, 'orphan']]
  const persons = [['u1', 'a@x'], ['u3', 'c@x'], [null, 'n@x']]
  const q = (kind: string) => `select e.event, p.properties.email, p.id from events e ${kind} join persons p on e.person_id = p.id order by e.event, p.properties.email`
  const sides = (): HogqlValue[][][] => [events.map((r) => [...r]), persons.map((r) => [...r])]
  t.same(await run(q('inner'), sides()), [['buy', 'a@x', 'u1'], ['view', 'a@x', 'u1']])
  t.same(await run(q('left'), sides()), [['buy', 'a@x', 'u1'], ['orphan', null, '00000000-0000-0000-0000-000000000000'], ['view', 'a@x', 'u1'], ['view', null, '00000000-0000-0000-0000-000000000000']], "LEFT: the unmatched read their types' defaults")
  t.same(await run(q('right'), sides()), [['', 'c@x', 'u3'], ['', 'n@x', null], ['buy', 'a@x', 'u1'], ['view', 'a@x', 'u1']], "RIGHT: an event's text default is ''")
  t.equal((await run(q('full'), sides())).length, 6)
  t.same(await run('select count() from events e cross join persons p', sides()), [[12]], 'CROSS: every pair')
  const many = Array.from({ length: 3 }, () => ['u1', 'x'])
  t.same(await run('select count() from events e join persons p on e.person_id = p.id', [many, many]), [[9]], 'duplicate keys match each other')
  const numbers = 'select count(), count(b.m) from (select toFloat(properties.n) as n from events) a left join (select toFloat(properties.n) as m from events) b on a.n = b.m'
  t.same(await run(numbers, [[[Number.NaN], [Infinity], [1]], [[Number.NaN], [Infinity], [1]]]), [[3, 1]], "a side's NaN and infinities are NULL, as its answer writes them: they match nothing")
})

t.test('USING (a, b) joins on the fields of those names of the table before and the joined one, as ON a.x = b.x', async (t) => {
  const using = plan('select a.event, b.distinct_id from events a left join events b using (event, distinct_id)')
  const on = plan('select a.event, b.distinct_id from events a left join events b on a.event = b.event and a.distinct_id = b.distinct_id')
  t.same(using.join, on.join, 'the same plan as ON')
  t.same(plan('select count() from events a join (select event as e from events) b on a.event = b.e join events c using event').join!.steps[1].keys.length, 1, 'unparenthesized, and from the one earlier table that has it')
  const sides = (): HogqlValue[][][] => [[['view', 'u1'], ['buy', 'u2']], [['view', 'u1'], ['view', 'u3']]]
  t.same(await run('select a.event, b.distinct_id from events a left join events b using (event) order by 1, 2', sides()), [['buy', ''], ['view', 'u1'], ['view', 'u3']])
})

t.test("`e.*` is one table's columns, as that table's SELECT * gives them", async (t) => {
  const p = plan('select e.*, p.id from events e join (select id, properties.email as email from persons) p on e.person_id = p.id')
  t.same(p.columns.map((c) => c.name), ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at', '$session_id', '$window_id', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4', 'p.id'])
  t.same(plan('select p.* from events e join (select id, properties.email as email from persons) p on e.person_id = p.id').columns.map((c) => c.name), ['id', 'email'], "a subquery's columns")
  t.throws(() => plan('select x.* from events e join persons p on e.person_id = p.id'), /x.\* names no table of the join/)
})

t.test('a join of three tables joins left to right', async (t) => {
  const text = 'select a.event, b.properties.email, c.key from events a left join persons b on a.person_id = b.id join groups c on b.properties.company = c.key order by a.event'
  const p = plan(text)
  t.same(p.join!.sides.map((s) => s.table), ['events', 'persons', 'groups'])
  // Each side's columns in the order read: ON's keys first (b: id, properties.company), then the SELECT's.
  t.same(await run(text, [[['u1', 'view'], ['u2', 'buy']], [['u1', 'acme', 'a@x']], [['acme']]]), [['view', 'a@x', 'acme']])
})

t.test("a subquery's join is run apart, and the levels above it over its rows", async (t) => {
  const p = plan('select ev, count() from (select e.event as ev, p.properties.plan as plan from events e join persons p on e.person_id = p.id) where plan = \'pro\' group by ev order by ev')
  const below = joinBelow(p)!
  t.equal(below, p.source, 'the first level below that joins')
  t.equal(joinBelow(below), null)
  const rows = await run('select e.event as ev, p.properties.plan as plan from events e join persons p on e.person_id = p.id', [[['u1', 'view'], ['u1', 'buy'], ['u2', 'view']], [['u1', 'pro'], ['u2', 'free']]])
  t.same(runHogqlQueryOver(p, { plan: below, rows }, null), [['buy', 1], ['view', 1]])
})

t.test('what a join does not read is a 400 naming it', async (t) => {
  const refusals: Array<[string, RegExp]> = [
    ['select properties.x from events e join persons p on e.person_id = p.id', /"properties" is in more than one joined table/],
    ['select nope from events e join persons p on e.person_id = p.id', /Unknown field "nope": no joined table has it/],
    ['select e.event from events e join persons p on e.person_id = p.id or 1', /ON takes equalities/],
    ['select e.event from events e join persons p on e.person_id = e.uuid', /ON takes equalities/],
    ['select e.event from events e join persons p', /JOIN takes its condition after ON/],
    ['select e.event from events e cross join persons p on e.person_id = p.id', /CROSS JOIN takes no ON/],
    ['select e.event from events e left semi join persons p on e.person_id = p.id', /LEFT SEMI JOIN is not read/],
    ['select e.event from events e join persons p using (id)', /USING id names a field of the joined table and of exactly one table before it; one lacks it/],
    ['select count() from events a join events b on a.uuid = b.uuid join events c using (event)', /USING event .* more than one has it/],
    ['select count() from events a join events b using (event,)', /USING takes names of fields both tables have/],
    ['select count() from events a join events b using lower(event)', /USING takes names/],
    ['select any(e.event) from events e join persons p on e.person_id = p.id', /a join's rows have no time/],
    [`select count() from events a ${Array.from({ length: 4 }, (_, i) => `join events b${i} on a.uuid = b${i}.uuid`).join(' ')}`, /joins at most 4 tables/],
  ]
  for (const [text, message] of refusals) t.throws(() => plan(text), message, text)
})
