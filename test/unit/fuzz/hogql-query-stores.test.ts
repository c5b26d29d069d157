/**
 * HogQL queries give the same rows on SQLite (the plan run in Node) and on ClickHouse (the plan as SQL, the CI's
 * 18.16): random SELECTs of grouped aggregations or of plain columns (DISTINCT or not), with random conditions,
 * time bounds, periods (toStartOfDay …, toStartOfInterval, dateTrunc in zones with and without summer time, and of another zone's wall clock), orders and limits, over events
 * 37 hours apart whose properties take the shapes that told the stores apart before (numbers' texts, objects,
 * missing keys and nulls, non-ASCII letters), and person properties of some of their distinct ids (as persons.db's
 * texts would resolve them) and of their persons and groups (`group_<n>.properties`, `person.created_at` …); constant columns beside aggregations, HAVING, orders by aggregations not selected,
 * columns and orders over aggregations and keys (`sum(x) / count()`, `concat(toString(k0), …)`), columns reading
 * another's alias, the parts of dates and times (toHour …, dateDiff, formatDateTime), the events' other stored columns
 * and SELECT *, the sessions table, conditions of `x IN (SELECT …)`, and queries of such a query as a subquery or
 * named WITH, or joined with itself or with the events; and arrays' reads (arr[i], has, indexOf, length, arrayStringConcat).
 * Every query orders its rows completely, so two right answers are one.
 */
import t from 'tap'
import { compileSearchRegex } from '../../../src/flags/index.js'
import { fillInSet, fillLookup, innermost, joinRows, parseHogqlQuery, runHogqlQuery, withPersons, type HogqlQueryPlan, type LookupOf, type LookupValues } from '../../../src/storage/events/index.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'
import { Rng, fuzzSeed } from './rng.js'

const TEAM = 9
const CASES = Number(process.env.FUZZ_UNIT_CASES ?? 150)
const SEED = fuzzSeed()
const ONLY = process.env.FUZZ_CASE === undefined ? null : Number(process.env.FUZZ_CASE)
const T0 = Date.parse('2024-02-01T00:00:00Z')
const STEP = 37 * 3_600_000
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']
const PERIODS = [
  ...['toStartOfMinute', 'toStartOfHour', 'toStartOfDay', 'toDate', 'toStartOfWeek', 'toMonday', 'toStartOfMonth', 'toStartOfQuarter', 'toStartOfYear', 'toStartOfFifteenMinutes'].map((fn) => `${fn}(timestamp)`),
  'toStartOfWeek(timestamp, 3)',
  ...['90 second', '7 minute', '5 hour', '3 day', '2 week', '1 week', '5 month', '2 quarter', '3 year', '1000 month', '1500 month', '3000 year', '1000000 second'].map((interval) => `toStartOfInterval(timestamp, interval ${interval})`),
  ...['hour', 'week', 'month'].map((unit) => `dateTrunc('${unit}', timestamp)`),
  'toStartOfDay(toDateTime(properties.a))',
  // Of another zone's wall clock (toTimeZone's, a zone argument's): a date of one is that day's on the project's.
  "toStartOfDay(timestamp, 'Asia/Tokyo')",
  "toStartOfMonth(toTimeZone(timestamp, 'America/New_York'))",
  "toStartOfHour(toTimeZone(timestamp, 'Asia/Kolkata'))",
  "toDate(toTimeZone(timestamp, 'Pacific/Kiritimati'))",
  "dateTrunc('week', timestamp, 'America/New_York')",
  // Periods' ends and starts built of others (hogql-zones.ts), and choices of dates and times.
  'toLastDayOfMonth(timestamp)',
  "toStartOfISOYear(toTimeZone(timestamp, 'Pacific/Kiritimati'))",
  'toLastDayOfWeek(timestamp, 1)',
  'coalesce(toDateTime(properties.b), timestamp)',
  "greatest(toStartOfDay(timestamp), toDateTime('2024-03-01'))",
]

const KEYS = ['a', 'b', '$c', 'n']
const VALUES: unknown[] = ['', 'x', 'X', 'abc', 'a\nb c', 'ÄBC', 'äbc', ' 3', '3', '-2.5', '1e3', 'inf', 'true', 0, 1, -1, 2.5, -0.5, 3, 1e21, true, false, null, { x: 'x', y: 2 }, [1, 'x'], 'https://www.x.com/a?b=1#c', '//u@x.co.uk:8/p?a=%C3%A4&b&a=1',
  // Dates and times toDateTime reads: in New York's and Berlin's skipped hours and the day after, with fractions and offsets, impossible.
  '2024-03-10 02:30:00', '2024-03-31T02:30:00.25', '2024-02-29 23:59:59.999999', '2024-03-02T10:00:00Z', '2024-03-05 12:00 +05:30', '2024-02-30', '2024-03-01', '2024-03-10 12:00', '2024-03-31 09:45:00']
