/**
 * HogQL math, HogQL property filters and HogQL queries under hostile text: random token soups (the grammar's words,
 * operators and quotes, nested at random) and random characters are either read or refused with a 400 by the metric
 * reader (a HogqlMathError by the query reader), and whatever is read evaluates on random property texts and
 * compiles to ClickHouse SQL without throwing.
 */
import t from 'tap'
import { propertyFilters } from '../../../src/experiments/metrics.js'
import { planMetric } from '../../../src/experiments/query/metric.js'
import { hogqlConditionSql, hogqlContributionSql } from '../../../src/storage/events/clickhouse-hogql.js'
import { compileSearchRegex } from '../../../src/flags/index.js'
import { evaluateHogql, hogqlContribution, hogqlHolds, HogqlMathError } from '../../../src/storage/events/hogql-math.js'
import { hogqlQuerySql } from '../../../src/storage/events/clickhouse-query.js'
import { innermost } from '../../../src/storage/events/hogql-query.js'
import { parseHogqlQuerySet } from '../../../src/storage/events/hogql-union.js'
import { runHogqlQuery } from '../../../src/storage/events/hogql-query-run.js'
import type { Rng } from './rng.js'
import { fuzzCases, fuzzRun } from './run.js'

const RUN = fuzzRun(3_000)
const WORDS = ['properties.a', 'properties.$b', "properties['c d']", 'properties.`e`', 'properties', 'toFloat', 'coalesce', 'ifNull', 'if', 'abs', 'floor', 'ceil', 'intDiv', 'pow', 'ln', 'sign', 'isNull', 'isNotNull', 'lower', 'length', 'startsWith', 'match', 'substring', 'sum', 'avg', 'any', 'sumIf', 'count', 'quantile', 'and', 'or', 'not', 'null', 'true', '1', '2.5', '1e400', "'x'", "'5'", "'%x_'", '"q"', 'person', 'person.properties.p', 'event', 'distinct_id', 'like', 'ilike', 'in', 'has', 'splitByChar', 'arrayElement', 'indexOf', 'arrayStringConcat', "'/'", 'array', 'domain', 'path', 'extractURLParameter', 'decodeURLComponent', 'cutWWW', 'case', 'when', 'then', 'else', 'end', 'between', 'equals', 'notILike', 'notIn']
const PUNCT = ['(', ')', ',', '+', '-', '*', '/', '%', '=', '!=', '<', '>=', '.', '[', ']', "'", '`', '\\', ';', '??', '?', ':', '||', '?.']
const TEXTS = [null, '', '0', '-1.5', 'abc', '1e308', 'Infinity', 'NaN', '7', '{"a":1}', 'true']

function soup(rng: Rng, depth = 0): string {
  const parts: string[] = []
  for (let n = rng.int(6) + 1; n > 0; n--) {
    const r = rng.next()
    if (r < 0.45) parts.push(rng.pick(WORDS))
    else if (r < 0.8) parts.push(rng.pick(PUNCT))
    else if (depth < 8) parts.push(`${rng.pick(['', 'if', 'coalesce', 'sum', 'abs'])}(${soup(rng, depth + 1)}, ${soup(rng, depth + 1)})`)
  }
  return parts.join(rng.chance(0.5) ? ' ' : '')
}

