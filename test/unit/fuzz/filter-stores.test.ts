/**
 * Property filters pass the same events on SQLite, on ClickHouse (the CI's 18.16) and in the action matcher:
 * random leaves of every operator PostHog's filters have here (values and lists of texts, numbers, booleans
 * and nulls, regexes), random HogQL conditions, and AND/OR groups of them, over events whose properties take
 * the shapes that told the stores apart before (numbers' texts with spaces or signs, `inf`, JSON objects and
 * arrays, quotes, backslashes, LIKE's wildcards, non-ASCII letters, missing keys and nulls). And HogQL math:
 * what each of those events adds to a random aggregation, by ClickHouse's SQL and by the Node evaluation the
 * SQLite store runs.
 */
import t from 'tap'
import { propertyFilters } from '../../../src/experiments/metrics.js'
import { pathText, propertiesHold } from '../../../src/management/actions/properties.js'
import { propertyPathExpr } from '../../../src/storage/events/clickhouse-filters.js'
import { hogqlContributionSql } from '../../../src/storage/events/clickhouse-hogql.js'
import { evaluateHogql, hogqlContribution, parseHogqlMath, type HogqlMath } from '../../../src/storage/events/hogql-math.js'
import { URL_SPECS } from '../../../src/storage/events/hogql-urls.js'
import { textBytes } from '../../../src/storage/events/hogql-values.js'
import type { PropertyNode } from '../../../src/storage/events/index.js'
import { clickhouseEventStore, clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'
import { Rng, fuzzSeed } from './rng.js'

const TEAM = 8
const CASES = Number(process.env.FUZZ_UNIT_CASES ?? 150)
const SEED = fuzzSeed()
const ONLY = process.env.FUZZ_CASE === undefined ? null : Number(process.env.FUZZ_CASE)

const KEYS = ['a', 'b', '$c', 'odd "k"']
const VALUES: unknown[] = [
  '', 'x', 'X', 'abc', 'ÄBC', 'äbc', '  a b  ', 'a_b', 'a%b', "o'k", 'x"y', 'back\\slash', ' 3', '3', '+5', '-2.5', '.5', '5.', '1e3', '0x10', 'inf', 'NaN', 'true', 'null', '{"a":1}', 'a\nb',
  // URLs for the URL functions (hogql-urls.ts).
  'https://www.x.com/a?b=1#c', '//u@x.co.uk:8/p?a=%41&b', 'x.com/p?a=1&a=2', 'http://a.b@c/%E2%82%AC',
  0, 1, -1, 2.5, -0.5, 3, 1e21, 0.1, true, false, null, { a: 1 }, [1, 'x'], [],
  // Objects for HogQL's paths (`properties.a.x.u`), with a text that looks like one and an array where one may be.
  // Each level has keys of its own: on 18.16 a key that also appears nested before it is misread (architecture.md).
  { x: 'x', y: { u: -1, v: 2.5 } }, { y: { u: { w: 'deep' } }, x: null }, { x: [{ u: 1 }], y: '{"u":1}' }, { 'o"k': { u: true }, x: { v: 3 } },
]
const PATTERNS = ['^a', 'b$', '(?i)x', 'a(?i)B', '\\d', '^-?\\d+(\\.\\d+)?$', 'x|X', '[Ää]', '^$', '"', '\\\\', 'a.b', '^b', '(?m)^b', '(?-s).$', '^\\w+$', '\\bb', '(?i)ä', '\\s', '\\<a', 'b{,2}', '(?U)x+']
const OPERATORS = ['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte', 'is_set', 'is_not_set']
const HOGQL_TERMS = ['1e21', '-0', '1 / 0', '0.125', '-2.5', '0.5', '0.1 + 0.2', '1e-7', '-2.7', '9.3e18', "'+07'", "'9223372036854775807'", "'9223372036854775808'", "'-9223372036854775808'", 'properties.a', 'properties.b', 'properties.$c', 'properties.a.x', 'properties.b.y.u', 'properties.$c.y.v', "properties['odd \"k\"'].x.v", 'properties.a.y.u.w', "properties.b['o\"k'].u", 'properties.a.x.u', "properties['odd \"k\"']", 'distinct_id', 'event', "'x'", "'3'", "' 3'", "'abc'", '1', '2.5', '-1', 'null', 'true']

function scalar(rng: Rng): unknown {
  return rng.pick(VALUES.filter((v) => v === null || typeof v !== 'object'))
}

function hogqlTerm(rng: Rng, depth: number): string {
  if (depth > 2 || rng.chance(0.4)) return rng.pick(HOGQL_TERMS)
  return rng.weighted<() => string>([
    [3, () => `${hogqlTerm(rng, depth + 1)} ${rng.pick(['=', '!=', '<', '>=', '+', '*', '%', '||', 'and', 'or', 'like', 'ilike', 'not like'])} ${hogqlTerm(rng, depth + 1)}`],
    [2, () => `${rng.pick(['toFloat', 'isNull', 'isNotNull', 'lower', 'upper', 'length', 'empty', 'abs', 'sign', 'sqrt', 'trunc', 'toString', 'toInt', 'trim', 'trimLeft', 'trimRight'])}(${hogqlTerm(rng, depth + 1)})`],
    [1, () => `${rng.pick(['toInt8', 'toUInt8', 'toInt32', 'toUInt32', 'toInt64OrZero', 'toFloat64OrZero', 'toFloatOrNull'])}(${hogqlTerm(rng, depth + 1)})`],
    [1, () => `position(${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})`],
    [1, () => `${rng.pick(['intDiv', 'intDivOrZero', 'moduloOrZero'])}(${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})`],
    [1, () => `${rng.pick(['replaceAll', 'replaceOne'])}(${hogqlTerm(rng, depth + 1)}, ${rng.pick(["''", "'b'", "' '", "'Ä'", "'\\\\'"])}, ${rng.pick(["''", "'$1'", "'\\\\0'", "'xy'"])})`],
    [1, () => `concat(${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})`],
    // More functions of texts (hogql-texts.ts), and left and right (substrings).
    [1, () => `${rng.pick(['left', 'right'])}(${hogqlTerm(rng, depth + 1)}, ${rng.pick([-3, -1, 0, 1, 2, 9])})`],
    [1, () => `${rng.pick(['lengthUTF8', 'reverse'])}(${hogqlTerm(rng, depth + 1)})`],
    [1, () => `${rng.pick(['positionUTF8', 'positionCaseInsensitive'])}(${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})`],
    [1, () => `${rng.pick(['leftPad', 'rightPad'])}(${hogqlTerm(rng, depth + 1)}, ${rng.pick([0, 2, 5])}${rng.chance(0.5) ? '' : `, ${rng.pick(["''", "'Ä-'", "'0'"])}`})`],
    [1, () => `repeat(${hogqlTerm(rng, depth + 1)}, ${rng.pick([-1, 0, 2])})`],
    [1, () => `concatWithSeparator(${rng.pick(["'-'", "''", "'Ä, '"])}, ${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})`],
    [1, () => `appendTrailingCharIfAbsent(${hogqlTerm(rng, depth + 1)}, '${rng.pick(['/', 'c'])}')`],
    [1, () => `countSubstrings${rng.pick(['', 'CaseInsensitive'])}(${hogqlTerm(rng, depth + 1)}, ${rng.pick(["''", "'a'", "'Ä'", "'3'", "'X'"])})`],
    [1, () => `format(${rng.pick(["'{}-{}'", "'{1}{0}'", "'{{{0}}}'"])}, ${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})`],
    [1, () => `substring(${hogqlTerm(rng, depth + 1)}, ${rng.pick([-9, -3, -1, 0, 1, 2, 4])}, ${rng.pick([-4, -1, 0, 1, 2, 9])})`],
    [1, () => `round(${hogqlTerm(rng, depth + 1)}${rng.chance(0.3) ? '' : `, ${rng.pick([-20, -2, -1, 0, 1, 2, 3, 20])}`})`],
    [1, () => `coalesce(${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})`],
    [1, () => `${rng.pick(['greatest', 'least'])}(${Array.from({ length: rng.range(2, 3) }, () => hogqlTerm(rng, depth + 1)).join(', ')})`],
    [1, () => `if(${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})`],
    [1, () => `multiIf(${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})`],
    [1, () => `nullIf(${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})`],
    [1, () => (rng.chance(0.5) ? `${hogqlTerm(rng, depth + 1)} in (${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)})` : `${rng.pick(['in', 'notIn'])}(${hogqlTerm(rng, depth + 1)}, ${rng.pick(['(%)', '[%]']).replace('%', () => `${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)}`)})`)],
    [1, () => `match(${hogqlTerm(rng, depth + 1)}, '${rng.pick(PATTERNS).replace(/\\/g, '\\\\')}')`],
    // Arrays (hogql-arrays.ts): literals with Nullable items or none, splits of any text, indexes in and out of range.
    [1, () => `[${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)}][${rng.pick([-3, -1, 1, 2, 3])}]`],
    [1, () => `${rng.pick(['has', 'indexOf'])}(${rng.pick(["['x', 'abc', '3', '']", '[1, 2.5, -1, 0]', "splitByChar(' ', properties.a)", "[properties.a, 'x', null]"])}, ${hogqlTerm(rng, depth + 1)})`],
    [1, () => `splitBy${rng.pick(["Char('.'", "Char(' '", "String('b'", "String('Ä'"])}, ${hogqlTerm(rng, depth + 1)})[${rng.pick([-2, -1, 1, 2])}]`],
    [1, () => `${rng.pick(['length', 'empty', 'notEmpty'])}(splitByChar(',', ${hogqlTerm(rng, depth + 1)}))`],
    [1, () => `arrayStringConcat(splitByString('a', ${hogqlTerm(rng, depth + 1)})${rng.chance(0.5) ? ", '-'" : ''})`],
    [1, () => `${rng.pick(['hasAny', 'hasAll'])}(splitByChar(' ', ${hogqlTerm(rng, depth + 1)}), ${rng.pick(["['x', 'abc', '']", "splitByChar('b', properties.a)"])}) + countEqual(splitByChar('.', ${hogqlTerm(rng, depth + 1)}), '')`],
    // Remade arrays: sorted either way (NaN and NULL last), reversed, sliced.
    [1, () => `${rng.pick(['arraySort', 'arrayReverseSort', 'arrayReverse', 'arrayDistinct'])}([${hogqlTerm(rng, depth + 1)}, ${hogqlTerm(rng, depth + 1)}, ${rng.pick(['0', "'b'", 'null'])}])[${rng.pick([-1, 1, 2])}]`],
    [1, () => `arrayStringConcat(arraySlice(arraySort(splitByChar(' ', ${hogqlTerm(rng, depth + 1)})), ${rng.pick([1, 2])}${rng.chance(0.5) ? ', 1' : ''}), '/')`],
    // Lambdas: a drawn body of the item x (the term with x for its first properties.a) over texts, mapped, filtered or
    // tested; drawn twice as often, as many are refused (a text for a condition).
    [2, () => {
      const body = hogqlTerm(rng, depth + 1).replace(/properties\.a(?![.\w$])/, 'x')
      const arr = rng.pick([`splitByChar(' ', ${hogqlTerm(rng, depth + 1)})`, `[toString(${hogqlTerm(rng, depth + 1)}), 'b', null]`])
      return rng.pick([`arrayMap(x -> ${body}, ${arr})[${rng.pick([-1, 1, 2])}]`, `arrayStringConcat(arrayMap(x -> concat(${body}, x), ${arr}), '/')`, `arrayFilter(x -> ${body} ${rng.pick(['=', '!=', '<'])} x, ${arr})[1]`, `${rng.pick(['arrayExists', 'arrayAll', 'arrayCount'])}(x -> ${body}, ${arr})`, `arraySum(x -> ifNull(toFloat(${body}), -1), ${arr})`, `${rng.pick(['arrayFirst', 'arrayLast'])}(x -> isNotNull(${body}), ${arr})`])
    }],
    // CASE (multiIf, or `=`s with a subject) and BETWEEN (two comparisons, NULL reading 0 as PostHog's ifNull).
    [1, () => `CASE ${rng.chance(0.5) ? '' : `${hogqlTerm(rng, depth + 1)} `}WHEN ${hogqlTerm(rng, depth + 1)} THEN ${hogqlTerm(rng, depth + 1)}${rng.chance(0.5) ? ` WHEN ${hogqlTerm(rng, depth + 1)} THEN ${hogqlTerm(rng, depth + 1)}` : ''} ELSE ${hogqlTerm(rng, depth + 1)} END`],
    [1, () => `(${hogqlTerm(rng, depth + 1)} ${rng.pick(['', 'NOT '])}BETWEEN ${hogqlTerm(rng, depth + 1)} AND ${hogqlTerm(rng, depth + 1)})`],
    // `??` (ifNull) and `c ? a : b` (if), bound as PostHog's grammar binds them: unparenthesized among other operators.
    [1, () => `${hogqlTerm(rng, depth + 1)} ?? ${hogqlTerm(rng, depth + 1)}`],
    [1, () => `${hogqlTerm(rng, depth + 1)} ? ${hogqlTerm(rng, depth + 1)} : ${hogqlTerm(rng, depth + 1)}`],
    // The URL functions (hogql-urls.ts), several written out for 18.16; their lengths tell a text apart in any use.
    [1, () => `${rng.pick(['length', ''])}(${rng.pick(URL_SPECS.filter(([, fewest]) => fewest === 1))[0]}(${rng.pick(['properties.a', 'properties.b', hogqlTerm(rng, depth + 1)])}))`],
    [1, () => `${rng.pick(['length', ''])}(${rng.pick(['extractURLParameter', 'cutURLParameter'])}(${hogqlTerm(rng, depth + 1)}, '${rng.pick(['a', 'b', ''])}'))`],
  ])()
}

