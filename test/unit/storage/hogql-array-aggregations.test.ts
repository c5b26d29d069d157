/**
 * The parametric aggregations whose value is an array: quantiles(levels)(x) and its exact kinds, topK(n)(x), and
 * groupArray(n)(x) and groupUniqArray(n)(x); each level's quantile as quantile's, both stores alike on 18.16.
 */
import t from 'tap'
import { innermost, parseHogqlQuery } from '../../../src/storage/events/hogql-query.js'
import { runHogqlQuery } from '../../../src/storage/events/hogql-query-run.js'
import { parseHogqlMath } from '../../../src/storage/events/hogql-math.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'
import { Rng, fuzzSeed } from '../fuzz/rng.js'

const clock = { now: Date.parse('2024-06-20T12:00:00Z'), zone: 'UTC' }
const plan = (text: string) => parseHogqlQuery(text, clock)

/** Rows of one person in time, each with the property texts `a` and `n` of `values`, in the order given. */
function run(text: string, values: Array<{ a?: string | null; n?: string | null; g?: string }>) {
  const p = plan(text)
  const at = innermost(p).paths.map((path) => path[0])
  const rows = values.map((v, i) => ({ uuid: `u${String(i).padStart(3, '0')}`, event: 'e', distinct_id: v.g ?? 'd', person_id: 'p', timestamp: Date.UTC(2024, 0, 1, 0, i), texts: at.map((key) => (key === 'a' || key === 'n' ? (v[key] ?? null) : null)) }))
  return runHogqlQuery(p, rows, null).map((row) => row.slice(0, p.shown))
}
const texts = (...a: Array<string | null>) => a.map((v) => ({ a: v }))
const numbers = (...n: Array<string | null>) => n.map((v) => ({ n: v }))

t.test("quantiles: each level's quantile as quantile computes it, in the order written; of none NaN (null in the answer), 0 for the exact kinds that do not interpolate", async (t) => {
  const values = numbers('4', '1', null, '3', '2', 'x', '5', '0')
  t.same(run('select quantiles(0.5, 0.1, 1)(properties.n), quantilesExact(0.5, 0.25)(properties.n), quantilesExactInclusive(0.25)(properties.n), quantilesExactExclusive(0.25)(properties.n), quantilesExactLow(0.5)(properties.n) from events', values), [[[2.5, 0.5, 5], [3, 1], [1.25], [0.75], [2]]])
  t.same(run("select quantilesIf(0.5)(properties.n, toFloat(properties.n) > 2), quantilesExactHighIf(0.5, 0)(properties.n, toFloat(properties.n) > 2) from events", values), [[[4], [4, 3]]], 'the -If: of 4, 3 and 5')
  t.same(run('select quantiles(0.5, 0.9)(properties.zzz), quantilesExact(0.5)(properties.zzz), quantilesExactLow(0.5)(properties.zzz), quantilesExactHigh(0.5)(properties.zzz), quantilesExactInclusive(0.5)(properties.zzz), quantilesExactExclusive(0.5)(properties.zzz) from events', values), [[[null, null], [0], [0], [0], [null], [null]]], 'of none')
  t.same(plan('select quantiles(0.5)(properties.n), quantiles(0.5)(properties.a) from events').columns.map((c) => c.type), ['Array(Float64)', 'Array(Float64)'], 'numbers, of texts too')
  t.same(run('select quantiles(0.5, 0.9)(properties.n)[2], length(quantiles(0.1, 0.2, 0.3)(properties.n)), has(quantilesExact(0.5)(properties.n), 3) from events', values), [[4.5, 3, 1]], 'the functions of arrays read them')
})

t.test('each level of quantiles is quantile(level) of the same values, drawn', async (t) => {
  const rng = new Rng(fuzzSeed())
  const kinds = ['', 'Exact', 'ExactLow', 'ExactHigh', 'ExactInclusive', 'ExactExclusive']
  for (let c = 0; c < 60; c++) {
    const values = numbers(...Array.from({ length: rng.int(13) }, () => (rng.chance(0.2) ? null : String(rng.range(-5, 20) / rng.pick([1, 2, 4])))))
    const kind = rng.pick(kinds)
    const levels = Array.from({ length: rng.range(1, 4) }, () => rng.range(1, 99) / 100)
    const [[many, ...each]] = run(`select quantiles${kind}(${levels.join(', ')})(properties.n), ${levels.map((l) => `quantile${kind}(${l})(properties.n)`).join(', ')} from events`, values)
    if (!t.same(many, each.map((v, k) => v ?? (kind === '' || kind.includes('clusive') ? null : 0)), `case ${c}: quantiles${kind}(${levels})`)) t.comment({ values })
  }
})