/** An expression the grammar reads (mostly: operand types and arities are drawn at random too). */
function grammatical(rng: Rng, depth = 0): string {
  if (depth > 6 || rng.chance(0.3)) return rng.pick(WORDS.filter((w) => !/^[a-z]+$/i.test(w) || w === 'null' || w === 'true' || w === 'event'))
  return rng.weighted<() => string>([
    [3, () => `${grammatical(rng, depth + 1)} ${rng.pick(['+', '-', '*', '/', '%', '=', '!=', '<', '>=', 'and', 'or', '??', '||'])} ${grammatical(rng, depth + 1)}`],
    [1, () => `${grammatical(rng, depth + 1)} ? ${grammatical(rng, depth + 1)} : ${grammatical(rng, depth + 1)}`],
    [1, () => `${rng.pick(['-', 'not '])}${grammatical(rng, depth + 1)}`],
    [2, () => `${rng.pick(['toFloat', 'abs', 'floor', 'ceil', 'sqrt', 'intDiv', 'moduloOrZero', 'power', 'isNull', 'isNotNull', 'coalesce', 'ifNull', 'if', 'lower', 'upper', 'length', 'empty', 'notEmpty', 'startsWith', 'endsWith', 'match', 'substring'])}(${Array.from({ length: rng.int(3) + 1 }, () => grammatical(rng, depth + 1)).join(', ')})`],
    [1, () => `(${grammatical(rng, depth + 1)})`],
    [1, () => `${grammatical(rng, depth + 1)} ${rng.pick(['like', 'ilike', 'not like', 'NOT ILIKE'])} ${grammatical(rng, depth + 1)}`],
    [1, () => `${grammatical(rng, depth + 1)} ${rng.pick(['in', 'not in'])} ${rng.pick(['(', '['])}${Array.from({ length: rng.int(4) + 1 }, () => grammatical(rng, depth + 1)).join(', ')}${rng.pick([')', ']'])}`],
    // Arrays: literals and splits, indexed or read by the functions of arrays (or misread).
    [1, () => `${rng.pick([`[${grammatical(rng, depth + 1)}, ${grammatical(rng, depth + 1)}]`, `splitByChar('/', ${grammatical(rng, depth + 1)})`])}[${rng.pick(['1', '-1', '0', '2.5', grammatical(rng, depth + 1)])}]`],
    [1, () => `${rng.pick(['has', 'indexOf', 'length', 'arrayStringConcat', 'lower'])}(${rng.pick(["['x', '5']", '[1, null]', `splitByString('x', ${grammatical(rng, depth + 1)})`])}${rng.chance(0.7) ? `, ${grammatical(rng, depth + 1)}` : ''})`],
  ])()
}

/** One token of `text` dropped or doubled, or a stray one put in. */
function damaged(rng: Rng, text: string): string {
  const at = rng.int(text.length + 1)
  return rng.chance(0.5) ? text.slice(0, at) + rng.pick(PUNCT) + text.slice(at) : text.slice(0, at) + text.slice(at + 1 + rng.int(3))
}

t.test(`HogQL math under ${RUN.cases} hostile texts (FUZZ_SEED=${RUN.seed})`, async (t) => {
  fuzzCases(t, RUN, 'math_hogql', (rng) => {
    const inner = grammatical(rng)
    const text = rng.weighted<() => string>([
      [4, () => (rng.chance(0.5) ? `${rng.pick(['sum', 'avg', 'min', 'max', 'count'])}(${inner})` : inner)],
      [2, () => damaged(rng, inner)],
      [2, () => soup(rng)],
      [1, () => rng.bytes(rng.int(40)).toString('latin1')],
    ])()
    const metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'e', math: 'hogql', math_hogql: text } }
    const source = planMetric(metric, () => null).sources[0]
    if (source.kind !== 'hogql') return 'accepted none'
    for (let k = 0; k < 5; k++) {
      const value = evaluateHogql(source.hogql.expr, () => rng.pick(TEXTS), null, () => rng.pick(TEXTS) ?? '')
      const added = hogqlContribution(source.hogql, value)
      if (added !== null && !Number.isFinite(added)) throw new Error(`${text} added ${added}`)
    }
    hogqlContributionSql(source.hogql, (key) => `p[${JSON.stringify(key)}]`, 'h')
    return 'accepted some'
  })
})