/** Person property texts as persons.db resolves them: strings unquoted, other JSON as written. */
const PERSON_TEXTS = ['', 'x', 'ÄBC', 'äbc', '3', ' 3', '-2.5', '1e3', 'true', '{"x":"x"}', '[1,"x"]']
const TERMS = ['person.properties.p', 'person.properties.q', 'properties.a', 'properties.b', 'properties.$c', 'properties.n', 'properties.a.x', 'properties.a.y', 'event', 'distinct_id', "'x'", '1', '2.5', '-1', 'null', 'toFloat(properties.n)', 'length(properties.a)', 'lower(properties.b)', "concat(event, '-', properties.$c)", 'round(properties.n / 3, 1)', 'properties', 'length(properties)', 'elements_chain', '$group_0', 'group_0.properties.g', 'group_1.properties.g', 'group_0.key', 'person.id', 'person.is_identified', '$session_id', '$window_id',
  // The regex functions (hogql-regex.ts): groups, a class of ASCII's, a plain pattern, an empty match.
  "extract(properties.a, '[0-9]+')", "extract(toString(properties.b), '(?i)(b)c|x')", "replaceRegexpAll(properties.$c, '[^a-z]', '_')", "replaceRegexpOne(lower(properties.a), '(\\\\w)(\\\\w)', '\\\\2\\\\1')", "replaceRegexpOne(properties.b, '^', '>')", "replaceRegexpAll(toString(properties.n), '.', '\\\\0\\\\0')", "replaceRegexpAll(properties.a, 'b', '\\\\0')",
  // Arrays (hogql-arrays.ts): splits of every shape of text, indexes in and out of range, literals with Nullable items.
  "splitByChar(' ', properties.a)[2]", "splitByString('b', toString(properties.n))[-1]", "length(splitByChar(',', properties.$c))", "has(['x', 'abc', ''], properties.b)", "indexOf(['3', ' 3', 'true'], properties.n)", "['z', properties.a, lower(properties.b)][3]", "[properties.n, 'q'][-3]", "arrayStringConcat(splitByChar('x', concat(event, properties.a)), '+')", 'has([1, 3, -0.5], toFloat(properties.n))', '[1, 2.5][-1] + [toFloat(properties.n), 4][1]', "has(splitByChar('.', properties.n), '5')", "empty(splitByString('ab', properties.a))", "has([properties.a, 'x'], properties.b)", "indexOf([properties.b, null, 'abc'], properties.a)",
  "arrayStringConcat(arraySort(splitByChar(' ', properties.a)), '|')", "arrayReverseSort([toFloat(properties.n), 2, toFloat(properties.b) / 0])[2]", "arraySlice(arrayReverse(splitByString('b', properties.$c)), 2, 1)[1]", "indexOf(arraySort([3, 1, -0.5]), toFloat(properties.n))", "toString(arraySort([toFloat(properties.n), -0.5, length(properties.a)])[-1])",
  "countEqual(splitByChar(' ', properties.a), 'x')", "hasAny(splitByChar('b', properties.$c), ['a', '', 'x'])", "hasAll(splitByChar(',', properties.$c), splitByChar(',', lower(properties.b)))", "countEqual([1, -0, 2.5, 0], toFloat(properties.n))",
  "length(arrayDistinct(splitByChar(' ', properties.a)))", "arrayStringConcat(arrayDistinct(splitByChar('b', lower(properties.b))), '|')", "toString(arrayDistinct([toFloat(properties.n), 0, -0, 1])[2])",
  // Lambdas: bodies of the item, of the event's values and of another lambda's item.
  "arrayStringConcat(arrayMap(x -> upper(x), splitByChar(' ', properties.a)), '|')", 'arrayCount(x -> x > 1, [toFloat(properties.n), 2, length(properties.a), 0 / 0])', "arrayFirst(x -> x != '', splitByChar('b', properties.$c))", "arrayFilter(x -> length(x) > 1, splitByChar(' ', lower(properties.b)))[1]",
  "arraySum(x -> ifNull(toFloat(x), 0.5), splitByChar(' ', properties.a))", "arraySum(arrayMap(x -> length(x), splitByChar('b', properties.$c)))", "arrayExists(x -> x = properties.b, splitByChar(' ', properties.a))", "arrayAll(x -> notEmpty(x), splitByChar(',', properties.$c))", "arrayLast(x -> x < 3, arrayMap(x -> toFloat(x), splitByChar(' ', properties.a)))", "arrayCount(x -> arrayExists(y -> y = x, splitByChar('b', properties.$c)), splitByChar(' ', properties.a))",
  // CASE and BETWEEN.
  "CASE WHEN properties.n > 1 THEN 'big' WHEN properties.a = 'x' THEN event ELSE properties.b END", "CASE properties.a WHEN 'x' THEN 1 WHEN NULL THEN 2 ELSE toFloat(properties.n) END", '(properties.n BETWEEN -1 AND 2.5)', "(properties.a NOT BETWEEN 'a' AND 'x')",
  // `??` and `c ? a : b`.
  "(properties.a ?? properties.b ?? 'none')", "(properties.n > 1 ? properties.a : properties.a.x ?? event)",
  // Scalar subqueries: a number, a text, and NULL (no row).
  "(select count() from events where properties.n > 2)", "(select any(properties.a) from events where properties.n = 1)", "(select max(properties.b) from events where event = 'none')",
  // URL functions (hogql-urls.ts): those 18.16 computes otherwise are written out.
  'domain(properties.a)', 'domainWithoutWWW(toString(properties.b))', 'topLevelDomain(properties.$c)', 'path(properties.a)', 'pathFull(lower(properties.b))', 'queryStringAndFragment(properties.$c)', "extractURLParameter(properties.a, 'a')", 'cutQueryStringAndFragment(properties.b)', 'decodeURLComponent(properties.$c)', 'cutWWW(properties.a)', 'protocol(properties.b)', 'port(properties.$c)', "cutURLParameter(properties.a, 'a')",
  // More functions of texts (hogql-texts.ts), left and right.
  "concatWithSeparator('|', left(properties.a, 2), right(properties.b, -1), repeat(properties.$c, 2), properties.n)", "leftPad(lower(properties.a), 4, 'Ä-') || rightPad(properties.b, 3)",
  "lengthUTF8(properties.a) * 100 + positionUTF8(properties.$c, 'ä') + positionCaseInsensitive(properties.b, 'X') * 10 + countSubstrings(properties.a, 'a')", "reverse(appendTrailingCharIfAbsent(properties.b, '/'))",
  "format('{1}:{0}{{}}', properties.a, lower(event), properties.$c) || toString(countSubstringsCaseInsensitive(properties.b, 'X'))"]
