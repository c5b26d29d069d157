/**
 * groupArray and groupUniqArray: the values that are not NULL in time (then by uuid), the unique ones where each first
 * stands, answered as arrays, read as a column of the answer only; both stores alike on 18.16.
 */
import t from 'tap'
import { innermost, parseHogqlQuery } from '../../../src/storage/events/hogql-query.js'
import { runHogqlQuery } from '../../../src/storage/events/hogql-query-run.js'
import { parseHogqlCondition, parseHogqlMath } from '../../../src/storage/events/hogql-math.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'

const clock = { now: Date.parse('2024-06-20T12:00:00Z'), zone: 'UTC' }
const plan = (text: string) => parseHogqlQuery(text, clock)

/** Events of `who` at minute `at` with the property texts `a` and `n`, given out of time order. */
const EVENTS: Array<{ who: string; at: number; a: string | null; n: string | null }> = [
  { who: 'd1', at: 5, a: 'z', n: '3' },
  { who: 'd1', at: 1, a: 'y', n: null },
  { who: 'd2', at: 4, a: null, n: '-0' },
  { who: 'd1', at: 3, a: 'z', n: '1' },
  { who: 'd2', at: 2, a: 'x', n: '0' },
  { who: 'd1', at: 9, a: 'é', n: '1' },
]

function run(text: string) {
  const p = plan(text)
  const at = innermost(p).paths.map((path) => path[0])
  const rows = EVENTS.map((e, i) => ({ uuid: `u${i}`, event: 'e', distinct_id: e.who, person_id: 'p', timestamp: Date.UTC(2024, 0, 1, 0, e.at), texts: at.map((key) => (key === 'a' ? e.a : key === 'n' ? e.n : null)) }))
  return runHogqlQuery(p, rows, null).map((row) => row.slice(0, p.shown))
}

t.test('the values that are not NULL in time; the unique ones where each first stands; -If of the rows where it holds', async (t) => {
  const text = 'select distinct_id, groupArray(properties.a), groupUniqArray(properties.a), groupArray(toFloat(properties.n)), groupUniqArray(toFloat(properties.n)), groupArrayIf(properties.a, toFloat(properties.n) > 0) from events group by distinct_id order by distinct_id'
  t.same(run(text), [
    ['d1', ['y', 'z', 'z', 'é'], ['y', 'z', 'é'], [1, 3, 1], [1, 3], ['z', 'z', 'é']],
    ['d2', ['x'], ['x'], [0, -0], [0], []],
  ])
  t.same(run('select groupArray(properties.zzz) from events'), [[[]]], 'of none, an empty array')
  t.same(plan(text).columns.map((c) => c.type), ['String', 'Array(String)', 'Array(String)', 'Array(Float64)', 'Array(Float64)', 'Array(String)'])
})

t.test('the functions of arrays read a group\'s array: length, arrayStringConcat, has, indexOf, arr[i], empty; by alias, in HAVING and ORDER BY', async (t) => {
  const readers = "select distinct_id, length(groupArray(properties.a)), arrayStringConcat(groupArray(properties.a), ','), has(groupUniqArray(properties.a), 'z'), groupArray(properties.a)[1], groupArray(properties.a)[-1], groupArray(properties.a)[7], indexOf(groupArray(properties.a), 'é'), empty(groupArrayIf(properties.a, toFloat(properties.n) > 5)), has(groupArray(toFloat(properties.n)), 0) from events group by distinct_id order by distinct_id"
  t.same(run(readers), [
    ['d1', 4, 'y,z,z,é', 1, 'y', 'é', '', 4, 1, 0],
    ['d2', 1, 'x', 0, 'x', 'x', '', 0, 1, 1],
  ])
  t.same(run('select distinct_id, groupUniqArray(properties.a) as u, length(u) from events group by distinct_id having has(u, \'z\') order by length(groupArray(properties.n)) desc'), [['d1', ['y', 'z', 'é'], 3]])
})