function leaf(rng: Rng): Record<string, unknown> {
  if (rng.chance(0.2)) return { type: 'hogql', key: hogqlTerm(rng, 0), value: null }
  const operator = rng.pick(OPERATORS)
  const regex = operator === 'regex' || operator === 'not_regex'
  const value = regex ? rng.pick(PATTERNS) : (operator === 'exact' || operator === 'is_not') && rng.chance(0.3) ? [scalar(rng), scalar(rng)] : scalar(rng)
  return { key: rng.pick(KEYS), operator, value, type: 'event' }
}

/** A leaf or an AND/OR group of nodes, read as the metrics read a leaf (a refusal throws). */
function node(rng: Rng, depth = 0): PropertyNode {
  if (depth < 2 && rng.chance(0.3)) return { type: rng.pick(['AND', 'OR'] as const), values: Array.from({ length: rng.int(3) + 1 }, () => node(rng, depth + 1)) }
  return propertyFilters([leaf(rng)])[0]
}

/** Events of random properties, each key present (with any value) or missing. */
function events(rng: Rng): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {}
  for (let i = 0; i < 60; i++) {
    const properties: Record<string, unknown> = {}
    for (const key of KEYS) if (rng.chance(0.75)) properties[key] = rng.pick(VALUES)
    out[`d${String(i).padStart(2, '0')}`] = properties
  }
  return out
}