/** Numbers and texts of dates and times: their parts on the zone's wall clock, dateDiff's boundaries crossed, formatDateTime's texts. */
const CALENDAR = [
  'toHour(timestamp)',
  'toDayOfWeek(timestamp)',
  'toDayOfWeek(timestamp, 2) * 10 + toDayOfWeek(timestamp, 1)',
  'toDayOfMonth(timestamp) * 100 + toMonth(timestamp)',
  'toYear(timestamp) * 10 + toQuarter(timestamp)',
  'toMinute(timestamp) + toSecond(timestamp)',
  'toUnixTimestamp(timestamp)',
  'toUnixTimestamp(created_at)',
  // Of the person's and group's created_at, zone-free: a key of none reads 1970 (0), whose wall clock west of UTC is in
  // 1969, which 18.16's calendar does not reach (PostHog's ClickHouse and Node do).
  'toUnixTimestamp(person.created_at)',
  'toUnixTimestamp(group_0.created_at)',
  'toMonth(toStartOfWeek(timestamp))',
  // Days and weeks on the wall clock (dayShift): 23 or 25 hours across a change of summer time.
  'toUnixTimestamp(timestamp + interval 30 day) - toUnixTimestamp(timestamp)',
  "toHour(dateAdd('week', -2, timestamp)) * 100 + toDayOfMonth(timestamp - interval 1 day)",
  'toDayOfMonth(toStartOfInterval(timestamp, interval 2 week)) + toHour(dateTrunc(\'hour\', timestamp))',
  "dateDiff('day', toDateTime('2024-02-01 00:00:00'), timestamp)",
  "dateDiff('week', toDateTime('2024-02-04 23:00:00'), timestamp)",
  "dateDiff('month', timestamp, toDateTime('2024-03-31 12:00:00'))",
  "dateDiff('hour', toDateTime('2024-03-10 01:30:00'), timestamp)",
  "dateDiff('minute', timestamp, now())",
  "dateDiff('quarter', toDate(timestamp), toDateTime('2024-04-01'))",
  "formatDateTime(timestamp, '%F %T.%f %a %W %b %M %y %C %e %j %I %p %Q %u %w %%')",
  "formatDateTime(toStartOfInterval(created_at, interval 2 week), '%D %r')",
  'toString(toDate(timestamp))',
  "dateDiff('day', toDate('2024-02-10'), fromUnixTimestamp(toUnixTimestamp(timestamp) + properties.n))",
  // Texts read as dates and times (hogql-datetime-text.ts), of the project's zone or another.
  "dateDiff('second', toDateTime(properties.b), timestamp) + toUnixTimestamp(toDateTime(toFloat(properties.n) * 1e8))",
  "toHour(parseDateTimeBestEffort(properties.a)) * 100 + toMinute(toDateTime(properties.$c, 'America/New_York'))",
  "formatDateTime(parseDateTime64BestEffortOrNull(properties.a, 'Europe/Berlin'), '%F %T.%f')",
  'toString(toDate(properties.b))',
  // Week numbers (hogql-instants.ts's yearWeek) on the zone's wall clock.
  'toISOWeek(timestamp) * 10000 + toWeek(timestamp, 5) * 100 + toWeek(created_at, 8)',
  "toYearWeek(timestamp) + toISOYear(timestamp) + toYearWeek(toDateTime(properties.a), 7)",
  // Another zone's wall clock (hogql-zones.ts).
  "toHour(toTimeZone(timestamp, 'Asia/Tokyo')) * 100 + toDayOfWeek(timestamp, 1, 'Pacific/Kiritimati')",
  "formatDateTime(timestamp, '%F %T', 'America/St_Johns')",
  "toYearWeek(timestamp, 3, 'UTC') + toDayOfMonth(toTimeZone(timestamp, 'Europe/Berlin') + interval 2 day)",
  "dateDiff('day', toTimeZone(timestamp, 'Asia/Kolkata'), toDateTime('2024-03-31 12:00:00', 'America/New_York'))",
  "toUnixTimestamp(toDate(toTimeZone(timestamp, 'Pacific/Kiritimati'))) + toMinute(toDateTime(properties.b, 'Asia/Kolkata'))",
  "toString(toDate(toTimeZone(timestamp, 'UTC')))",
  "toYYYYMMDDhhmmss(timestamp) % 1000000 + timeZoneOffset(toTimeZone(timestamp, 'America/St_Johns')) + toUnixTimestamp(toStartOfSecond(timestamp))",
  "concat(toString(toLastDayOfMonth(toTimeZone(timestamp, 'Asia/Kolkata'))), monthName(timestamp), timeZoneOf(toTimeZone(timestamp, 'UTC')), toString(toStartOfISOYear(timestamp)))",
  "toHour(if(properties.n > 1, toDateTime(properties.a), timestamp)) + toDayOfMonth(least(timestamp, toDateTime('2024-02-20')))",
  // dateName and age (hogql-date-parts.ts).
  "age('month', toDateTime('2024-01-31 12:00:00'), timestamp) * 1000 + age('week', timestamp, toDateTime(properties.b)) * 10 + age('hour', created_at, timestamp)",
  "concat(dateName('weekday', timestamp), dateName('week', toTimeZone(timestamp, 'Asia/Tokyo')), dateName('dayofyear', toDate(timestamp)), dateName('month', created_at))",
]
const CONDITIONS = ["toTimeZone(timestamp, 'Asia/Tokyo') < '2024-03-05 09:00'", "toTimeZone(timestamp, 'UTC') >= toDate('2024-03-02')", "toStartOfDay(timestamp, 'Asia/Tokyo') = toDate(timestamp)", "person.created_at > toDateTime('2024-01-20 00:00:00')", "toDateTime(properties.b) > '2024-03-01 12:00'", 'toDate(properties.a) = toDate(timestamp)', 'person_id in cohort 1', 'person_id not in cohort 2', "distinct_id in (select distinct_id from events where properties.n > 2 and event != 'signed up')", 'properties.n not in (select max(properties.n) from events group by properties.$c)', 'properties.b in (select properties.b from events where properties.n < 3)', 'properties.n > (select avg(toFloat(properties.n)) from events)', "properties.a = (select any(properties.a) from events where properties.n = 1) or properties.b || 'x' = (select max(properties.b) from events) || 'x'", 'properties.a.x is not null', 'properties.$c is null', 'properties.n > 2', "properties.a = 'x'", 'isNull(properties.b)', "event = 'signed up'", "properties.$c like '%3%'", 'properties.n * 2 < 7', "distinct_id in ('d01', 'd07', 'd33')", "not (properties.a ilike 'ä%')", "properties.a =~ '^[a-z]'", "properties.$c !~* 'ä|\\\\s'"]