t.test('an array is read as a column of the answer only, in queries only, of numbers and texts', async (t) => {
  const refused: Array<[string, RegExp]> = [
    ['select groupArray(event) as x from events order by x', /x: the array groupArray\(\) gives is read here as a column of the answer, or by the functions of arrays/],
    ['select groupArray(event) from events order by groupArray(event)', /the array groupArray\(\) gives is read here as a column of the answer/],
    ['select groupUniqArray(event) as x, x || 1 from events', /concat\(\) takes no array here/],
    ['select groupArray(event) as x, x from events', /An array is read here only by the functions of arrays/],
    ['select distinct_id, groupArray(event) as x from events group by distinct_id having x = 1', /An array is read here only by the functions of arrays/],
    ['select sum(length(groupArray(event))) from events', /groupArray/],
    ['select distinct_id, groupArray(event) as x from events group by distinct_id limit 1 by x', /x: the array groupArray\(\)/],
    ['select x from (select groupArray(event) as x from events)', /the array groupArray\(\) gives is read here as a column of the answer/],
    ['select count() from events where event in (select groupArray(event) from events)', /the array groupArray\(\)/],
    ['select (select groupArray(event) from events)', /the array groupArray\(\)/],
    ['select groupArray(c) from (select event as c from events)', /groupArray\(\), groupUniqArray\(\) and topK\(\) read values by their time; a subquery's rows have no time here/],
    ['select groupArray(timestamp) from events', /groupArray\(\) takes numbers or texts here, not dates and times/],
    ['select groupArraySample(3)(event) from events', /groupArraySample/],
  ]
  for (const [text, message] of refused) t.throws(() => plan(text), message, text)
  t.throws(() => parseHogqlMath('groupArray(properties.a)'), /The aggregation groupArray\(\) is not supported in HogQL math here/)
  t.throws(() => parseHogqlCondition('groupArray(properties.a) = 1'), /groupArray/)
  t.same(run('select count() from (select distinct_id, groupArray(event) as x from events group by distinct_id)'), [[2]], 'a subquery may hold one its query does not read')
})

t.test('on ClickHouse 18.16 the stores answer alike: texts with loose bytes, -0, NaN, infinities, nulls', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const values = ['x', 'é', '1', '-0', '0', 'nan', 'inf', null, 'x', '2.5', '']
  const rows = pageviewRows(5, Object.fromEntries(Array.from({ length: 44 }, (_, i) => [`d${i % 4}`.concat(`-${i}`), { a: values[i % values.length], g: `g${i % 3}` }])))
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_hogql_group_arrays')
  const readers = "length(groupArray(properties.a)), arrayStringConcat(groupUniqArray(properties.a), '|'), has(groupArray(toFloat(properties.a)), 0), groupArray(properties.a)[2], indexOf(groupUniqArray(toFloat(properties.a)), 1)"
  const text = `select properties.g as g, groupArray(properties.a), groupUniqArray(properties.a), groupArray(toFloat(properties.a) / 0), groupUniqArray(toFloat(properties.a)), groupUniqArray(toFloat(properties.a) / 0), groupArrayIf(left(properties.a, 1), properties.a != 'x'), count(), ${readers} from events group by g order by g`
  const query = plan(text)
  const [onSqlite, onClickHouse] = [await sqlite.hogqlQuery(5, query), await clickhouse.hogqlQuery(5, query)]
  t.equal(onSqlite.length, 3)
  t.same(onClickHouse, onSqlite)
  const numbers = onSqlite.flatMap((row) => row[3] as Array<number | null>)
  t.ok(numbers.includes(null) && numbers.every((v) => v === null || Number.isFinite(v)), 'NaN and infinities answered as null within an array, as ClickHouse writes them')
  t.ok(onSqlite.some((row) => (row[6] as string[]).includes('\uFFFD')), 'a cut character answered as U+FFFD')
  t.same(onSqlite.map((row) => (row[4] as number[]).filter((v) => v === 0).length), [1, 1, 1], '-0 is 0 among the unique ones')
})
