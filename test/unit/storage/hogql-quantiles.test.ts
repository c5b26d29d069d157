import t from 'tap'
import { hogqlQuantile, type QuantileKind } from '../../../src/storage/events/hogql-values.js'
import { quantileSql } from '../../../src/storage/events/clickhouse-hogql-calls.js'
import { innermost, parseHogqlQuery } from '../../../src/storage/events/hogql-query.js'
import { runHogqlQuery } from '../../../src/storage/events/hogql-query-run.js'
import { parseHogqlMath } from '../../../src/storage/events/hogql-math.js'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { Rng, fuzzSeed } from '../fuzz/rng.js'

const KINDS: QuantileKind[] = ['exact', 'exactLow', 'exactHigh', 'exactInclusive', 'exactExclusive']
const range = (n: number) => Array.from({ length: n }, (_, i) => i)

t.test("the exact quantiles are ClickHouse's documented examples and the spreadsheets' percentiles", async (t) => {
  // ClickHouse's documentation: numbers(10), numbers(1000).
  t.equal(hogqlQuantile(range(10), 0.5, 'exact'), 5, 'quantileExact: the item at ⌊level × n⌋, the high median of an even count')
  t.equal(hogqlQuantile(range(10), 0.1, 'exactLow'), 1, 'quantileExactLow away from 0.5: quantileExact')
  t.equal(hogqlQuantile(range(10), 0.5, 'exactLow'), 4, 'medianExactLow: the low median')
  t.equal(hogqlQuantile(range(9), 0.5, 'exactLow'), 4, 'of an odd count the median')
  t.equal(hogqlQuantile(range(10), 0.5, 'exactHigh'), 5, 'medianExactHigh: the high median')
  t.equal(hogqlQuantile(range(10), 1, 'exact'), 9, 'level 1: the last')
  // Excel's PERCENTILE.INC and PERCENTILE.EXC (R-7 and R-6) of 0 … 999 at 0.6.
  t.equal(hogqlQuantile(range(1000), 0.6, 'exactInclusive'), 599.4, 'PERCENTILE.INC')
  t.equal(hogqlQuantile(range(1000), 0.6, 'exactExclusive'), 599.6, 'PERCENTILE.EXC')
  t.equal(hogqlQuantile([1, 2, 3, 4], 0.01, 'exactExclusive'), 1, 'exclusive below its first rank: the least')
  t.equal(hogqlQuantile([1, 2, 3, 4], 0.99, 'exactExclusive'), 4, 'and above its last: the greatest')
  t.equal(hogqlQuantile([3, NaN, 1, 2], 0.5, 'exact'), 2, 'NaN skipped, as ClickHouse skips it')
  t.ok(Number.isNaN(hogqlQuantile([NaN], 0.5, 'exactLow')), 'nothing but NaN: NaN')
  t.equal(hogqlQuantile([], 0.5, 'exactInclusive'), 0, "none: 0, PostHog's coalesce of an experiment entity's NULL")
  t.equal(hogqlQuantile([5, 1, 3], 0.5, 'exactInclusive'), hogqlQuantile([5, 1, 3], 0.5), "inclusive is quantile's own interpolation")
})

