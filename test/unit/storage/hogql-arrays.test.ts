/**
 * HogQL's arrays in queries (literals, splitByChar, splitByString, read by arr[i], has, indexOf, length, empty, notEmpty
 * and arrayStringConcat) give ClickHouse's answers on both stores; an array as a value of its own, and what ClickHouse
 * refuses, are refused when the query is read. Filters and math read them alike (the filter fuzz runs them on both stores).
 */
import t from 'tap'
import { hogqlHolds, parseHogqlMath, parseHogqlQuery } from '../../../src/storage/events/index.js'
import { parseHogqlCondition } from '../../../src/storage/events/hogql-read.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows, PATH_TEXTS } from '../../helpers/event-stores.js'

const TEAM = 7
const clock = { now: Date.parse('2024-07-01T00:00:00Z'), zone: 'UTC' }

/** Each expression over properties.s, its value for d1…d5. */
const CASES: Array<[string, unknown[]]> = [
  // A split of NULL is a split of '' (PostHog's printer); an index out of range gives ''.
  [`splitByChar('/', properties.s)[2]`, ['a', '', '', '', 'wörld']],
  [`splitByChar('/', properties.s)[-1]`, ['c', 'x,y', '', '', 'wörld']],
  [`splitByString(',', properties.s)[3]`, ['', '', '', '', '']],
  [`splitByString('l', properties.s)[3]`, ['', '', '', '', 'o/wör']],
  [`length(splitByString('/', properties.s))`, [4, 1, 1, 1, 2]],
  [`empty(splitByChar(',', properties.s))`, [0, 0, 0, 0, 0]],
  [`has(splitByChar('/', properties.s), 'b')`, [1, 0, 0, 0, 0]],
  [`arrayStringConcat(splitByChar('/', properties.s), '-')`, ['-a-b-c', 'x,y', '', '', 'héllo-wörld']],
  [`has(['x,y', ''], properties.s)`, [0, 1, 1, 0, 0]],
  [`indexOf(['/a/b/c', 'x,y'], properties.s)`, [1, 2, 0, 0, 0]],
  // A literal whose items are not all literals has Nullable items: NULL out of range.
  [`['a', properties.s][2]`, ['/a/b/c', 'x,y', '', null, 'héllo/wörld']],
  [`['a', properties.s][3]`, [null, null, null, null, null]],
  [`notEmpty([properties.s])`, [1, 1, 1, 1, 1]],
  [`[length(properties.s), 10][1]`, [6, 3, 0, null, 13]],
  [`has([0, 3], length(properties.s))`, [0, 1, 1, 0, 0]],
  [`array('p', 'q')[-2]`, ['p', 'p', 'p', 'p', 'p']],
  // Over Nullable items, NULL finds a NULL item (current servers' has; 18.16's finds its type's default).
  [`has(['a', properties.s], 'x,y')`, [0, 1, 0, 0, 0]],
  [`has([properties.s, 'q'], NULL)`, [0, 0, 0, 1, 0]],
  [`indexOf(['', properties.s], properties.s)`, [2, 2, 1, 2, 2]],
  // Remade arrays: sorted (texts by their bytes), reversed, sliced from an item.
  [`arrayStringConcat(arraySort(splitByChar('/', properties.s)), '-')`, ['-a-b-c', 'x,y', '', '', 'héllo-wörld']],
  [`arrayStringConcat(arrayReverseSort(splitByChar('/', properties.s)), '-')`, ['c-b-a-', 'x,y', '', '', 'wörld-héllo']],
  [`arrayStringConcat(arrayReverse(splitByChar('/', properties.s)), '|')`, ['c|b|a|', 'x,y', '', '', 'wörld|héllo']],
  [`arrayStringConcat(arraySlice(splitByChar('/', properties.s), 2), '/')`, ['a/b/c', '', '', '', 'wörld']],
  [`arraySlice(splitByChar('/', properties.s), 2, 1)[-1]`, ['a', '', '', '', 'wörld']],
  [`length(arraySlice(arrayReverse(splitByChar('/', properties.s)), 1, 2))`, [2, 1, 1, 1, 2]],
  // NaN after the numbers and NULL after it, whichever way they sort; Nullable items stay so.
  [`toString(arraySort([length(properties.s), 3, 0 / 0, -1])[-2])`, ['6', '3', '3', 'nan', '13']],
  [`toString(arrayReverseSort([length(properties.s), 3, 0 / 0, -1])[-2])`, ['-1', '-1', '-1', 'nan', '-1']],
  [`arrayReverseSort([length(properties.s), 3, -1])[1]`, [6, 3, 3, 3, 13]],
  [`arraySlice([properties.s, 'q'], 3)[1]`, [null, null, null, null, null]],
  [`indexOf(arraySort(['b', 'a']), 'b')`, [2, 2, 2, 2, 2]],
  // arrayDistinct: the first of each, NULL skipped, -0 one with 0.
  [`arrayStringConcat(arrayDistinct(splitByChar('b', 'abcbabxb')), '+')`, ['a+c+x+', 'a+c+x+', 'a+c+x+', 'a+c+x+', 'a+c+x+']],
  [`arrayStringConcat(arrayDistinct(arrayReverse(splitByChar('/', properties.s))), '+')`, ['c+b+a+', 'x,y', '', '', 'wörld+héllo']],
  [`length(arrayDistinct([properties.s, NULL, 'x,y', properties.s]))`, [2, 1, 2, 1, 2]],
  [`toString(arrayDistinct([0, -0, length(properties.s) - 3, 0 / 0, 0 / 0])[-1])`, ['nan', 'nan', 'nan', 'nan', 'nan']],
  [`length(arrayDistinct([0, -0, length(properties.s) - 3, 0 / 0, 0 / 0]))`, [3, 2, 3, 2, 3]],
  // countEqual, and hasAny and hasAll of two arrays.
  [`countEqual(splitByChar('/', properties.s), '')`, [1, 0, 1, 1, 0]],
  [`countEqual([1, 2, 1], length(properties.s) - 5)`, [2, 0, 0, 0, 0]],
  [`hasAny(splitByChar('/', properties.s), ['a', 'x,y'])`, [1, 1, 0, 0, 0]],
  [`hasAll(splitByChar('/', properties.s), ['a', 'c'])`, [1, 0, 0, 0, 0]],
  [`hasAll(splitByChar('/', properties.s), ['a', 'zz'])`, [0, 0, 0, 0, 0]],
  [`hasAny(['zz', 'héllo'], splitByChar('/', properties.s))`, [0, 0, 0, 0, 1]],
  [`hasAll(['a', 'b', '', 'c'], arraySlice(splitByChar('/', properties.s), 1, 3))`, [1, 0, 1, 1, 0]],
]