function term(rng: Rng, depth = 0): string {
  if (depth > 1 || rng.chance(0.6)) return rng.chance(0.12) ? rng.pick(CALENDAR) : rng.pick(TERMS)
  return rng.weighted<() => string>([
    [2, () => `${term(rng, depth + 1)} ${rng.pick(['+', '*', '-'])} ${term(rng, depth + 1)}`],
    [1, () => `${term(rng, depth + 1)} % ${rng.chance(0.5) ? term(rng, depth + 1) : rng.pick(['3', '0', '-2.5'])}`],
    [1, () => `${rng.pick(['intDiv', 'intDivOrZero', 'moduloOrZero'])}(${term(rng, depth + 1)}, ${rng.chance(0.5) ? term(rng, depth + 1) : rng.pick(['2', '0', '-0.5'])})`],
    // Not exp, log or pow: V8's and the server's libm differ in the last digit, which a text of the number shows.
    [1, () => `${rng.pick(['sqrt', 'sign', 'trunc', 'floor', 'ceil', 'abs'])}(${term(rng, depth + 1)})`],
    [1, () => `coalesce(${term(rng, depth + 1)}, ${term(rng, depth + 1)})`],
    [1, () => `if(${rng.pick(CONDITIONS)}, ${term(rng, depth + 1)}, ${term(rng, depth + 1)})`],
  ])()
}

function condition(rng: Rng): string {
  const parts = Array.from({ length: rng.int(2) + 1 }, () => rng.pick(CONDITIONS))
  if (rng.chance(0.4)) parts.push(`timestamp ${rng.pick(['>', '>=', '<', '<='])} '2024-${rng.pick(['02', '03', '04'])}-${String(rng.int(28) + 1).padStart(2, '0')} ${String(rng.int(24)).padStart(2, '0')}:00:00'`)
  if (rng.chance(0.2)) parts.push(rng.pick(["timestamp > toDateTime('2024-03-10T00:00:00Z') - interval 5 day", 'timestamp < yesterday()', 'toDate(timestamp) >= today() - interval 30 day', "timestamp < toDateTime('2024-03-31 10:00:00') - interval 1 month"]))
  if (rng.chance(0.2)) parts.push(`${rng.pick(PERIODS)} ${rng.pick(['=', '>=', '<'])} '2024-03-${String(rng.int(28) + 1).padStart(2, '0')}'`)
  return parts.join(rng.chance(0.7) ? ' and ' : ' or ')
}

/** A term, or half the time one of many values over the events (a quantile's kinds differ where the middle values do). */
const spread = (rng: Rng) => (rng.chance(0.5) ? `toUnixTimestamp(timestamp) % ${rng.pick(['97', '1000', '7'])}` : term(rng))

function aggregation(rng: Rng): string {
  return rng.weighted<() => string>([
    [2, () => 'count()'],
    [2, () => `${rng.pick(['count', 'sum', 'avg', 'min', 'max', 'uniq'])}(${term(rng)})`],
    [1, () => `countIf(${rng.pick(CONDITIONS)})`],
    [1, () => `${rng.pick(['sumIf', 'maxIf', 'uniqIf', 'anyIf', 'medianIf', 'uniqExactIf', 'countDistinctIf', 'medianExactLowIf'])}(${term(rng)}, ${rng.pick(CONDITIONS)})`],
    [1, () => `${rng.pick(["count(distinct ", "countDistinct("])}${term(rng)})`],
    [1, () => (rng.chance(0.5) ? `median(${term(rng)})` : `quantile(${rng.pick(['0', '0.25', '0.9', '1'])})(${term(rng)})`)],
    // ClickHouse's exact quantiles (hogql-values.ts's QuantileKind), plain and -If, of values that differ from event to event half the time.
    [1, () => `${rng.pick(['quantileExact', 'quantileExactLow', 'quantileExactHigh', 'quantileExactInclusive'])}(${rng.pick(['0', '0.3', '0.5', '1'])})(${spread(rng)})`],
    [2, () => `${rng.pick(['medianExact', 'medianExactLow', 'medianExactHigh'])}(${spread(rng)})`],
    [1, () => (rng.chance(0.5) ? `quantileExactExclusive(${rng.pick(['0.01', '0.5', '0.99'])})(${spread(rng)})` : `quantileExactIf(0.7)(${spread(rng)}, ${rng.pick(CONDITIONS)})`)],
    [1, () => (rng.chance(0.7) ? `${rng.pick(['min', 'max', 'any'])}(timestamp)` : `${rng.pick(['minIf', 'maxIf'])}(timestamp, ${rng.pick(CONDITIONS)})`)],
    [1, () => `${rng.pick(['any', 'anyLast'])}(${term(rng)})`],
    [1, () => `${rng.pick(['argMin', 'argMax'])}(${rng.chance(0.2) ? 'timestamp' : term(rng)}, timestamp)`],
    [1, () => (rng.chance(0.7) ? `${rng.pick(['varPop', 'varSamp', 'stddevPop', 'stddevSamp', 'skewPop', 'skewSamp', 'kurtPop', 'kurtSamp'])}(${term(rng)})` : `${rng.pick(['varPopIf', 'stddevSampIf', 'kurtSampIf'])}(${term(rng)}, ${rng.pick(CONDITIONS)})`)],
    [1, () => (rng.chance(0.7) ? `${rng.pick(['covarPop', 'covarSamp', 'corr'])}(${term(rng)}, ${term(rng)})` : `${rng.pick(['covarSampIf', 'corrIf'])}(${term(rng)}, ${term(rng)}, ${rng.pick(CONDITIONS)})`)],
  ])()
}