t.test('queries read quantileExact …, medianExact … and their -If; experiment math reads them too', async (t) => {
  const run = (text: string, values: Array<string | null>) => {
    const p = parseHogqlQuery(text, { now: 0, zone: 'UTC' })
    const rows = values.map((v, n) => ({ uuid: `u${n}`, event: n % 2 === 0 ? 'even' : 'odd', distinct_id: 'd', person_id: 'p', timestamp: n, texts: innermost(p).paths.map(() => v) }))
    return runHogqlQuery(p, rows, null).map((row) => row.slice(0, p.shown))
  }
  const values = ['4', '1', null, '3', '2', 'x', '5', '0']
  t.same(run('select medianExact(properties.n), medianExactLow(properties.n), medianExactHigh(properties.n), quantileExact(0.25)(properties.n), quantileExactInclusive(0.25)(properties.n), quantileExactExclusive(0.25)(properties.n) from events', values), [[3, 2, 3, 1, 1.25, 0.75]], 'of 0 … 5, the missing and the text skipped')
  t.same(run("select quantileExactIf(0.5)(properties.n, event = 'even'), medianExactLowIf(properties.n, event = 'odd'), quantileIf(0.5)(properties.n, event = 'even') from events", values), [[4, 1, 4]], 'the -If: of 4, 2, 5 (the even events) and 1, 3, 0 (the odd); quantileIf too')
  t.same(run("select medianExact(properties.n) from events where event = 'none'", values), [[null]], 'of no rows: NULL')
  t.equal(parseHogqlMath('quantileExactLow(0.9)(properties.amount)').kind, 'exactLow', 'experiment math reads the kind')
  t.same(parseHogqlMath("medianExactIf(properties.amount, event = 'x')").level, 0.5, 'and a median -If')
  const refused: Array<[string, RegExp]> = [
    ['select quantileExactExclusive(0)(properties.n) from events', /quantileExactExclusive\(\) takes its level as a number above 0 and below 1, as in quantileExactExclusive\(0\.9\)\(properties\.amount\)/],
    ['select quantileExact(1.5)(properties.n) from events', /quantileExact\(\) takes its level as a number from 0 to 1/],
    ['select quantileExactHigh(0.5) from events', /quantileExactHigh\(level\) takes the expression after its level/],
    ['select quantileExactIf(0.5)(properties.n) from events', /takes a value and a condition/],
    ['select quantileTDigest(0.5)(properties.n) from events', /quantileTDigest\(\) is not supported in HogQL queries here; .* medianExact, medianExactLow, medianExactHigh, quantileExact\(level\)/],
  ]
  for (const [text, message] of refused) t.throws(() => parseHogqlQuery(text, { now: 0, zone: 'UTC' }), message, text)
})

t.test('on ClickHouse 18.16 the written SQL gives every kind at every level as the evaluation does', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const server = await startClickHouse()
  t.teardown(() => server.destroy())
  const rng = new Rng(fuzzSeed(), 5)
  const pool = [0, -0, 1, -1, 2.5, 1e300, -1e300, Infinity, -Infinity, NaN, 7, 7, 3.25]
  const arrays = [[], [NaN], [NaN, NaN, 4], [5], ...Array.from({ length: 60 }, () => Array.from({ length: 1 + rng.int(12) }, () => (rng.chance(0.4) ? rng.pick(pool) : rng.int(100) - 50)))]
  const literal = (v: number) => (Number.isNaN(v) ? 'nan' : v === Infinity ? 'inf' : v === -Infinity ? '-inf' : `toFloat64(${v})`)
  const levels = [0, 0.01, 0.1, 0.25, 0.3, 0.5, 0.7, 0.9, 0.99, 1]
  const cases = KINDS.flatMap((kind) => levels.filter((l) => kind !== 'exactExclusive' || (l > 0 && l < 1)).map((level) => ({ kind, level })))
  const columns = cases.map(({ kind, level }, i) => `toString(${quantileSql('a', level, `s${i}`, kind)})`)
  // 18.16's own quantileExact, of the arrays without NaN (which it does not skip), beside the written SQL's.
  const own = levels.map((level) => `if(arrayExists(v -> isNaN(v), a) OR length(a) = 0, 'skip', toString(arrayReduce('quantileExact(${level})', a)))`)
  const sql = `SELECT ${[...columns, ...own].join(', ')} FROM (SELECT arrayJoin(arrayEnumerate(x)) AS i, x[i] AS a FROM (SELECT [${arrays.map((a) => `CAST([${a.map(literal).join(', ')}] AS Array(Float64))`).join(', ')}] AS x)) ORDER BY i FORMAT TSV`
  const res = await fetch(server.url, { method: 'POST', body: sql })
  const text = await res.text()
  t.equal(res.status, 200, res.status === 200 ? 'the SQL runs' : text.slice(0, 300))
  const read = (v: string) => (v === 'nan' || v === '-nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : Number(v))
  const same = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b))
  const rows = text.replace(/\n$/, '').split('\n').map((line) => line.split('\t'))
  const wrong = arrays.flatMap((a, r) => cases.flatMap(({ kind, level }, i) => (same(read(rows[r][i]), hogqlQuantile([...a], level, kind)) ? [] : [`${kind}(${level}) of [${a}]: ${rows[r][i]}`])))
  t.same(wrong.slice(0, 3), [], `${arrays.length} arrays × ${cases.length} kinds and levels, ${wrong.length} differ`)
  const unlike = arrays.flatMap((a, r) => levels.filter((level, j) => rows[r][cases.length + j] !== 'skip' && !same(read(rows[r][cases.length + j]), hogqlQuantile([...a], level, 'exact'))).map((level) => `${level} of [${a}]`))
  t.same(unlike.slice(0, 3), [], "quantileExact is 18.16's own where it has no NaN to skip")
})