t.test('topK(n): the values by their counts, of equal counts the one that reached its count first; groupArray(n) and groupUniqArray(n) keep the first n', async (t) => {
  const values = texts('a', 'b', null, 'b', 'a', 'c', 'c', 'd', 'a')
  // Counts a 3, b 2, c 2, d 1; c reached 2 after b did, though a was first of all.
  t.same(run('select topK(3)(properties.a), topK(10)(properties.a), topK(1)(properties.a), groupArray(3)(properties.a), groupUniqArray(3)(properties.a), groupArray(100)(properties.a) from events', values), [[['a', 'b', 'c'], ['a', 'b', 'c', 'd'], ['a'], ['a', 'b', 'b'], ['a', 'b', 'c'], ['a', 'b', 'b', 'a', 'c', 'c', 'd', 'a']]])
  t.same(run('select topK(2)(properties.a) from events', texts('x', 'y', 'y', 'x')), [[['y', 'x']]], 'y reached 2 first: as the Space-Saving counters order them')
  const signed = run("select topKIf(1)(toFloat(properties.n), properties.n != '5'), topK(5)(toFloat(properties.n)) from events", numbers('5', '-0', '0', '5', '7', '5'))
  t.same(signed, [[[0], [5, 0, 7]]], '-0 is 0, as uniq tells them')
  t.ok(Object.is((signed[0][0] as number[])[0], 0), 'and is read as 0')
  t.same(plan('select topK(2)(properties.a), topK(2)(toFloat(properties.n)), groupArray(2)(event) from events').columns.map((c) => c.type), ['Array(String)', 'Array(Float64)', 'Array(String)'])
  t.same(run("select length(topK(2)(properties.a)), topK(2)(properties.a)[1], arrayStringConcat(groupArray(2)(properties.a), ',') from events", values), [[2, 'a', 'a,b']], 'the functions of arrays read them')
  t.same(run("select groupArray(properties.a), arrayStringConcat(arrayReverseSort(groupArray(properties.a)), ','), arraySlice(topK(3)(properties.a), 2)[1] from events", values), [[['a', 'b', 'b', 'a', 'c', 'c', 'd', 'a'], 'd,c,c,b,b,a,a,a', 'b']], 'sorted and sliced, the column as it was')
  t.same(run('select properties.a as a, groupArray(2)(properties.a) from events group by a order by a limit 2', values), [['a', ['a', 'a']], ['b', ['b', 'b']]])
})