/** An array of a group's values (groupArray, groupUniqArray, topK, of at most n), or quantiles': a column of the answer only, so never read by another. */
function arrayOfGroup(rng: Rng): string {
  const value = rng.pick(['properties.a', 'properties.n', 'toFloat(properties.n)', 'event', 'lower(properties.b)', 'left(properties.$c, 2)', 'toUnixTimestamp(timestamp) % 7', 'toFloat(properties.b) / 0'])
  const name = rng.pick(['groupArray', 'groupUniqArray', 'groupArray(2)', 'groupUniqArray(3)', 'topK(1)', 'topK(3)'])
  if (rng.chance(0.25)) return `${rng.pick(['quantiles', 'quantilesExact', 'quantilesExactLow', 'quantilesExactHigh', 'quantilesExactInclusive'])}(${rng.pick(['0.5', '0, 1', '0.9, 0.1, 0.5'])})(${spread(rng)})`
  if (rng.chance(0.7)) return `${name}(${value})`
  const conditional = name.replace(/^(\w+)/, '$1If')
  return rng.chance(0.2) ? `quantilesIf(0.3, 0.6)(${spread(rng)}, ${rng.pick(CONDITIONS)})` : `${conditional}(${value}, ${rng.pick(CONDITIONS)})`
}

/** An aggregation compared with numbers: not of dates and times. */
function numeric(rng: Rng): string {
  for (;;) {
    const text = aggregation(rng)
    if (!/\(timestamp[,)]/.test(text)) return text
  }
}