t.test('arrays give ClickHouse answers on both stores', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { sqlite, clickhouse } = await bothEventStores(t, pageviewRows(TEAM, PATH_TEXTS), 'skylark_hogql_arrays')
  const plan = parseHogqlQuery(`SELECT ${CASES.map(([expr]) => expr).join(', ')} FROM events ORDER BY distinct_id`, clock)
  const [lite, house] = [await sqlite.hogqlQuery(TEAM, plan), await clickhouse.hogqlQuery(TEAM, plan)]
  CASES.forEach(([expr, want], i) => {
    t.same(lite.map((row) => row[i]), want, `SQLite: ${expr}`)
    t.same(house.map((row) => row[i]), want, `ClickHouse: ${expr}`)
  })
  const grouped = parseHogqlQuery(`SELECT splitByChar('/', properties.s)[2] AS part, count() FROM events WHERE notEmpty(part) OR has(['x,y'], properties.s) GROUP BY part ORDER BY part`, clock)
  const want = [['', 1], ['a', 1], ['wörld', 1]]
  t.same(await sqlite.hogqlQuery(TEAM, grouped), want, 'SQLite: grouped by a part, filtered by has()')
  t.same(await clickhouse.hogqlQuery(TEAM, grouped), want, 'ClickHouse: grouped by a part, filtered by has()')
})