t.test(`HogQL filters under ${RUN.cases} hostile texts (FUZZ_SEED=${RUN.seed})`, async (t) => {
  fuzzCases(t, RUN, 'HogQL filter', (rng) => {
    const text = rng.weighted<() => string>([
      [4, () => grammatical(rng)],
      [2, () => damaged(rng, grammatical(rng))],
      [1, () => soup(rng)],
      [1, () => rng.bytes(rng.int(40)).toString('latin1')],
    ])()
    const [node] = propertyFilters([{ type: 'hogql', key: text, value: null }])
    if (!('hogql' in node)) throw new Error(`${text} read as ${JSON.stringify(node)}`)
    for (let k = 0; k < 5; k++) hogqlHolds(node.hogql, () => rng.pick(TEXTS), compileSearchRegex, () => rng.pick(TEXTS) ?? '')
    hogqlConditionSql(node.hogql, (key) => `p[${JSON.stringify(key)}]`, 'h')
    return 'accepted some'
  })
})

const CLAUSE_WORDS = ['SELECT', 'DISTINCT', 'FROM', 'events', 'persons', 'groups', '(', ')', 'WHERE', 'GROUP BY', 'ORDER BY', 'LIMIT', 'OFFSET', 'HAVING', 'AS', 'ASC', 'DESC', 'JOIN', 'IS', 'NOT', 'NULL', '{filters}', '{', '}', '{x}', 'c0', 'count()', 'timestamp', 'created_at', 'now()', 'interval 1 day', 'toStartOfDay(timestamp)', "dateDiff('day', timestamp, now())", 'toHour(timestamp)', 'toStartOfInterval(timestamp, interval 3 hour)', 'toStartOfInterval(', "dateTrunc('week', timestamp)", 'toIntervalDay(2)', "formatDateTime(timestamp, '%F %a %", "'%Y-%m-%d %H:%i')", 'toString(', 'WITH', 'q AS (', 'UNION ALL', 'UNION', 'sessions', 'argMax(event, timestamp)', 'argMin(', 'IN (SELECT event FROM events)', 'IN (SELECT', "'2024-01-01'", '*', ',', '10', 'NULLS LAST', 'NULLS FIRST', 'e.', 'events.', 'count(*)', 'AS e', 'person_distinct_ids', 'person_id IN COHORT 1', 'IN COHORT', 'group_0.properties.x', 'group_1.', 'person.created_at', 'person.', "dateAdd('day', 1, timestamp)", 'addHours(', 'toYYYYMM(timestamp)', "extract(properties.a, '(\\\\d+)')", 'replaceRegexpAll(', '=~', '!~*', "'(?i)x'", "'\\\\1'", 'JOIN events f USING (event)', 'USING', 'USING distinct_id, event', 'toDateTime(', 'parseDateTimeBestEffort(properties.a', "'Europe/Berlin')", 'toDate(properties.a)', 'toWeek(timestamp, ', 'toISOYear(timestamp)', 'varSamp(', 'stddevPopIf(properties.a']