/** The keys k0 … by alias that are no date and time (functions don't take one). */
const plainKeys = (keys: readonly string[]) => keys.flatMap((k, i) => (/^(toStartOf|toDate|toMonday|dateTrunc|toLastDay|coalesce\(toDateTime|greatest\(toStartOf)/.test(k) ? [] : [`k${i}`]))

/** An expression over aggregations and the plain keys, computed once the groups are. */
function overGroups(rng: Rng, keys: readonly string[]): string {
  const plain = plainKeys(keys)
  return rng.weighted<() => string>([
    [2, () => `${numeric(rng)} ${rng.pick(['+', '-', '*', '/'])} ${rng.chance(0.5) ? numeric(rng) : rng.pick(['2', '0.5', '-1'])}`],
    [1, () => `round(${numeric(rng)} / ${numeric(rng)}, 2)`],
    [1, () => `coalesce(${numeric(rng)}, -1) * 2`],
    [plain.length > 0 ? 1 : 0, () => `concat(toString(${rng.pick(plain)}), '/', toString(${numeric(rng)}))`],
    [plain.length > 0 ? 1 : 0, () => `lower(toString(${rng.pick(plain)}))`],
    [1, () => `dateDiff('${rng.pick(['second', 'minute', 'hour', 'day', 'week', 'month'])}', min(timestamp), max(timestamp))`],
    // Arrays over aggregations (count() is UInt64 in ClickHouse) and keys.
    [1, () => `[${rng.pick(['count()', 'uniq(distinct_id)', `sum(${term(rng)})`])}, ${rng.pick(['7', '-0.5', 'null', `avg(${term(rng)})`])}][${rng.pick([1, -1, 3])}]`],
    [plain.length > 0 ? 1 : 0, () => `has(${rng.pick(["['x', 'abc', '']", "splitByChar('b', toString(count()))"])}, toString(${rng.pick(plain)}))`],
    // The functions of arrays over a group's array (groupArray's).
    [1, () => {
      const [texts, numbers] = [`${rng.pick(['groupArray', 'groupUniqArray', 'topK(2)', 'groupArray(2)'])}(${rng.pick(['properties.a', 'event', 'lower(properties.b)'])})`, rng.chance(0.3) ? `quantiles(0.2, 0.8)(${spread(rng)})` : `${rng.pick(['groupArray', 'groupUniqArray', 'topK(2)'])}(${rng.pick(['toFloat(properties.n)', 'toUnixTimestamp(timestamp) % 7'])})`]
      return rng.pick([`length(${texts})`, `arrayStringConcat(${rng.pick(['arraySort', 'arrayReverseSort', 'arrayReverse', 'arrayDistinct'])}(${texts}), '|')`, `arraySlice(${numbers}, 2, 2)[${rng.pick([1, -1])}]`, `arrayStringConcat(${texts}, '|')`, `countEqual(${texts}, 'x') + hasAny(${numbers}, [0, 1, 2.5])`, `hasAll(${texts}, ['x', 'abc'])`, `${texts}[${rng.pick([1, -1, 3])}]`, `has(${texts}, ${rng.pick(["'x'", "'abc'", "'view'"])})`, `indexOf(${numbers}, ${rng.pick(['1', '0', '2.5'])}) * 10 + empty(${numbers})`, `arrayCount(x -> x > 1, ${numbers}) + arraySum(${numbers})`, `arrayStringConcat(arrayMap(x -> concat(x, '!'), ${texts}), '|')`, `arrayFirst(x -> x != 'x', ${texts})`])
    }],
  ])()
}

/** HAVING over aggregations (selected or not) and the keys k0 … by alias (those of no date and time: functions don't take one). */
function havingCondition(rng: Rng, keys: readonly string[]): string {
  const plain = plainKeys(keys)
  const parts = Array.from({ length: rng.int(2) + 1 }, () =>
    rng.weighted<() => string>([
      [3, () => `${numeric(rng)} ${rng.pick(['>', '>=', '<', '=', '!='])} ${rng.pick(['0', '1', '2', '3.5', "'2'"])}`],
      [1, () => `max(timestamp) ${rng.pick(['>', '<'])} '2024-03-${String(rng.int(28) + 1).padStart(2, '0')}'`],
      [plain.length > 0 ? 1 : 0, () => `${rng.pick(['isNotNull', 'isNull'])}(${rng.pick(plain)})`],
      [plain.length > 0 ? 1 : 0, () => `toString(${rng.pick(plain)}) ${rng.pick(['<', '!='])} 'x'`],
    ])(),
  )
  return parts.join(rng.pick([' and ', ' or ']))
}

/** A query whose rows are ordered completely: by its group keys, by its (distinct) columns, or by uuid last. */
function query(rng: Rng): string {
  const where = rng.chance(0.6) ? ` WHERE ${condition(rng)}` : ''
  const limit = rng.chance(0.5) ? ` LIMIT ${rng.int(40) + 1}` : ''
  const direction = () => `${rng.pick(['ASC', 'DESC'])}${rng.chance(0.2) ? ' NULLS FIRST' : ''}`
  // LIMIT n BY some columns, which the complete orders make one answer.
  const by = (names: string[]) => (rng.chance(0.25) && names.length > 0 ? ` LIMIT ${rng.int(3) + 1} BY ${rng.pick(names)}${rng.chance(0.3) ? `, ${rng.pick(names)}` : ''}` : '')
  if (rng.chance(0.5)) {
    const period = () => (rng.chance(0.2) ? `toDate(timestamp) ${rng.pick(['+', '-'])} interval ${rng.pick(['1 day', '2 week', '3 hour'])}` : rng.pick(PERIODS))
    const keys = Array.from({ length: rng.int(2) + (rng.chance(0.2) ? 0 : 1) }, () => (rng.chance(0.3) ? period() : term(rng)))
    const aggregates = Array.from({ length: rng.int(3) + 1 }, () => (rng.chance(0.1) ? arrayOfGroup(rng) : rng.chance(0.25) ? overGroups(rng, keys) : aggregation(rng)))
    const constant = keys.length === 0 && rng.chance(0.5) ? [`${rng.pick(["'x'", 'today()', '1 + 2.5', 'null', "concat('a', 'b')"])} AS k`] : []
    const columns = [...constant, ...keys.map((k, i) => `${k} AS k${i}`), ...aggregates]
    const having = rng.chance(0.4) ? ` HAVING ${havingCondition(rng, keys)}` : ''
    // An aggregation not selected may order first; the keys then order completely.
    const first = rng.chance(0.3) ? [`${rng.chance(0.7) ? numeric(rng) : overGroups(rng, keys)} ${rng.pick(['ASC', 'DESC'])}`] : []
    const group = keys.length > 0 ? ` GROUP BY ${keys.map((_, i) => `k${i}`).join(', ')}${having} ORDER BY ${[...first, ...keys.map((_, i) => `k${i} ${direction()}`)].join(', ')}` : having
    return `SELECT ${columns.join(', ')} FROM events${where}${group}${keys.length > 0 ? by(keys.map((_, i) => `k${i}`)) : ''}${limit}`
  }
  if (rng.chance(0.05)) return `SELECT * FROM events${where} ORDER BY uuid${limit}`
  if (rng.chance(0.05)) return `SELECT * FROM sessions ORDER BY session_id${limit}`
  const timed: boolean[] = []
  const columns = Array.from({ length: rng.int(3) + 1 }, (_, i) => {
    timed.push(rng.chance(0.15))
    // A column may read one before it by its alias.
    const earlier = timed.flatMap((time, j) => (j < i && !time ? [`c${j}`] : []))
    const text = timed[i] ? rng.pick(['timestamp', 'created_at', rng.pick(PERIODS)]) : earlier.length > 0 && rng.chance(0.3) ? `concat(toString(${rng.pick(earlier)}), '|', ${term(rng)})` : term(rng)
    return `${text} AS c${i}`
  })
  const order = columns.map((_, i) => `${rng.chance(0.2) ? i + 1 : `c${i}`} ${direction()}`)
  const names = columns.map((_, i) => `c${i}`)
  if (rng.chance(0.4)) return `SELECT DISTINCT ${columns.join(', ')} FROM events${where} ORDER BY ${order.join(', ')}${by(names)}${limit}`
  // Ordered by time first, as keyset paging is: the embedded store reads the events in that order and stops early.
  const byTime = rng.chance(0.2) ? [`timestamp ${rng.pick(['ASC', 'DESC'])}`] : []
  return `SELECT ${columns.join(', ')}, uuid FROM events${where} ORDER BY ${[...byTime, ...order, 'uuid'].join(', ')}${by(names)}${limit}`
}

/**
 * A query of `inner` (whose plan is `of`): aggregations of its columns, or its rows grouped by one, or all of them,
 * each column read by its name quoted. Every order is complete, as the subquery's own.
 */
function ofSubquery(rng: Rng, inner: string, of: HogqlQueryPlan): string {
  const columns = of.columns.slice(0, of.shown)
  const name = (i: number) => quoted(columns[i].name)
  const numeric = columns.flatMap((c, i) => (c.time === null && c.type !== 'String' && c.type !== 'Nullable(String)' && c.type !== 'UUID' ? [i] : []))
  const aggregate = () => {
    const i = rng.int(columns.length)
    return rng.weighted<() => string>([
      [2, () => `${rng.pick(['min', 'max', 'uniq', 'count'])}(${name(i)})`],
      [numeric.length > 0 ? 2 : 0, () => `${rng.pick(['sum', 'avg'])}(${name(rng.pick(numeric))})`],
      [1, () => 'count()'],
    ])()
  }
  const alias = rng.chance(0.3) ? ' AS s' : ''
  // Functions take no date and time here.
  const untimed = columns.flatMap((c, i) => (c.time === null ? [i] : []))
  const where = untimed.length > 0 && rng.chance(0.4) ? ` WHERE ${name(rng.pick(untimed))} IS NOT NULL` : ''
  // Or the same subquery named WITH.
  const named = rng.chance(0.3)
  const from = named ? `q${alias}` : `(${inner})${alias}`
  return `${named ? `WITH q AS (${inner}) ` : ''}${rng.weighted<() => string>([
    [2, () => `SELECT ${Array.from({ length: rng.int(3) + 1 }, aggregate).join(', ')} FROM ${from}${where}`],
    [2, () => `SELECT ${name(0)} AS k, ${aggregate()} FROM ${from}${where} GROUP BY k ORDER BY k ${rng.pick(['ASC', 'DESC'])}`],
    [1, () => `SELECT * FROM ${from}${where} ORDER BY ${columns.map((_, i) => i + 1).join(', ')}${rng.chance(0.5) ? ` LIMIT ${rng.int(20) + 1}` : ''}`],
  ])()}`
}

/**
 * A join of `inner` (whose plan is `of`) with itself, or of the events with it on a text column: counts and extremes of
 * the joined rows, a condition of one side (which may move into its query), every join kind. The sides run on each
 * store, then join in Node (hogql-join.ts), so the stores' sides are what this compares.
 */
function ofJoin(rng: Rng, inner: string, of: HogqlQueryPlan): string {
  const columns = of.columns.slice(0, of.shown)
  const name = (i: number) => quoted(columns[i].name)
  const kind = rng.pick(['', 'INNER ', 'LEFT ', 'RIGHT ', 'FULL OUTER '])
  const texts = columns.flatMap((c, i) => (c.time === null && (c.type === 'String' || c.type === 'Nullable(String)') ? [i] : []))
  // Functions take no date and time here.
  const untimed = columns.flatMap((c, i) => (c.time === null ? [i] : []))
  const k = rng.int(columns.length)
  const withEvents = texts.length > 0 && rng.chance(0.4)
  const on = withEvents ? `e.${rng.pick(['distinct_id', 'event', '$session_id'])} = b.${name(rng.pick(texts))}` : `a.${name(k)} = b.${name(k)}`
  const from = withEvents ? `events e ${kind}JOIN (${inner}) b ON ${on}` : `(${inner}) a ${kind}JOIN (${inner}) b ${rng.chance(0.3) ? `USING (${name(k)})` : `ON ${on}`}`
  const condition = withEvents ? rng.pick(["e.event != 'signed up'", "e.timestamp > '2024-03-01'", 'e.properties.n > 1']) : untimed.length > 0 ? `a.${name(rng.pick(untimed))} IS NOT NULL` : null
  const where = condition !== null && rng.chance(0.5) ? ` WHERE ${condition}` : ''
  const left = withEvents ? 'e.uuid' : untimed.length > 0 ? `a.${name(rng.pick(untimed))}` : null
  const extremes = left === null ? '' : `, uniq(${left}), min(${left})`
  return `SELECT count(), count(b.${name(rng.int(columns.length))})${extremes} FROM ${from}${where}`
}

/**
 * Numbers to their last bits: the stores add floats in different orders, and 18.16 reads a decimal text in 20,000 a bit
 * off. NaN and infinities are null, as answers write them (ClickHouse's JSON does so already).
 */
/** A column's name as a quoted identifier: its backslashes and backquotes escaped, as HogQL reads escapes there. */
const quoted = (name: string) => `\`${name.replace(/[\\`]/g, (c) => `\\${c}`)}\``