t.test('the parameters are refused where ClickHouse or PostHog would refuse them, and the arrays where arrays are', async (t) => {
  const refused: Array<[string, RegExp]> = [
    ['select quantiles(properties.n) from events', /quantiles\(\) takes its levels as numbers from 0 to 1, as in quantiles\(0\.5, 0\.9\)\(properties\.amount\)/],
    ['select quantiles(0.5, 1.5)(properties.n) from events', /quantiles\(\) takes its levels as numbers from 0 to 1/],
    ['select quantilesExactExclusive(0.5, 1)(properties.n) from events', /takes its levels as numbers above 0 and below 1/],
    ['select quantiles(0.5, 0.9) from events', /quantiles\(levels\) takes the expression after its levels/],
    ['select quantile(0.5, 0.9)(properties.n) from events', /quantile\(\) takes its level as a number from 0 to 1/],
    ['select topK(properties.a) from events', /topK\(n\) takes how many values it keeps before the expression, as in topK\(5\)\(properties\.\$browser\)/],
    ['select topK(0)(properties.a) from events', /topK\(n\) keeps at most n values, n a whole number from 1 to 16777215/],
    ['select topK(2.5)(properties.a) from events', /topK\(n\) keeps at most n values/],
    ['select topK(5, 6)(properties.a) from events', /topK\(n\) keeps at most n values/],
    ['select groupArray(0)(event) from events', /groupArray\(n\) keeps at most n values, n a whole number from 1 to/],
    ['select topK(3)(timestamp) from events', /topK\(\) takes numbers or texts here, not dates and times/],
    ['select quantiles(0.5)(timestamp) from events', /Dates and times are aggregated here with/],
    ['select topK(3)(c) from (select event as c from events)', /groupArray\(\), groupUniqArray\(\) and topK\(\) read values by their time; a subquery's rows have no time here/],
    ['select quantiles(0.5)(properties.n) as q from events order by q', /q: the array quantiles\(\) gives is read here as a column of the answer/],
  ]
  for (const [text, message] of refused) t.throws(() => plan(text), message, text)
  t.throws(() => parseHogqlMath('quantiles(0.5)(properties.a)'), /The aggregation quantiles\(\) is not supported in HogQL math here/)
  t.throws(() => parseHogqlMath('topK(2)(properties.a)'), /The aggregation topK\(\) is not supported in HogQL math here/)
  t.same(run('select quantiles(0.5)(c) from (select toFloat(properties.n) as c from events)', numbers('1', '2', '9')), [[[2]]], 'quantiles read no time: a subquery\'s rows are theirs')
  t.same(run('select groupArray(10) from events', numbers('1', '2')), [[[10, 10]]], 'groupArray(10) alone is the array of the value 10')
})

t.test('on ClickHouse 18.16 the stores answer alike: levels, empty groups, ties, -0 and NaN, texts; aggregations of heavy expressions in ORDER BY', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const values = ['x', 'é', '1', '-0', '0', 'nan', 'inf', null, 'x', '2.5', '', '1', 'y', 'y']
  const rows = pageviewRows(5, Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`d${i}`, { a: values[(i * 5) % values.length], g: `g${i % 4}`, ...(i % 4 === 3 ? {} : { n: String((i * 37) % 11) }) }])))
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_hogql_array_aggregations')
  const columns = [
    'quantiles(0.5, 0.1, 0.99)(properties.n)', 'quantilesExact(0.5, 0.25)(properties.n)', 'quantilesExactLow(0.5)(properties.n)', 'quantilesExactInclusive(0.3, 0.7)(properties.n)', 'quantilesExactExclusive(0.3)(properties.n)',
    "quantilesIf(0.5)(properties.n, properties.a = 'x')", 'topK(3)(properties.a)', 'topK(2)(toFloat(properties.a))', "topKIf(1)(properties.a, properties.a != 'x')", 'groupArray(3)(properties.a)', 'groupUniqArray(2)(toFloat(properties.a))',
    'quantiles(0.5)(properties.n)[1]', 'length(topK(3)(properties.a))',
    "arrayStringConcat(arraySort(groupUniqArray(properties.a)), '|')", 'arraySlice(topK(3)(properties.a), 2)[1]', 'toString(arrayReverseSort(groupArray(toFloat(properties.a)))[2])', "hasAny(groupUniqArray(properties.a), ['x', 'é'])", "countEqual(groupArray(properties.a), 'y')", 'hasAll(groupArray(toFloat(properties.n)), [1, 2])',
  ]
  const query = plan(`select properties.g as g, ${columns.join(', ')} from events group by g order by g`)
  const [onSqlite, onClickHouse] = [await sqlite.hogqlQuery(5, query), await clickhouse.hogqlQuery(5, query)]
  t.equal(onSqlite.length, 4)
  // A NaN out of an array is null in ClickHouse's JSON, as in the API's answer.
  t.same(JSON.parse(JSON.stringify(onClickHouse)), JSON.parse(JSON.stringify(onSqlite)))
  t.same(onSqlite[3].slice(1, 6), [[null, null, null], [0, 0], [0], [null, null], [null]], 'g3 holds no n: the empty states')
  t.ok(onSqlite.every((row) => (row[7] as unknown[]).length === 3), 'topK keeps 3')
  // The values once, a lambda's: written thrice, their aliases copied took this past 18.16's 2,000,000 elements.
  const heavy = "['z', properties.a, lower(properties.b)][3] * reverse(appendTrailingCharIfAbsent(properties.b, '/')) % format('{1}:{0}{{}}', properties.a, lower(event), properties.$c) || toString(countSubstringsCaseInsensitive(properties.b, 'X'))"
  const ordered = plan(`select properties.g as g, count() from events group by g order by concat(toString(g), '/', toString(quantileExactInclusive(0.3)(${heavy}))), toString(quantiles(0.5)(${heavy})[1]), g`)
  t.same(await clickhouse.hogqlQuery(5, ordered), await sqlite.hogqlQuery(5, ordered), 'a quantile of a heavy expression read in ORDER BY')
  // sum's, avg's, min's and max's too: `if(count(c) = 0, NULL, sum(c))` wrote it twice, past the limit here.
  const others = plan(`select properties.g as g, sum(properties.n), avg(properties.n), min(properties.n), max(properties.n) from events group by g order by ${['sum', 'avg', 'min', 'max'].map((fn) => `toString(${fn}(length(${heavy})))`).join(', ')}, g`)
  const [otherOnSqlite, otherOnClickHouse] = [await sqlite.hogqlQuery(5, others), await clickhouse.hogqlQuery(5, others)]
  t.same(otherOnClickHouse, otherOnSqlite, 'sum, avg, min and max of a heavy expression read in ORDER BY')
  t.same(otherOnSqlite.find((row) => row[0] === 'g3')?.slice(1, 5), [null, null, null, null], 'of no values NULL')
})

t.test("on ClickHouse 18.16 a group of 20,000 values: each value's events counted in one pass, where a lambda reading the whole array copied it for each item", { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const rows = pageviewRows(5, Object.fromEntries(Array.from({ length: 20000 }, (_, i) => [`d${i}`, { a: `v${(i * i) % 701}` }])))
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_hogql_array_aggregations_big')
  const query = plan('select length(groupUniqArray(properties.a)), groupUniqArray(3)(properties.a), topK(4)(properties.a), length(groupArray(properties.a)) from events')
  const onSqlite = await sqlite.hogqlQuery(5, query)
  t.same(onSqlite[0][0], 351, "the squares modulo 701 (a prime): 351 of them")
  t.same(await clickhouse.hogqlQuery(5, query), onSqlite)
})