t.test(`property filters under ${CASES} random conditions pass the same events on both stores and in the matcher (FUZZ_SEED=${SEED})`, { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const PROPERTIES = events(new Rng(SEED, 1_000_000))
  // Events of two names, so that HogQL's `event` tells them apart.
  const rows = pageviewRows(TEAM, PROPERTIES).map((row, i) => (i % 3 === 0 ? { ...row, event: 'signed up' } : row))
  const nameOf = new Map(rows.map((row) => [row.distinct_id, row.event]))
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_filter_stores_fuzz')
  const failures: string[] = []
  let read = 0
  for (let i = ONLY ?? 0; i < (ONLY === null ? CASES : ONLY + 1) && failures.length < 5; i++) {
    const rng = new Rng(SEED, i)
    let properties: PropertyNode[]
    try {
      properties = [node(rng)]
    } catch {
      continue // refused as a 400 where it is read (HogQL outside the subset): not what is compared here
    }
    read++
    const filter = { teamId: TEAM, properties }
    const matched = Object.keys(PROPERTIES).filter((id) => propertiesHold(properties, { event: nameOf.get(id)!, distinct_id: id, properties: PROPERTIES[id] }))
    let onSqlite: string[]
    let onClickHouse: string[]
    try {
      ;[onSqlite, onClickHouse] = [await sqlite.distinctIds(filter), await clickhouse.distinctIds(filter)]
    } catch (error) {
      failures.push(`case ${i}: ${JSON.stringify(properties)}\n  ${String(error).slice(0, 300)}`)
      continue
    }
    if (JSON.stringify(onSqlite) !== JSON.stringify(matched) || JSON.stringify(onClickHouse) !== JSON.stringify(matched)) {
      const differ = (ids: string[]) => Object.keys(PROPERTIES).filter((id) => ids.includes(id) !== matched.includes(id)).map((id) => `${id} ${JSON.stringify(PROPERTIES[id])}`)
      failures.push(`case ${i}: ${JSON.stringify(properties)}\n  SQLite differs on ${differ(onSqlite).join('; ') || 'none'}\n  ClickHouse differs on ${differ(onClickHouse).join('; ') || 'none'}`)
    }
  }
  t.same(failures, [], `the stores and the matcher agree (reproduce one: FUZZ_SEED=${SEED} FUZZ_CASE=<n>)`)
  t.ok(read > CASES / 2 || ONLY !== null, `most conditions were read (${read})`)
})