function alike(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && !Number.isFinite(a)) a = null
  if (typeof b === 'number' && !Number.isFinite(b)) b = null
  if (typeof a === 'number' && typeof b === 'number') return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b))
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => alike(x, b[i]))
  return a === b
}

/**
 * The same rows in the same order; where a row holds −0, in any order: 0 and −0 group apart on both stores but order
 * as equal, so rows that differ only there come in either.
 */
function sameRows(a: unknown[][], b: unknown[][]): boolean {
  if (alike(a, b)) return true
  const byText = (rows: unknown[][]) => [...rows].sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1))
  return a.some((row) => row.some((v) => Object.is(v, -0))) && alike(byText(a), byText(b))
}

/** Rows as JSON with what JSON would write as null (NaN, ±Infinity) and −0 told apart. */
const shown = (rows: unknown[][]) => JSON.stringify(rows, (_, v) => (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)) ? `<${v === 0 ? '-0' : v}>` : v))

t.test(`HogQL queries under ${CASES} random SELECTs give the same rows on both stores (FUZZ_SEED=${SEED})`, { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const rng0 = new Rng(SEED, 1_000_000)
  const properties: Record<string, Record<string, unknown>> = {}
  for (let i = 0; i < 60; i++) {
    const p: Record<string, unknown> = {}
    for (const key of KEYS) if (rng0.chance(0.75)) p[key] = key === 'n' ? rng0.pick([0, 1, 2, 3, 4, 5, 2.5, '4', null]) : rng0.pick(VALUES)
    if (rng0.chance(0.5)) p.$session_id = rng0.pick(['s1', 's2', 'Ünï', 3, null])
    if (rng0.chance(0.5)) p.$current_url = rng0.pick(['https://x.io/a', 'https://x.io/b', '', 7])
    properties[`d${String(i).padStart(2, '0')}`] = p
  }
  const persons = ['p', 'q'].map((key) => {
    const byText = new Map<string, string[]>()
    for (const id of Object.keys(properties)) {
      if (!rng0.chance(0.7)) continue
      const text = rng0.pick(PERSON_TEXTS)
      byText.set(text, [...(byText.get(text) ?? []), id])
    }
    return { path: [key] as const, values: [...byText].map(([text, ids]) => ({ text, ids })) }
  })
  // What persons.db has of the events' groups (their keys below: acme and Ünï of type 0, b of type 1) and persons.
  const groupKeys = [['acme', 'Ünï', 'other'], ['b']]
  const groupValues = groupKeys.map((keys) => keys.map((key) => ({ text: rng0.pick(PERSON_TEXTS), ids: [key] })))
  const personIds = Object.keys(properties).filter(() => rng0.chance(0.8))
  const personFields = {
    id: personIds.map((id, i) => ({ text: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, ids: [id] })),
    created_at: personIds.map((id) => ({ text: T0 - rng0.int(100) * 86_400_000 + rng0.int(86_400) * 1000, ids: [id] })),
    is_identified: [0, 1].map((v) => ({ text: v, ids: personIds.filter((_, i) => i % 2 === v) })),
  }
  const lookupValues = (of: LookupOf): LookupValues => {
    // Cohort 1 as its members; cohort 2 as the persons not in it (too many members), a key of none then a member.
    if (of.holder === 'cohort') return [{ text: of.cohort === 1 ? 1 : 0, ids: personIds.filter((_, i) => i % 3 === 0) }]
    if ('path' in of) return groupValues[of.index] ?? []
    if (of.holder === 'person') return personFields[of.field]
    return (groupKeys[of.index] ?? []).map((key, i) => ({ text: of.field === 'key' ? key : T0 - i * 3_600_000, ids: [key] }))
  }
  // created_at in whole seconds: 18.16 keeps no more.
  const rows = pageviewRows(TEAM, properties).map((row, i) => ({
    ...row,
    timestamp: T0 + i * STEP,
    created_at: T0 + i * STEP + rng0.int(100_000) * 1000,
    event: i % 3 === 0 ? 'signed up' : i % 5 === 0 ? '$autocapture' : row.event,
    groups: [rng0.pick(['', 'acme', 'Ünï']), rng0.pick(['', 'b']), '', '', rng0.pick(['', 'z'])] as const,
    elements_chain: rng0.pick(['', 'a:nth-child="1"', 'button.btn:text="Ok"']),
  }))
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_hogql_query_fuzz')
  const failures: string[] = []
  let compared = 0
  for (let i = ONLY ?? 0; i < (ONLY === null ? CASES : ONLY + 1) && failures.length < 5; i++) {
    const rng = new Rng(SEED, i)
    const zone = rng.pick(ZONES)
    const clock = { now: T0 + 30 * STEP, zone, regex: compileSearchRegex }
    let text = query(rng)
    let plan: HogqlQueryPlan
    try {
      // A query of a query (or a join) reads its columns, which an array is not read as.
      const arrays = /group(Uniq)?Array|topK|quantiles/.test(text)
      if (!arrays && rng.chance(0.2)) text = ofSubquery(rng, text, parseHogqlQuery(text, clock))
      else if (!arrays && rng.chance(0.1)) text = ofJoin(rng, text, parseHogqlQuery(text, clock))
      const parsed = parseHogqlQuery(text, clock)
      for (const lookup of parsed.lookups) fillLookup(lookup, lookupValues(lookup.of), lookup.of.holder === 'cohort' && lookup.of.cohort === 2 ? 1 : undefined)
      plan = withPersons(parsed, persons.filter((p) => innermost(parsed).personPaths.some((path) => path[0] === p.path[0])))
    } catch (error) {
      failures.push(`case ${i} (${zone}): ${text}\n  refused: ${(error as Error).message}`)
      continue
    }
    try {
      // Each store runs the subqueries of IN, then the query with their values filled.
      const runOn = async (store: Pick<typeof sqlite, 'hogqlQuery'>) => {
        for (const set of plan.inSets) fillInSet(set, (await store.hogqlQuery(TEAM, set.plan)).map((row) => row[0]))
        if (plan.join === null) return store.hogqlQuery(TEAM, plan)
        const sides = []
        for (const side of plan.join.sides) sides.push(await store.hogqlQuery(TEAM, side))
        return runHogqlQuery(plan, await joinRows(plan.join, sides, compileSearchRegex), compileSearchRegex).map((row) => row.slice(0, plan.shown))
      }
      const [onSqlite, onClickHouse] = [await runOn(sqlite), await runOn(clickhouse)]
      compared++
      if (!sameRows(onSqlite, onClickHouse)) failures.push(`case ${i} (${zone}): ${text}\n  SQLite     ${shown(onSqlite)}\n  ClickHouse ${shown(onClickHouse)}`)
    } catch (error) {
      failures.push(`case ${i} (${zone}): ${text}\n  ${String(error).slice(0, 400)}`)
    }
  }
  t.same(failures, [], `the stores agree (reproduce one: FUZZ_SEED=${SEED} FUZZ_CASE=<n>)`)
  t.equal(compared, ONLY === null ? CASES : 1, 'every query was read and run')
})