t.test('an array as a value of its own, and what ClickHouse refuses, are refused when the query is read', async (t) => {
  const refused = (expr: string, message: RegExp) => t.throws(() => parseHogqlQuery(`SELECT ${expr} FROM events`, clock), { message }, expr)
  refused(`splitByChar('/', properties.s)`, /An array is read here only by the functions of arrays/)
  refused(`['a'] = ['a']`, /An array is read here only by the functions of arrays/)
  refused(`count(['a'])`, /An array is read here only by the functions of arrays/)
  refused(`lower(['a'])`, /lower\(\) takes no array here/)
  refused(`['a', 1][1]`, /all texts or all numbers/)
  refused(`[NULL][1]`, /An array of NULLs only/)
  refused(`[[1]][1]`, /Arrays of arrays/)
  refused(`length([])`, /An empty array/)
  refused(`splitByChar('ab', properties.s)[1]`, /exactly one byte/)
  refused(`splitByChar('é', properties.s)[1]`, /exactly one byte/)
  refused(`splitByString('', properties.s)[1]`, /not empty/)
  refused(`splitByChar('/', properties.s, 2)[1]`, /max_substrings is not read here/)
  refused(`splitByChar(properties.p, properties.s)[1]`, /separator as a text literal/)
  refused(`splitByChar('/', 5)[1]`, /splits a text, not a number/)
  refused(`has([1, 2], properties.s)`, /looks for a value of its items' type: numbers here, given a text/)
  refused(`has(properties.s, 'a')`, /has\(\) takes an array first/)
  refused(`indexOf([${Array(33).fill('event').join(', ')}], 'a')`, /at most 32 items here/)
  refused(`event[1]`, /arr\[i\] and arrayElement\(\) index an array here/)
  refused(`[properties.s][length(event)]`, /An array's index is an integer literal/)
  refused(`['a'][1.5]`, /An array's index is an integer literal/)
  // 18.16 and current servers refuse it (ZERO_ARRAY_OR_TUPLE_INDEX) but of a constant array.
  refused(`splitByChar('/', properties.s)[0]`, /counts from 1/)
  refused(`arrayStringConcat(['a', properties.s])`, /joins texts none of which is NULL/)
  refused(`arrayStringConcat([1, 2])`, /joins texts none of which is NULL/)
  refused(`arrayStringConcat(['a'], properties.s)`, /separator as a text literal/)
  refused(`arraySort(splitByChar('/', properties.s))`, /An array is read here only by the functions of arrays/)
  refused(`arraySort(properties.s)[1]`, /arraySort\(\) takes an array first here/)
  refused(`arrayReverse(['a'], ['b'])[1]`, /arrayReverse\(\) takes 1 argument/)
  refused(`arraySlice(['a'], 0)[1]`, /arraySlice\(\) takes an offset from 1 \(the first item\) and a length from 0 as integer literals/)
  refused(`arraySlice(['a'], -1)[1]`, /arraySlice\(\) takes an offset from 1/)
  refused(`arraySlice(['a'], 1, -1)[1]`, /arraySlice\(\) takes an offset from 1/)
  refused(`arraySlice(['a'], length(event))[1]`, /arraySlice\(\) takes an offset from 1/)
  refused(`hasAny(['a'], 'a')`, /hasAny\(\) takes two arrays here/)
  refused(`hasAll(['a'], [1])`, /hasAll\(\) takes two arrays of one type/)
  refused(`hasAny(['a', properties.s], ['a'])`, /hasAny\(\) reads arrays without Nullable items here/)
  refused(`countEqual(['a', properties.s], 'a')`, /countEqual\(\) counts in an array without Nullable items here/)
  refused(`countEqual(['a'], 1)`, /countEqual\(\) looks for a value of its items' type/)
  refused(`has(arraySort(['b', properties.s]), 'b')`, /has\(\) does not search arraySort\(\) of Nullable items here/)
  t.throws(() => parseHogqlCondition("splitByChar('/', event)"), { message: /An array is read here only by the functions of arrays/ }, 'in a filter too')
  t.throws(() => parseHogqlMath("sum(['a'])"), { message: /An array is read here only by the functions of arrays/ }, 'in math too')
})

t.test('filters and math read arrays as queries do', async (t) => {
  const holds = (text: string, properties: Record<string, string>) => hogqlHolds(parseHogqlCondition(text), ([key]) => properties[key] ?? null, null, (field) => (field === 'event' ? 'buy' : null))
  t.same(
    [holds("has(['buy', 'view'], event)", {}), holds("splitByChar('/', properties.p)[-1] = 'c'", { p: '/a/c' }), holds("splitByChar('/', properties.p)[-1] = 'c'", {}), holds("indexOf(['x', 'y'], properties.q) = 2", { q: 'y' })],
    [true, true, false, true],
  )
  t.same(parseHogqlMath("sum(length(splitByChar(',', properties.items)))").expr, { op: 'call', fn: 'length', type: 'number', args: [{ op: 'call', fn: 'splitByChar', type: 'text', args: [{ op: 'text', type: 'text', value: ',' }, { op: 'property', type: 'text', key: 'items' }] }] })
})