/**
 * Contributions alike (uniq's keys exactly), numbers to their last bit but one: 18.16 reads about one decimal text in
 * 20,000 a bit off (`toFloat64OrNull('2.53')` is 2.5300000000000002; docs/architecture.md, "Numbers"), and texts
 * that concat() writes are read back as numbers.
 */
function alike(got: unknown, want: ReadonlyArray<number | string | null>): boolean {
  if (!Array.isArray(got) || got.length !== want.length) return false
  return want.every((w, i) => {
    const g = got[i] as unknown
    return g === w || (typeof g === 'number' && typeof w === 'number' && Math.abs(g - w) <= Number.EPSILON * Math.max(Math.abs(g), Math.abs(w)))
  })
}

t.test(`HogQL math under ${CASES} random expressions adds the same on ClickHouse as in Node (FUZZ_SEED=${SEED})`, { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const PROPERTIES = Object.values(events(new Rng(SEED, 1_000_001)))
  const { ch, features } = await clickhouseEventStore(t, 'skylark_hogql_math_fuzz')
  const quoted = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
  // Each event's properties, name (two, so that `event` tells them apart) and distinct id.
  const fields = PROPERTIES.map((_, i) => ({ event: i % 3 === 0 ? 'signed up' : '$pageview', distinct_id: `d${i}` }))
  const rows = PROPERTIES.map((p, i) => `(${quoted(JSON.stringify(p))}, ${quoted(fields[i].event)}, ${quoted(fields[i].distinct_id)})`).join(', ')
  const table = `(SELECT tupleElement(r, 1) AS properties, tupleElement(r, 2) AS event, tupleElement(r, 3) AS distinct_id FROM (SELECT arrayJoin([${rows}]) AS r))`
  const failures: string[] = []
  let read = 0
  for (let i = ONLY ?? 0; i < (ONLY === null ? CASES : ONLY + 1) && failures.length < 5; i++) {
    const rng = new Rng(SEED, i)
    let math: HogqlMath
    try {
      const aggregation = rng.pick(['sum', 'avg', 'min', 'max', 'any', 'count', 'countIf', 'uniq', 'count(distinct', 'sumIf', 'maxIf'])
      const condition = aggregation.endsWith('If') && aggregation !== 'countIf' ? `, ${hogqlTerm(rng, 0)}` : ''
      math = parseHogqlMath(`${aggregation}(${hogqlTerm(rng, 0)}${condition})`.replace('(distinct(', '(distinct '))
    } catch {
      continue // refused (match(), a text: what math does not read)
    }
    read++
    // JSON, as uniq's keys are texts that may end in spaces.
    const sql = `SELECT ${hogqlContributionSql(math, (path) => propertyPathExpr(path, features), 'h')} AS c FROM ${table} FORMAT JSONEachRow`
    const res = await fetch(ch.url, { method: 'POST', body: sql })
    const answer = await res.text()
    const got = res.status === 200 ? answer.trimEnd().split('\n').map((line) => (JSON.parse(line) as { c: unknown }).c) : answer.slice(0, 300)
    // A key's bytes as Node reads ClickHouse's answer: a byte of no character (substring's cuts) is U+FFFD.
    const want = PROPERTIES.map((p, k) => hogqlContribution(math, evaluateHogql(math.expr, (path) => pathText(p, path), null, (field) => fields[k][field as 'event' | 'distinct_id']))).map((v) => (typeof v === 'string' ? textBytes(v).toString() : v))
    if (!alike(got, want)) failures.push(`case ${i}: ${JSON.stringify(math)}\n  ClickHouse ${JSON.stringify(got)}\n  Node       ${JSON.stringify(want)}`)
  }
  t.same(failures, [], `ClickHouse and Node agree (reproduce one: FUZZ_SEED=${SEED} FUZZ_CASE=<n>)`)
  t.ok(read > CASES / 3 || ONLY !== null, `enough expressions were read (${read})`)
})