t.test(`HogQL queries under ${RUN.cases} hostile texts (FUZZ_SEED=${RUN.seed})`, async (t) => {
  const ZONES = ['UTC', 'Europe/Berlin']
  fuzzCases(t, RUN, 'HogQL query', (rng) => {
    const plain = () => (rng.chance(0.8) ? grammatical(rng) : rng.pick(['timestamp', 'uuid', 'toDate(timestamp)', 'now() - interval 2 hour', 'toStartOfInterval(timestamp, interval 5 minute)', "dateTrunc('month', timestamp)", 'now() - toIntervalWeek(1)', "formatDateTime(timestamp, '%F %r %W')", 'toString(toDate(timestamp))', 'group_0.properties.x', 'person.created_at', "dateAdd('hour', -2, timestamp)", 'person_id IN COHORT 3', "replaceRegexpOne(event, '(a|b)', '\\\\1\\\\1')", "properties.a =~* 'x|y'", "extract(event, '.$')"]))
    const one = () => `${rng.pick(['count', 'sum', 'avg', 'min', 'max', 'uniq', 'countIf'])}(${rng.chance(0.2) ? '' : grammatical(rng)})`
    // An aggregation, or an expression over aggregations and the key (its alias).
    const aggregate = () => (rng.chance(0.7) ? one() : rng.pick([`${one()} / ${one()}`, `round(${one()} * 100, 1)`, `concat(toString(c0), ${one()})`, "dateDiff('hour', min(timestamp), max(timestamp))", `${one()} IS NULL`]))
    // Plain columns, or a key and aggregations grouped by it.
    const grouped = rng.chance(0.4)
    const columns = grouped ? [`${plain()} AS c0`, ...Array.from({ length: rng.int(2) + 1 }, aggregate)] : Array.from({ length: rng.int(2) + 1 }, (_, i) => `${plain()} AS c${i}`)
    const clauses = [
      rng.chance(0.5) ? ` WHERE ${grammatical(rng)}${rng.chance(0.3) ? " AND timestamp > '2024-01-01'" : ''}` : '',
      grouped ? ' GROUP BY c0' : '',
      rng.chance(0.4) ? ` ORDER BY ${rng.pick(['c0', 'c0', grouped ? aggregate() : 'c0 * 2'])} ${rng.pick(['', 'DESC', 'ASC'])}` : '',
      rng.chance(0.3) ? ` LIMIT ${rng.int(20)}` : '',
    ]
    const whole = `SELECT ${!grouped && rng.chance(0.2) ? 'DISTINCT ' : ''}${columns.join(', ')} FROM ${rng.chance(0.9) ? 'events' : rng.pick(['persons', 'groups', 'sessions', 'person_distinct_ids'])}${clauses.join('')}`
    const text = rng.weighted<() => string>([
      [6, () => whole],
      [2, () => damaged(rng, whole)],
      [1, () => `SELECT ${rng.pick(['*', 'count()', 'c0', 'max(c0) / 2', 's.c0', 's.x', '`count()`', soup(rng)])} FROM (${rng.chance(0.8) ? whole : damaged(rng, whole)})${rng.pick(['', ' AS s', ' s', ' AS'])}`],
      [1, () => Array.from({ length: rng.int(12) + 1 }, () => rng.pick(CLAUSE_WORDS)).join(' ')],
      [1, () => `SELECT ${soup(rng)} FROM events`],
      [1, () => `WITH ${rng.pick(['q AS', 'q', '2 AS c0, q AS', 'q AS (SELECT 1),', soup(rng)])} (${rng.chance(0.8) ? whole : damaged(rng, whole)}) SELECT ${rng.pick(['*', 'count()', 'c0', 'q.c0', soup(rng)])} FROM ${rng.pick(['q', 'q AS s', 'events', '(SELECT * FROM q)'])}`],
    ])()
    let parts
    try {
      parts = parseHogqlQuerySet(rng.chance(0.1) ? `${text} UNION ${rng.pick(['ALL', 'DISTINCT', ''])} ${whole}` : text, { now: Date.UTC(2024, 5, 1), zone: rng.pick(ZONES), regex: compileSearchRegex }, 100).parts
    } catch (error) {
      if (error instanceof HogqlMathError) return 'accepted none'
      throw error
    }
    for (const plan of parts) {
      const events = Array.from({ length: 5 }, (_, k) => ({ uuid: `u${k}`, event: rng.pick(['a', 'b']), distinct_id: `d${k}`, person_id: `p${k}`, timestamp: Date.UTC(2024, 0, 1) + k * 3_600_000, texts: innermost(plan).paths.map(() => rng.pick(TEXTS)) }))
      runHogqlQuery(plan, events, compileSearchRegex)
      hogqlQuerySql(plan, 'events', 'team_id = 1', { version: '18.16.1', dateTime64: false, jsonExtract: false })
    }
    return 'accepted some'
  })
})
