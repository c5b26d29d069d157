import t from 'tap'
import { HogqlMathError, parseHogqlMath } from '../../../src/storage/events/hogql-math.js'
import { datetimeMs } from '../../../src/storage/events/hogql-datetime-text.js'
import { innermost, parseHogqlQuery } from '../../../src/storage/events/hogql-query.js'
import { fillInSet } from '../../../src/storage/events/hogql-in.js'
import { fillLookup } from '../../../src/storage/events/hogql-lookups.js'
import { runHogqlQuery, type QueryDistinctId, type QueryEvent, type QueryGroup, type QueryPerson } from '../../../src/storage/events/hogql-query-run.js'

const NOW = Date.parse('2024-03-10T12:00:00Z')
const plan = (text: string, zone = 'UTC') => parseHogqlQuery(text, { now: NOW, zone })

/** Events n = 0…count-1, a minute apart from 2024-03-01: properties `n`, and `m` (n mod 5, none when 0), as the plan reads them. */
function events(count: number, paths: readonly (readonly string[])[]): QueryEvent[] {
  return Array.from({ length: count }, (_, n) => {
    const texts: Record<string, string | null> = { n: String(n), m: n % 5 === 0 ? null : String(n % 5) }
    return {
      uuid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      event: n % 2 === 0 ? 'even' : 'odd',
      distinct_id: `u${n % 3}`,
      person_id: `p${n % 3}`,
      timestamp: Date.parse('2024-03-01T00:00:00Z') + n * 60_000,
      texts: paths.map((p) => texts[p[0]] ?? null),
    }
  })
}
function run(text: string, count = 10) {
  const p = plan(text)
  return runHogqlQuery(p, events(count, innermost(p).paths), null).map((row) => row.slice(0, p.shown))
}

t.test('the clauses of a SELECT make its plan; words that begin clauses are property keys after a dot', async (t) => {
  const p = plan("select event AS e, count() from events where properties.from = 'x' group by e order by e desc limit 7;")
  t.same(p.columns.map((c) => [c.name, c.type, c.math?.aggregation ?? null]), [['e', 'String', null], ['count()', 'UInt64', 'count']])
  t.match(p, { grouped: true, distinct: false, fetch: 7, paginated: false, orderBy: [{ column: 0, desc: true }] })
  t.same(p.paths, [['from']])
  t.match(plan('select properties, length(properties) from events'), { readsProperties: true, paths: [], columns: [{ type: 'String' }, { type: 'Nullable(Float64)' }] }, 'properties whole')
  t.equal(p.readsProperties, false)
  t.match(plan('SELECT properties.a FROM events'), { fetch: 101, paginated: true, grouped: false }, 'no LIMIT: 100 rows and one to tell whether there are more')
  t.equal(plan('select event from events limit 900000').fetch, 50_000, "LIMIT is capped at PostHog's 50,000")
  t.match(plan('select distinct event from events').columns, [{ name: 'event' }], 'DISTINCT holds the columns')
  t.equal(plan('select properties.a   +  1 from events').columns[0].name, 'properties.a   +  1', 'a column without alias is named by its text')
  t.match(plan("select(event) from events where (event = 'a' or event = 'b') group by(event) order by(event)"), { columns: [{ name: '(event)' }], where: { op: 'or' }, groupBy: [{ op: 'field' }] }, 'a clause word before a parenthesis')
})

t.test('dates and times: texts compared with timestamp are read in the project zone, and WHERE bounds the events read', async (t) => {
  t.equal(datetimeMs('2024-01-31', 'UTC'), Date.parse('2024-01-31T00:00:00Z'))
  t.equal(datetimeMs('2024-01-31 12:30', 'Europe/Berlin'), Date.parse('2024-01-31T11:30:00Z'), "the zone's wall clock")
  t.equal(datetimeMs('2024-01-31T12:30:00.5+02:00', 'Europe/Berlin'), Date.parse('2024-01-31T10:30:00.500Z'), 'an offset of its own')
  t.equal(datetimeMs('2024-01-31 00:00:00.1234', 'UTC'), Date.parse('2024-01-31T00:00:00Z') + 123.4, 'below the millisecond kept')
  t.same(['2024-02-30', 'yesterday', '2024-01-31 25:00'].map((s) => datetimeMs(s, 'UTC')), [null, null, null])
  const p = plan("select event from events where timestamp >= '2024-03-01' and '2024-03-02' > timestamp and properties.a = '1'", 'Europe/Berlin')
  t.same([p.after, p.before], [Date.parse('2024-02-29T23:00:00Z'), Date.parse('2024-03-01T23:00:00Z')])
  const between = plan("select event from events where timestamp between '2024-03-01' and '2024-03-02' and event = 'x'", 'Europe/Berlin')
  t.same([between.after, between.before], [Date.parse('2024-02-29T23:00:00Z'), Date.parse('2024-03-01T23:00:00Z') + 1], "BETWEEN's two comparisons bound the events read too (its upper bound kept)")
  // NOW is 2024-03-10 12:00 UTC: 13:00 in Berlin, 07:00 in New York.
  const day = (text: string, zone: string) => new Date(runHogqlQuery(plan(`select ${text} from events`, zone), [{ uuid: 'u', event: 'e', distinct_id: 'd', person_id: 'p', timestamp: 0, texts: [] }], null)[0][0] as number).toISOString()
  t.same([day('today()', 'Europe/Berlin'), day('yesterday()', 'America/New_York')], ['2024-03-09T23:00:00.000Z', '2024-03-09T05:00:00.000Z'], "today() and yesterday() on the zone's wall clock")
  t.match(plan('select today() from events').columns, [{ time: 'date', type: 'Date' }])
  const recent = plan('select event from events where timestamp > now() - interval 2 hour')
  t.equal(recent.after, NOW - 7_200_000)
  t.same([plan('select event from events where timestamp > now() or 1').after], [undefined], 'a bound under OR bounds nothing')
  t.match(plan('select timestamp, max(timestamp) from events group by timestamp').columns, [{ time: 'datetime', type: "DateTime64(6, 'UTC')" }, { time: 'datetime' }])
  t.match(plan('select count(timestamp) from events').columns, [{ time: null, type: 'UInt64' }])
})

t.test("intervals of months and years shift constant dates on the project's wall clock, the day cut to the month's end", async (t) => {
  const at = (text: string, zone = 'UTC') => {
    const value = runHogqlQuery(plan(`select ${text} from events`, zone), [{ uuid: 'u', event: 'e', distinct_id: 'd', person_id: 'p', timestamp: 0, texts: [] }], null)[0][0]
    return new Date(value as number).toISOString()
  }
  t.equal(at('now() - interval 1 month'), '2024-02-10T12:00:00.000Z')
  t.equal(at("toDateTime('2024-03-31 10:00:00') - interval 1 month"), '2024-02-29T10:00:00.000Z', 'the 31st of March less a month is the last of February')
  t.equal(at("toDateTime('2024-02-29 00:00:00') + interval 1 year"), '2025-02-28T00:00:00.000Z')
  t.equal(at("toDateTime('2024-01-15 00:00:00') + interval 2 quarters"), '2024-07-15T00:00:00.000Z')
  t.equal(at("toDateTime('2024-04-15 12:00:00') - interval 1 month", 'Europe/Berlin'), '2024-03-15T11:00:00.000Z', 'noon in Berlin before and after summer time')
  t.equal(at('toStartOfMonth(now()) - interval 1 month + interval 2 day'), '2024-02-03T00:00:00.000Z')
  t.match(plan('select today() - interval 3 month from events').columns, [{ time: 'date', type: 'Date' }], 'a date stays a date')
  t.equal(plan('select event from events where timestamp >= now() - interval 1 month').after, Date.parse('2024-02-10T12:00:00Z'), 'and bounds the events read')
  t.throws(() => plan('select timestamp - interval 1 month from events'), /not to timestamp or a property.s date: compare instead/)
  t.throws(() => plan('select now() - interval 1 fortnight from events'), /second, minute, hour, day, week, month, quarter or year/)
  t.throws(() => plan('select now() - interval 0.5 month from events'), /a whole number of them/)
  t.throws(() => plan('select now() + interval 9999999 year from events'), /past the years a date and time can hold/)
})

t.test("parts of dates and times are read on the project zone's wall clock; dateDiff counts the boundaries crossed", async (t) => {
  // Berlin's summer time began at 01:00Z on Sunday 2024-03-31: 00:30Z is 01:30 there, 01:30Z is 03:30.
  const at = (iso: string): QueryEvent => ({ uuid: iso, event: 'e', distinct_id: 'u', person_id: 'p', timestamp: Date.parse(iso), texts: [] })
  const rowsIn = (zone: string, text: string, instants: string[]) => runHogqlQuery(plan(text, zone), instants.map(at), null)
  const parts = 'select toYear(timestamp), toQuarter(timestamp), toMonth(timestamp), toDayOfMonth(timestamp), toDayOfWeek(timestamp), toHour(timestamp), toMinute(timestamp), toSecond(timestamp), toUnixTimestamp(timestamp) from events order by timestamp'
  t.same(rowsIn('Europe/Berlin', parts, ['2024-03-31T00:30:00Z', '2024-03-31T01:30:15.5Z', '2024-12-31T23:30:00Z']), [
    [2024, 1, 3, 31, 7, 1, 30, 0, 1711845000],
    [2024, 1, 3, 31, 7, 3, 30, 15, 1711848615],
    [2025, 1, 1, 1, 3, 0, 30, 0, 1735687800],
  ])
  t.same(rowsIn('Asia/Kolkata', 'select toHour(timestamp), toMinute(timestamp) from events', ['2024-03-31T00:10:00Z']), [[5, 40]], 'a half-hour zone')
  const diffs = "select dateDiff('hour', toDateTime('2024-03-30 12:00:00'), timestamp), dateDiff('day', toDateTime('2024-03-30 23:00:00'), timestamp), dateDiff('week', toDateTime('2024-03-30 12:00:00'), timestamp), dateDiff('month', toDateTime('2024-01-31 23:59:00'), timestamp), dateDiff('year', timestamp, toDateTime('2023-12-31 12:00:00')) from events"
  // From 11:00Z on the 30th to 00:30Z: 13 hours crossed (an hour is an hour across the change); a day; Saturday to Sunday is no week (weeks from Monday).
  t.same(rowsIn('Europe/Berlin', diffs, ['2024-03-31T00:30:00Z']), [[13, 1, 0, 2, -1]])
  t.same(rowsIn('UTC', "select dateDiff('second', toDateTime('2024-01-01 00:00:00.900'), timestamp), dateDiff('mi', timestamp, now()) from events", ['2024-01-01T00:00:01.100Z']), [[1, 100_080]], 'seconds crossed, not elapsed; an abbreviated unit')
  t.same(run("select event, dateDiff('minute', min(timestamp), max(timestamp)) from events group by event order by event"), [['even', 8], ['odd', 8]], 'over aggregations of each group')
  t.same(run('select toHour(timestamp) as h, count() from events group by h'), [[0, 10]], 'a key')
  t.throws(() => plan("select dateDiff('fortnight', timestamp, now()) from events"), /dateDiff\(\) takes a unit/)
  t.throws(() => plan("select dateDiff('day', '2024-01-01', timestamp) from events"), /dateDiff\(\) takes a unit/)
  t.throws(() => plan('select toHour(properties.n) from events'), /toHour\(\) takes one date and time/)
  t.throws(() => plan('select toHour(timestamp) + interval 1 day from events'), /read here whole, compared, or plus or minus an interval/)
})

t.test('dateAdd, add<Unit>s, timestampAdd and their subtractions move a date and time as an interval does; toYYYYMM(DD) and toDayOfYear are its parts', async (t) => {
  const at = (iso: string): QueryEvent => ({ uuid: iso, event: 'e', distinct_id: 'u', person_id: 'p', timestamp: Date.parse(iso), texts: [] })
  const rowsIn = (zone: string, text: string) => runHogqlQuery(plan(text, zone), [at('2024-01-31T23:30:00Z')], null)
  // 23:30Z on January 31 is 00:30 on February 1 in Berlin, the year's 32nd day.
  t.same(rowsIn('Europe/Berlin', 'select toYYYYMM(timestamp), toYYYYMMDD(timestamp), toDayOfYear(timestamp) from events'), [[202402, 20240201, 32]])
  const shifts = "select dateAdd('day', 7, timestamp), date_sub('hour', 2, timestamp), addMinutes(timestamp, -30), subtractWeeks(timestamp, 1), timestampAdd(timestamp, interval 1 second), dateAdd('month', 1, toDateTime('2024-01-31 12:00:00')) from events"
  const hour = 3_600_000
  const ms = Date.parse('2024-01-31T23:30:00Z')
  t.same(rowsIn('UTC', shifts), [[ms + 168 * hour, ms - 2 * hour, ms - hour / 2, ms - 168 * hour, ms + 1000, Date.parse('2024-02-29T12:00:00Z')]], "as + and - an interval: a month on, the day cut to February's end")
  t.same(plan("select dateAdd('day', 1, timestamp) from events").columns[0].type, "DateTime64(6, 'UTC')", 'a date and time')
  t.throws(() => plan("select dateAdd('day', properties.n, timestamp) from events"), /dateAdd\(\) takes a unit \('second' … 'year'\), a whole number literal and a date and time/)
  t.throws(() => plan('select addDays(properties.n, 1) from events'), /addDays\(\) takes a date and time and a whole number literal/)
  t.throws(() => plan('select timestampSub(timestamp, 3) from events'), /timestampSub\(\) takes a date and time and an interval/)
})

t.test("days and weeks move a date and time on the project's wall clock, as ClickHouse's addDays: 23 or 25 hours across summer time", async (t) => {
  const hour = 3_600_000
  const moved = (zone: string, iso: string, shift: string) => (runHogqlQuery(plan(`select timestamp ${shift} from events`, zone), [{ uuid: 'u', event: 'e', distinct_id: 'u', person_id: 'p', timestamp: Date.parse(iso), texts: [] }], null)[0][0] as number) - Date.parse(iso)
  // Figures read from 18.16's addDays of these instants (toUnixTimestamp differences).
  t.same([moved('Europe/Berlin', '2024-03-30T01:30:00Z', '+ interval 1 day'), moved('Europe/Berlin', '2024-03-31T01:30:00Z', '- interval 1 day'), moved('Europe/Berlin', '2024-10-26T00:50:00Z', '+ interval 1 day')], [23 * hour, -23 * hour, 24 * hour], "spring's short day; 02:50 of the autumn's day is its first")
  t.same([moved('Europe/Berlin', '2024-10-26T12:00:00Z', '+ interval 1 day'), moved('America/New_York', '2024-03-08T17:00:00Z', '+ interval 1 week'), moved('America/New_York', '2024-03-08T17:00:00Z', "+ toIntervalDay(2)")], [25 * hour, 167 * hour, 47 * hour], "noon to noon, and New York's week and days over its change")
  t.same([moved('UTC', '2024-03-30T01:30:00Z', '+ interval 1 day'), moved('Europe/Berlin', '2024-03-30T01:30:00Z', '+ interval 24 hour')], [24 * hour, 24 * hour], 'hours are hours, and a zone of one offset adds 24 hours a day')
  t.same(plan("select dateAdd('day', 1, timestamp) from events", 'Europe/Berlin').columns[0].type, "DateTime64(6, 'Europe/Berlin')", 'a date and time still')
})

t.test("periods start on the project zone's wall clock, summer time included, and are read back as dates and times", async (t) => {
  const at = (iso: string): QueryEvent => ({ uuid: iso, event: 'e', distinct_id: 'd', person_id: 'p', timestamp: Date.parse(iso), texts: [] })
  const starts = (zone: string, fn: string, iso: string) => {
    const p = plan(`select ${fn}(timestamp) from events`, zone)
    return new Date(runHogqlQuery(p, [at(iso)], null)[0][0] as number).toISOString()
  }
  // 2024-03-31 is a Sunday, and Berlin's clocks went forward that night (CET +01:00 → CEST +02:00).
  t.equal(starts('Europe/Berlin', 'toStartOfDay', '2024-03-31T12:00:00Z'), '2024-03-30T23:00:00.000Z')
  t.equal(starts('Europe/Berlin', 'toStartOfMonth', '2024-03-31T12:00:00Z'), '2024-02-29T23:00:00.000Z')
  t.equal(starts('Europe/Berlin', 'toStartOfMonth', '2024-04-15T12:00:00Z'), '2024-03-31T22:00:00.000Z', 'April starts in summer time')
  t.equal(starts('Europe/Berlin', 'toStartOfWeek', '2024-04-03T12:00:00Z'), '2024-03-30T23:00:00.000Z', 'weeks from Sunday')
  t.equal(starts('Europe/Berlin', 'toMonday', '2024-04-03T12:00:00Z'), '2024-03-31T22:00:00.000Z', 'toMonday: weeks from Monday')
  const weekFrom = (mode: number) => new Date(runHogqlQuery(plan(`select toStartOfWeek(timestamp, ${mode}) from events`, 'Europe/Berlin'), [at('2024-04-03T12:00:00Z')], null)[0][0] as number).toISOString()
  t.same([0, 1, 2, 9].map(weekFrom), ['2024-03-30T23:00:00.000Z', '2024-03-31T22:00:00.000Z', '2024-03-30T23:00:00.000Z', '2024-03-31T22:00:00.000Z'], "toStartOfWeek's mode: weeks from Monday where it is odd, as toWeek's modes")
  t.throws(() => plan('select toStartOfWeek(timestamp, 10) from events'), /a mode from 0 to 9 here/)
  t.throws(() => plan('select toStartOfWeek(timestamp, event) from events'), /toStartOfWeek\(\) takes a date and time and a mode from 0 to 9 here/)
  // 2024-03-31 was a Sunday, 2024-04-03 a Wednesday.
  const days = (iso: string) => runHogqlQuery(plan('select toDayOfWeek(timestamp, 0), toDayOfWeek(timestamp, 1), toDayOfWeek(timestamp, 2), toDayOfWeek(timestamp, 3) from events'), [at(iso)], null)[0]
  t.same([days('2024-03-31T12:00:00Z'), days('2024-04-03T12:00:00Z')], [[7, 6, 0, 1], [3, 2, 3, 4]], "toDayOfWeek's modes: Monday 1–7, Monday 0–6, Sunday 0–6, Sunday 1–7")
  t.throws(() => plan('select toDayOfWeek(timestamp, 4) from events'), /toDayOfWeek\(\) takes a date and time and a mode from 0 to 3 here/)
  t.equal(starts('Europe/Berlin', 'toStartOfQuarter', '2024-06-30T23:30:00Z'), '2024-06-30T22:00:00.000Z', 'the wall clock is in July there')
  t.equal(starts('America/New_York', 'toStartOfYear', '2024-01-01T03:00:00Z'), '2023-01-01T05:00:00.000Z')
  t.same(plan('select toStartOfMonth(timestamp), toStartOfHour(timestamp) from events').columns.map((c) => c.type), ['Date', "DateTime64(6, 'UTC')"], "ClickHouse's types: a month's start is a Date, an hour's a DateTime")
  // Berlin's summer time began on 2024-03-31: a week before 2024-04-02 began at 23:00Z, not 24 hours a day back.
  const week = parseHogqlQuery("select today() - interval 7 day, toDate(timestamp) + interval 1 day, today() - interval 3 hour from events", { now: Date.parse('2024-04-02T10:00:00Z'), zone: 'Europe/Berlin' })
  t.same(week.columns.map((c) => c.type), ['Date', 'Date', "DateTime64(6, 'Europe/Berlin')"], 'a Date plus days is a Date, plus hours a DateTime')
  const [shifted] = runHogqlQuery(week, [{ uuid: 'u', event: 'e', distinct_id: 'd', person_id: 'p', timestamp: Date.parse('2024-10-27T10:00:00Z'), texts: [] }], null)
  t.same(shifted.map((ms) => new Date(ms as number).toISOString()), ['2024-03-25T23:00:00.000Z', '2024-10-27T23:00:00.000Z', '2024-04-01T19:00:00.000Z'], "days on the wall clock, across summer time's changes")
  t.equal(starts('Europe/Berlin', 'toStartOfHour', '2024-03-31T01:30:00Z'), '2024-03-31T01:00:00.000Z')
  t.equal(starts('America/New_York', 'toDate', '2024-11-03T12:00:00Z'), '2024-11-03T04:00:00.000Z')
  t.equal(starts('Asia/Kolkata', 'toStartOfDay', '2024-01-01T20:00:00Z'), '2024-01-01T18:30:00.000Z', 'a half-hour offset')
  t.equal(starts('UTC', 'toStartOfMinute', '2024-01-01T20:07:59.999Z'), '2024-01-01T20:07:00.000Z')
  t.match(plan('select toDate(timestamp), toStartOfDay(timestamp) from events', 'Europe/Berlin').columns, [{ time: 'date', type: 'Date' }, { time: 'datetime', type: "DateTime64(6, 'Europe/Berlin')" }])
  const berlin = plan("select event from events where toDate(timestamp) = '2024-03-31'", 'Europe/Berlin')
  t.same(runHogqlQuery(berlin, ['2024-03-30T22:59:59Z', '2024-03-30T23:00:00Z', '2024-03-31T21:59:59Z', '2024-03-31T22:00:00Z'].map(at), null).length, 2, "a day's events, compared with its date")
  t.throws(() => plan('select toStartOfDay(properties.a) from events'), /takes one date and time here/)
  t.throws(() => plan('select constructor(timestamp) from events'), /Unknown function constructor\(\)/, 'an inherited key names no period')
})

t.test("intervals start as ClickHouse's toStartOfInterval starts them: seconds and minutes from 1970, hours from the day's start, weeks from Monday, months from 1900", async (t) => {
  const at = (iso: string): QueryEvent => ({ uuid: iso, event: 'e', distinct_id: 'd', person_id: 'p', timestamp: Date.parse(iso), texts: [] })
  const starts = (zone: string, expr: string, iso: string) => {
    const p = plan(`select ${expr} from events`, zone)
    return new Date(runHogqlQuery(p, [at(iso)], null)[0][0] as number).toISOString()
  }
  const evening = '2024-01-01T20:07:59.999Z'
  t.equal(starts('UTC', 'toStartOfInterval(timestamp, interval 90 second)', evening), '2024-01-01T20:07:30.000Z')
  t.equal(starts('UTC', 'toStartOfInterval(timestamp, interval 7 minute)', evening), '2024-01-01T20:05:00.000Z', '7-minute steps from 1970, not from the hour')
  t.equal(starts('Asia/Kolkata', 'toStartOfInterval(timestamp, toIntervalMinute(15))', evening), '2024-01-01T20:00:00.000Z')
  t.equal(starts('UTC', 'toStartOfFifteenMinutes(timestamp)', evening), '2024-01-01T20:00:00.000Z')
  t.equal(starts('UTC', 'toStartOfTenMinutes(timestamp)', evening), '2024-01-01T20:00:00.000Z')
  t.equal(starts('UTC', 'toStartOfFiveMinutes(timestamp)', evening), '2024-01-01T20:05:00.000Z')
  t.equal(starts('Asia/Kolkata', 'toStartOfInterval(timestamp, interval 4 hour)', evening), '2024-01-01T18:30:00.000Z', "01:37 there: the day's first 4 hours")
  // Berlin's clocks went forward at 01:00Z on 2024-03-31: 03:30 there is in the 2-hour step that starts at the change.
  t.equal(starts('Europe/Berlin', 'toStartOfInterval(timestamp, interval 2 hour)', '2024-03-31T01:30:00Z'), '2024-03-31T01:00:00.000Z')
  // 2024-01-01 is day 19,723 from 1970 and a Monday.
  t.equal(starts('UTC', 'toStartOfInterval(timestamp, interval 3 day)', evening), '2023-12-31T00:00:00.000Z', 'days in threes from 1970')
  t.equal(starts('UTC', 'toStartOfInterval(timestamp, interval 1 week)', '2024-01-03T00:00:00Z'), '2024-01-01T00:00:00.000Z', 'a week from Monday')
  t.equal(starts('UTC', 'toStartOfInterval(timestamp, interval 2 week)', evening), '2023-12-25T00:00:00.000Z', 'fortnights from Monday 1970-01-05')
  t.equal(starts('UTC', 'toStartOfInterval(timestamp, interval 5 month)', '2024-05-17T00:00:00Z'), '2024-03-01T00:00:00.000Z', '5-month steps from January 1900')
  t.equal(starts('UTC', 'toStartOfInterval(timestamp, interval 2 quarter)', '2024-05-17T00:00:00Z'), '2024-01-01T00:00:00.000Z')
  t.equal(starts('America/New_York', 'toStartOfInterval(timestamp, interval 5 year)', '2024-05-17T00:00:00Z'), '2020-01-01T05:00:00.000Z')
  t.equal(starts('America/New_York', 'toStartOfInterval(timestamp, interval 1 day)', '2024-05-17T02:00:00Z'), '2024-05-16T04:00:00.000Z', "the zone's day")
  t.equal(starts('UTC', "dateTrunc('week', timestamp)", '2024-01-07T23:00:00Z'), '2024-01-01T00:00:00.000Z', "dateTrunc's week is from Monday")
  t.equal(starts('Europe/Berlin', "date_trunc('Month', timestamp)", '2024-03-31T23:30:00Z'), '2024-03-31T22:00:00.000Z', 'April there')
  t.equal(starts('UTC', "dateTrunc('second', timestamp)", evening), '2024-01-01T20:07:59.000Z')
  const types = plan("select toStartOfInterval(timestamp, interval 1 day), toStartOfInterval(timestamp, interval 1 week), dateTrunc('day', timestamp), dateTrunc('quarter', timestamp), toStartOfTenMinutes(timestamp) from events").columns
  t.same(types.map((c) => c.time), ['datetime', 'date', 'datetime', 'date', 'datetime'], "ClickHouse's: a Date from weeks on")
  const minute = (m: number) => Date.parse('2024-03-01T00:00:00Z') + m * 60_000
  t.same(run('select toStartOfInterval(timestamp, interval 4 minute) as m, count() from events group by m order by m'), [[minute(0), 4], [minute(4), 4], [minute(8), 2]], 'a key')
  t.same(run('select count() from events where timestamp >= toDateTime(\'2024-03-01 00:05:00\') - toIntervalMinute(2)'), [[7]], 'toInterval<unit>(n) is an interval')
  t.equal(starts('UTC', 'toStartOfInterval(timestamp, interval 1000 month)', '2024-05-17T00:00:00Z'), '1983-05-01T00:00:00.000Z', 'the thousandth month from 1900')
  t.equal(starts('UTC', 'toStartOfInterval(timestamp, interval 1500 month)', '2024-05-17T00:00:00Z'), '1970-01-01T00:00:00.000Z', 'a start before 1970 is a Date of 1970-01-01')
  t.equal(starts('UTC', 'toStartOfInterval(timestamp, interval 3000 year)', '2024-05-17T00:00:00Z'), '1970-01-01T00:00:00.000Z')
  t.throws(() => plan('select toStartOfInterval(timestamp, interval 0 day) from events'), /toStartOfInterval\(\) takes a date and time and an interval of 1 to 1000000 units/)
  t.throws(() => plan('select toStartOfInterval(timestamp, interval 1000001 second) from events'), /toStartOfInterval\(\) takes/)
  t.throws(() => plan('select toStartOfInterval(timestamp, 5) from events'), /toStartOfInterval\(\) takes/)
  t.throws(() => plan('select toStartOfInterval(properties.t, interval 1 day) from events'), /toStartOfInterval\(\) takes/)
  t.throws(() => plan("select dateTrunc('fortnight', timestamp) from events"), /dateTrunc\(\) takes a unit/)
  t.throws(() => plan('select timestamp - toIntervalDay(1.5) from events'), /toIntervalDay\(\) takes a whole number literal/)
})

t.test('toDate reads a text as a date of the zone; fromUnixTimestamp reads seconds from 1970 as a date and time', async (t) => {
  const p = plan("select toDate('2024-01-31'), toDate('2024-01-31 23:30:00'), fromUnixTimestamp(properties.n) from events where properties.n = 3", 'Europe/Berlin')
  t.same(p.columns.map((c) => c.time), ['date', 'date', 'datetime'])
  const [row] = runHogqlQuery(p, events(10, innermost(p).paths), null)
  t.same(row, [Date.parse('2024-01-30T23:00:00Z'), Date.parse('2024-01-30T23:00:00Z'), 3000], "the zone's midnight")
  t.same(run("select count() from events where toDate(timestamp) = toDate('2024-03-01')"), [[10]])
  t.same(run('select max(fromUnixTimestamp(properties.n)) from events'), [[9000]])
  t.throws(() => plan("select toDate('nope') from events"), /Cannot read "nope" as a date and time/)
  t.throws(() => plan('select toDate(1) from events'), /toDate\(\) takes one date and time here, as in toDate\(timestamp\) or toDate\('2024-01-31'\)/)
  t.throws(() => plan('select fromUnixTimestamp(timestamp) from events'), /fromUnixTimestamp\(\) takes a number of seconds from 1970/)
})

t.test("formatDateTime writes ClickHouse's specifiers on the project's wall clock; toString writes a Date", async (t) => {
  const written = (zone: string, expr: string, iso: string) => {
    const p = plan(`select ${expr} from events`, zone)
    return runHogqlQuery(p, [{ uuid: 'u', event: 'e', distinct_id: 'd', person_id: 'p', timestamp: Date.parse(iso), texts: [] }], null)[0][0]
  }
  // A Friday, the 5th day of 2024.
  const friday = '2024-01-05T09:03:07.045Z'
  t.equal(written('UTC', "formatDateTime(timestamp, '%Y-%m-%d %H:%i:%S')", friday), '2024-01-05 09:03:07')
  t.equal(written('UTC', "formatDateTime(timestamp, '%F %T.%f')", friday), '2024-01-05 09:03:07.045000', 'microseconds of the ms kept')
  t.equal(written('UTC', "formatDateTime(timestamp, '%y|%C|%e|%j|%I|%h|%p|%Q|%u|%w|%a|%W|%b|%M|%D|%R|%r|%c|%s|%%|%n|%t')", friday), '24|20| 5|005|09|09|AM|1|5|5|Fri|Friday|Jan|January|01/05/24|09:03|09:03 AM|01|07|%|\n|\t')
  t.equal(written('Europe/Berlin', "formatDateTime(timestamp, '%F %H %I %p')", '2024-03-31T22:30:00Z'), '2024-04-01 00 12 AM', "the zone's wall clock: past midnight there")
  t.equal(written('UTC', "formatDateTime(timestamp, '%u %w %a %I %p')", '2024-01-07T12:30:00Z'), '7 0 Sun 12 PM', 'Sunday; noon is 12 PM')
  t.equal(written('UTC', "formatDateTime(timestamp, '%j %I')", '2024-12-31T21:00:00Z'), '366 09', 'a leap year')
  t.equal(written('UTC', "formatDateTime(toStartOfMonth(timestamp), '%b %Y')", friday), 'Jan 2024', 'of a Date')
  t.equal(written('UTC', "formatDateTime(timestamp, 'no specifier')", friday), 'no specifier')
  t.equal(written('UTC', 'toString(toDate(timestamp))', friday), '2024-01-05', 'a Date as ClickHouse writes one')
  t.equal(written('UTC', 'toString(2.5)', friday), '2.5', 'toString of anything else as before')
  t.same(run("select formatDateTime(max(timestamp), '%F %T') from events where event = 'none'"), [[null]], 'null where the date and time is')
  t.same(run("select formatDateTime(timestamp, '%H:%i') as m, count() from events where properties.n < 3 group by m order by m"), [['00:00', 1], ['00:01', 1], ['00:02', 1]], 'a key')
  t.match(plan("select formatDateTime(timestamp, '%F') from events").columns, [{ type: 'Nullable(String)', time: null }])
  t.throws(() => plan("select formatDateTime(timestamp, '%k') from events"), /formatDateTime\(\) reads %Y .* here, not %k/)
  t.throws(() => plan("select formatDateTime(timestamp, 'x%') from events"), /not a % at the end/)
  t.throws(() => plan('select formatDateTime(timestamp, event) from events'), /formatDateTime\(\) takes a date and time and a pattern as a text literal/)
  t.throws(() => plan("select formatDateTime(properties.t, '%F') from events"), /formatDateTime\(\) takes/)
  t.throws(() => plan('select toString(timestamp) from events'), /toString\(\) of a date and time is not read here: write it with formatDateTime/)
})

t.test('rows: WHERE, groups, aggregations of nothing, DISTINCT, orders with nulls last, limits', async (t) => {
  t.same(run('select event, count(), sum(properties.n), avg(properties.m), max(properties.m) from events group by event order by event'), [
    ['even', 5, 20, 2.5, 4],
    ['odd', 5, 25, 2.5, 4],
  ])
  t.same(run("select count(), sum(properties.n), uniq(distinct_id) from events where event = 'none'"), [[0, null, 0]], 'one row for no events without GROUP BY')
  t.same(run("select event, count() from events where event = 'none' group by event"), [], 'no groups for no events')
  t.same(run('select distinct distinct_id from events order by distinct_id desc'), [['u2'], ['u1'], ['u0']])
  t.same(run('select properties.m from events where properties.n < 7 order by properties.m desc'), [[4], [3], [2], [1], [1], [null], [null]].map(([v]) => [v === null ? null : String(v)]), 'texts, nulls last also descending')
  // x: NaN where m is 1 (n = 1, 6), 1 where m is 2 to 4, NULL where m is none (n = 0, 5).
  const x = '(toFloat(properties.m) - 1) / (toFloat(properties.m) - 1)'
  const order = (how: string) => run(`select properties.n from events where properties.n < 7 order by ${x} ${how}, properties.n`).map(([n]) => n)
  t.same([order('asc'), order('desc nulls first'), order('nulls first')], [['2', '3', '4', '1', '6', '0', '5'], ['0', '5', '1', '6', '2', '3', '4'], ['0', '5', '1', '6', '2', '3', '4']], "ClickHouse's: values, NaN, NULL; NULLS FIRST: NULL, NaN, values")
  t.same(run('select properties.n from events limit 3'), [['0'], ['1'], ['2']], 'without ORDER BY the reading stops at the limit')
  t.same(run('select properties.n from events order by toFloat(properties.n) desc limit 3', 5_000), [['4999'], ['4998'], ['4997']], 'the first rows in order of many')
  t.same(run("select countIf(timestamp < '2024-03-01 00:03:00') from events"), [[3]])
  // n = 0…9: the median between 4 and 5; the 0.9 quantile at index 8.1, between 8 and 9, as ClickHouse interpolates.
  t.same(run('select median(properties.n), quantile(0.9)(properties.n), quantile(0)(properties.m) from events'), [[4.5, 8.1, 1]])
  t.same(run("select event, median(properties.m) from events where properties.n > 3 group by event having quantile(0.5)(properties.n) > 6 order by event"), [['odd', 3]], 'in HAVING too')
  t.same(run("select median(properties.n) from events where event = 'none'"), [[null]], 'of nothing, null')
})

t.test("person properties are the event's distinct id's person's as resolved before the run; person_id is the stored one", async (t) => {
  const p = plan("select person.properties.plan as plan, count(), uniq(person_id) from events where person.properties.email like '%@a.io' group by plan order by plan")
  t.same([p.paths, p.personPaths], [[], [['plan'], ['email']]])
  const persons = [
    { path: ['plan'] as const, values: [{ text: 'pro', ids: ['u0', 'u1'] }] },
    { path: ['email'] as const, values: [{ text: 'a@a.io', ids: ['u0', 'u2'] }, { text: 'b@b.io', ids: ['u1'] }] },
  ]
  // u0: pro, a@a.io (4 events of 10); u1: pro, b@b.io; u2: no plan, a@a.io (3 events).
  t.same(runHogqlQuery({ ...p, persons }, events(10, []), null), [['pro', 4, 1], [null, 3, 1]])
  t.same(runHogqlQuery(p, events(10, []), null), [], 'unresolved, every person property reads null')
  t.match(plan('select person_id from events').columns, [{ type: 'UUID' }])
  t.throws(() => plan(`select ${Array.from({ length: 26 }, (_, i) => `properties.k${i}, person.properties.k${i}`).join(', ')} from events`), /reads 52 properties/, 'person paths count toward the cap')
})

t.test('a column that reads no event stands beside aggregations ungrouped, also over no events', async (t) => {
  t.same(run("select 'all' as scope, today(), count() from events"), [['all', Date.parse('2024-03-10T00:00:00Z'), 10]])
  t.same(run("select 1 + 1, count() from events where event = 'none'"), [[2, 0]])
  t.same(run("select 'x', event, count() from events group by event order by event"), [['x', 'even', 5], ['x', 'odd', 5]])
  t.throws(() => plan('select event, count() from events'), /Column event is neither aggregated nor in GROUP BY/)
  t.throws(() => plan('select person.properties.a, count() from events'), /neither aggregated nor in GROUP BY/)
})

t.test('HAVING keeps the groups whose aggregations, aliases and keys meet it; the aggregations it alone reads are hidden columns', async (t) => {
  // 10 events: n = 0…9, even/odd, distinct ids u0 (n = 0, 3, 6, 9), u1 (1, 4, 7), u2 (2, 5, 8).
  t.same(run('select distinct_id, count() as c from events group by distinct_id having c > 3'), [['u0', 4]])
  // u0: sum 18 of 4 events, u1: 12 of 3, u2: 15 of 3.
  t.same(run('select distinct_id from events group by distinct_id having sum(properties.n) >= 15 and count() < 4 order by distinct_id'), [['u2']])
  const p = plan("select event, count() from events group by event having max(properties.n) > 8 or event = 'even'")
  t.same([p.shown, p.columns.length, p.columns[2].math?.aggregation], [2, 3, 'max'])
  t.same(runHogqlQuery(p, events(10, p.paths), null).map((r) => r.slice(0, p.shown)), [['even', 5], ['odd', 5]])
  t.same(run("select event, count() from events where properties.n < 8 group by event having max(properties.n) > 6 order by event"), [['odd', 4]])
  t.same(run('select event from events group by event having max(properties.n) > 0 order by max(properties.n) desc'), [['odd'], ['even']], 'ORDER BY an aggregation HAVING reads')
  t.same(run('select count() from events group by distinct_id order by sum(properties.n) desc, distinct_id'), [[4], [3], [3]], 'ORDER BY an aggregation and a key not selected')
  t.same(run('select count() from events having count() > 100'), [], 'no row without GROUP BY when HAVING fails')
  t.same(run("select count() from events where event = 'none' having count() = 0"), [[0]], 'the one row of no events, kept')
  t.same(run("select max(timestamp) as last from events group by event having last > '2024-03-01 00:08:00'"), [[Date.parse('2024-03-01T00:09:00Z')]], 'a date and time column compared with a text')
  t.same(run('select count() from events group by toStartOfHour(timestamp) having toStartOfHour(timestamp) >= \'2024-03-01\''), [[10]], 'a GROUP BY expression that is no column')
})

t.test("a column or an order over aggregations and keys is computed from the group's values once they are known", async (t) => {
  // even: n = 0, 2, 4, 6, 8 (sum 20); odd: 1, 3, 5, 7, 9 (sum 25).
  t.same(run('select event, sum(properties.n) / count() as mean, countIf(properties.n > 4) * 100 / count() from events group by event order by mean desc'), [['odd', 5, 60], ['even', 4, 40]])
  t.same(run("select concat(upper(event), ': ', toString(count())) from events group by event order by event"), [['EVEN: 5'], ['ODD: 5']], 'a key and an aggregation within one expression')
  t.same(run('select lower(distinct_id), count() from events group by distinct_id order by distinct_id'), [['u0', 4], ['u1', 3], ['u2', 3]], 'an expression of a key')
  t.same(run('select count() * 2 as twice, twice + 1, round(avg(properties.n), 1) from events'), [[20, 21, 4.5]], 'a column reads another over the groups by its alias')
  t.same(run("select count() + 1 from events where event = 'none'"), [[1]], 'over the one row of no events')
  t.same(run('select distinct_id from events group by distinct_id order by sum(properties.n) / count() desc'), [['u2'], ['u0'], ['u1']], 'ORDER BY an expression of aggregations not selected')
  t.same(run('select distinct_id, sum(properties.n) - count() as d from events group by distinct_id having d > 11 order by d'), [['u2', 12], ['u0', 14]], 'HAVING reads it by alias')
  const p = plan('select event, max(properties.n) / count() from events group by event')
  t.same([p.shown, p.columns.length, p.columns[1].type, p.columns[2].math?.aggregation, p.columns[3].math?.aggregation], [2, 4, 'Nullable(Float64)', 'max', 'count'], 'its aggregations are hidden columns')
  t.same(run('select distinct_id, max(properties.n) / 0 as r from events group by distinct_id order by r desc, distinct_id'), [['u0', Infinity], ['u1', Infinity], ['u2', Infinity]], 'infinities of one sign order as equal')
})

t.test('a column reads another by its alias, as ClickHouse substitutes it', async (t) => {
  t.same(run('select properties.n as n, n * 2 as double, concat(event, toString(double)) from events order by n desc limit 2'), [[9, 18, 'odd18'], [8, 16, 'even16']])
  t.same(run('select properties.n as n from events order by n * -1 limit 4'), [[9], [8], [7], [6]], 'ORDER BY an expression of an alias')
  t.same(run("select timestamp as t, toMinute(t), t > '2024-03-01 00:05:00' from events order by t desc limit 1"), [[Date.parse('2024-03-01T00:09:00Z'), 9, 1]], 'an alias of a date and time is one')
})

t.test("a query of the persons table reads each person's id, created_at, is_identified and properties", async (t) => {
  const people: QueryPerson[] = [
    { id: 'p1', created_at: Date.parse('2024-01-01T00:00:00Z'), is_identified: 1, properties: '{"email":"a@x.io","plan":"pro"}', texts: [] },
    { id: 'p2', created_at: Date.parse('2024-02-01T00:00:00Z'), is_identified: 0, properties: '{"plan":"free"}', texts: [] },
    { id: 'p3', created_at: Date.parse('2024-03-01T00:00:00Z'), is_identified: 1, properties: '{"email":"c@x.io","plan":"pro"}', texts: [] },
  ]
  const ofPeople = (text: string) => {
    const p = plan(text)
    const texts = (person: QueryPerson) => p.paths.map((path) => (JSON.parse(person.properties!) as Record<string, string>)[path[0]] ?? null)
    return { plan: p, rows: runHogqlQuery(p, people.map((person) => ({ ...person, texts: texts(person) })), null).map((row) => row.slice(0, p.shown)) }
  }
  const all = ofPeople('select * from persons order by created_at desc limit 1')
  t.same(all.plan.columns.map((c) => [c.name, c.type]), [['id', 'UUID'], ['created_at', "DateTime64(6, 'UTC')"], ['properties', 'String'], ['is_identified', 'Int8']], "SELECT * is PostHog's persons columns")
  t.same(all.plan.table, 'persons')
  t.same(all.rows, [['p3', Date.parse('2024-03-01T00:00:00Z'), '{"email":"c@x.io","plan":"pro"}', 1]])
  t.same(ofPeople('select properties.email from persons where properties.email is not null order by properties.email').rows, [['a@x.io'], ['c@x.io']], "PostHog's documented example")
  t.same(ofPeople('select properties.plan as plan, count(), countIf(is_identified = 1) from persons group by plan order by plan').rows, [['free', 1, 0], ['pro', 2, 2]])
  t.same(ofPeople("select id from persons where created_at > '2024-01-15' and properties.email is null").rows, [['p2']])
  t.throws(() => plan('select person.properties.email from persons'), /A query of persons reads each person's own properties/)
  t.throws(() => plan('select event from persons'), /Unknown field "event": HogQL queries of persons here read/)
  t.throws(() => plan('select id from events'), /Unknown field "id": HogQL queries of events here read/)
})

t.test("a query of person_distinct_ids reads each distinct id with its person's uuid, and no properties", async (t) => {
  const ids: QueryDistinctId[] = [['a', 'p1'], ['b', 'p1'], ['c', 'p2']].map(([distinct_id, person_id]) => ({ distinct_id, person_id, texts: [] }))
  const rows = (text: string) => runHogqlQuery(plan(text), ids, null)
  t.same(plan('select * from person_distinct_ids').columns.map((c) => [c.name, c.type]), [['distinct_id', 'String'], ['person_id', 'UUID']], "SELECT * is PostHog's columns but its person join")
  t.same(rows('select person_id, count() from person_distinct_ids group by person_id having count() > 1'), [['p1', 2]], 'the persons of several ids')
  t.throws(() => plan('select properties.email from person_distinct_ids'), /Unknown field "properties": HogQL queries of person_distinct_ids here read distinct_id and person_id/)
  t.throws(() => plan('select person.properties.email from person_distinct_ids'), /Unknown field "person"/)
})

t.test("a query of the groups table reads each group's index, key, created_at and properties", async (t) => {
  const groups: QueryGroup[] = [
    { index: 0, key: 'acme', created_at: Date.parse('2024-01-01T00:00:00Z'), properties: '{"name":"Acme","seats":5}', texts: [] },
    { index: 0, key: 'initech', created_at: Date.parse('2024-02-01T00:00:00Z'), properties: '{"name":"Initech","seats":50}', texts: [] },
    { index: 1, key: 'p1', created_at: Date.parse('2024-03-01T00:00:00Z'), properties: '{}', texts: [] },
  ]
  const ofGroups = (text: string) => {
    const p = plan(text)
    const texts = (group: QueryGroup) => innermost(p).paths.map((path) => (JSON.parse(group.properties!) as Record<string, unknown>)[path[0]]?.toString() ?? null)
    return { plan: p, rows: runHogqlQuery(p, groups.map((group) => ({ ...group, texts: texts(group) })), null).map((row) => row.slice(0, p.shown)) }
  }
  const all = ofGroups('select * from groups order by created_at limit 1')
  t.same(all.plan.columns.map((c) => [c.name, c.type]), [['index', 'UInt8'], ['key', 'String'], ['created_at', "DateTime64(6, 'UTC')"], ['properties', 'String']], "SELECT * is PostHog's groups columns but updated_at")
  t.same([all.plan.table, all.rows], ['groups', [[0, 'acme', Date.parse('2024-01-01T00:00:00Z'), '{"name":"Acme","seats":5}']]])
  t.same(ofGroups("select key, properties.name from groups where index = 0 and properties.seats > 10").rows, [['initech', 'Initech']])
  t.same(ofGroups('select index, count(), sum(properties.seats) from groups group by index order by index').rows, [[0, 2, 55], [1, 1, null]])
  t.same(ofGroups('select max(n) from (select index, count() as n from groups group by index)').rows, [[2]], 'as a subquery')
  t.throws(() => plan('select person.properties.email from groups'), /A query of groups reads each group's own properties/)
  t.throws(() => plan('select event from groups'), /Unknown field "event": HogQL queries of groups here read the group's properties/)
})

t.test("the events' other columns: created_at, elements_chain, the group keys, and $session_id and $window_id of the properties", async (t) => {
  const all = plan('select * from events')
  t.same(all.columns.map((c) => c.name), ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at', '$session_id', '$window_id', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4'], "PostHog's asterisk, without person_mode and the elements_chain_* arrays")
  t.match(all.columns.map((c) => c.type), ['UUID', 'String', 'String', "DateTime64(6, 'UTC')", 'String', 'String', "DateTime64(6, 'UTC')", 'String', 'String', 'String'])
  t.same([all.stored, all.paths, all.readsProperties], [['elements_chain', 'created_at', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4'], [['$session_id'], ['$window_id']], true])
  t.same(plan('select event from events').stored, [], 'a plan reads the columns it names, no more')
  const event: QueryEvent = {
    uuid: 'u1',
    event: 'e',
    distinct_id: 'd',
    person_id: 'p',
    timestamp: 5,
    properties: '{"$session_id":"s1"}',
    texts: ['s1', null],
    stored: { elements_chain: 'a:nth-child="1"', created_at: 7, $group_0: 'acme', $group_1: '', $group_2: '', $group_3: '', $group_4: '' },
  }
  t.same(runHogqlQuery(all, [event], null), [['u1', 'e', '{"$session_id":"s1"}', 5, 'd', 'a:nth-child="1"', 7, 's1', '', 'acme', '', '', '', '']], "a missing $window_id is '', as PostHog's column")
  const grouped = plan("select $group_0, count() from events where created_at > '2024-01-01' and notEmpty($group_0) group by $group_0")
  t.same([grouped.stored, grouped.after], [['created_at', '$group_0'], undefined], 'created_at is a date and time to compare, and bounds no timestamp')
  t.same(runHogqlQuery(grouped, [{ ...event, stored: { created_at: Date.parse('2024-02-01'), $group_0: 'acme' } }], null), [['acme', 1]])
  t.throws(() => plan('select person_mode from events'), /Unknown field "person_mode": HogQL queries of events here read .*created_at, elements_chain, \$session_id, \$window_id and \$group_0 to \$group_4/)
})

t.test("a query of a subquery reads its rows by its columns' names, grouped, filtered and ordered again", async (t) => {
  // u0 sent n = 0, 3, 6, 9; u1 1, 4, 7; u2 2, 5, 8.
  t.same(run('select avg(c), max(c) from (select distinct_id, count() as c from events group by distinct_id)'), [[10 / 3, 4]], 'events per user, then their mean')
  t.same(run('select s.d, c * 2 as twice from (select distinct_id as d, count() as c from events group by d) as s where c > 3 order by twice desc'), [['u0', 8]], 'by the alias of the subquery too')
  t.same(run("select count(), uniq(d) from (select distinct_id as d from events where event = 'even')"), [[5, 3]])
  t.same(run('select * from (select event, count() from events group by event) order by event'), [['even', 5], ['odd', 5]])
  t.same(plan('select * from (select event, count() from events group by event)').columns.map((c) => [c.name, c.type]), [['event', 'String'], ['count()', 'UInt64']], "a column read whole keeps its type")
  t.same(run("select max(t) from (select timestamp as t from events) where t < '2024-03-01 00:05:00'"), [[Date.parse('2024-03-01T00:04:00Z')]], 'a date and time read back is one, compared with a text')
  t.same(run('select count() from (select uuid from events order by timestamp desc limit 3)'), [[3]], "the subquery's LIMIT")
  t.same(run('select max(m) from (select min(n) as m from (select toFloat(properties.n) as n, distinct_id from events) group by distinct_id)'), [[2]], 'nested twice')
  t.same(run('select d from (select distinct_id as d from events) limit 2'), [['u0'], ['u1']])
  const nested = plan("select e from (select event as e from events where timestamp > '2024-03-01' and properties.n > 2)")
  t.match([nested.paths, nested.after, innermost(nested).paths, innermost(nested).after, nested.source?.fetch], [[], undefined, [['n']], Date.parse('2024-03-01'), Infinity], "the innermost query reads the events; a subquery's rows are all read")
  t.throws(() => plan('select properties.n from (select event from events)'), /Unknown field "properties": a query of a subquery reads its columns \(event\)/)
  t.throws(() => plan('select any(e) from (select event as e from events)'), /any\(\), argMin\(\), argMax\(\), groupArray\(\), groupUniqArray\(\) and topK\(\) read values by their time/)
  t.throws(() => plan('select 1 from (select 1 from (select 1 from (select 1 from (select 1 from events))))'), /Subqueries nest at most 3 deep/)
  t.throws(() => plan('select e from (select event as e from events) as s extra'), /a subquery \(FROM \(SELECT …\) \[AS name\]\), or a query WITH names/)
  t.throws(() => plan('select e from (select event as e from events offset 2)'), /OFFSET is not supported/)
})

t.test("argMin and argMax of timestamp pick the first and last event's value in time where it is not null", async (t) => {
  // u0 sent n = 0, 3, 6, 9 and m = (none), 3, 1, 4.
  t.same(run('select distinct_id, argMin(properties.n, timestamp), argMax(properties.n, timestamp), argMin(properties.m, timestamp), argMax(properties.m, timestamp) from events group by distinct_id order by distinct_id'), [
    ['u0', '0', '9', '3', '4'],
    ['u1', '1', '7', '1', '2'],
    ['u2', '2', '8', '2', '3'],
  ])
  t.match(plan('select argMax(timestamp, timestamp), argMax(properties.n, timestamp) from events').columns, [{ time: 'datetime' }, { time: null, type: 'Nullable(String)' }], 'the value as it is')
  t.same(run("select argMax(properties.n, timestamp) from events where event = 'none'"), [[null]])
  t.throws(() => plan('select argMax(properties.n) from events'), /argMax\(\) takes a value and timestamp here/)
  t.throws(() => plan('select argMin(properties.n, created_at) from events'), /argMin\(\) takes a value and timestamp here/)
  t.throws(() => plan('select argMax(d, t) from (select distinct_id as d, timestamp as t from events)'), /argMax\(\) takes a value and timestamp/)
  t.throws(() => plan('select argMaxIf(event, timestamp, 1) from events'), /The aggregation argMaxIf\(\) is not supported/)
})

t.test("FROM sessions reads PostHog's sessions as the events grouped by $session_id give them", async (t) => {
  const at = (iso: string, event: string, distinct_id: string, properties: Record<string, string>) => ({ iso, event, distinct_id, properties })
  const raw = [
    at('2024-03-01T10:00:00Z', '$pageview', 'd1', { $session_id: 's1', $current_url: 'https://x.io/a', $pathname: '/a', utm_source: 'news' }),
    at('2024-03-01T10:00:05Z', '$autocapture', 'd1', { $session_id: 's1' }),
    at('2024-03-01T10:00:30Z', '$pageview', 'd2', { $session_id: 's1', $current_url: 'https://x.io/b', $pathname: '/b' }),
    at('2024-03-01T11:00:00Z', '$pageview', 'd3', { $session_id: 's2', $current_url: 'https://x.io/c' }),
    at('2024-03-01T11:00:04Z', 'custom', 'd3', { $session_id: 's2' }),
    at('2024-03-01T12:00:00Z', '$pageview', 'd4', { $current_url: 'https://x.io/none' }),
  ]
  const rows = (text: string, bounce?: { seconds: number; mode: 'count_pageviews' | 'uniq_page_screen_autocaptures' }) => {
    const p = parseHogqlQuery(text, { now: NOW, zone: 'UTC', bounce })
    const paths = innermost(p).paths
    const list = raw.map((e, i) => ({ uuid: `u${i}`, event: e.event, distinct_id: e.distinct_id, person_id: 'p', timestamp: Date.parse(e.iso), texts: paths.map((path) => e.properties[path[0]] ?? null) }))
    return runHogqlQuery(p, list, null).map((row) => row.slice(0, p.shown))
  }
  const columns = 'session_id, distinct_id, $session_duration, $pageview_count, $autocapture_count, $num_uniq_urls, $entry_current_url, $exit_current_url, $entry_pathname, $entry_utm_source, $is_bounce'
  t.same(rows(`select ${columns} from sessions order by session_id`), [
    ['s1', 'd2', 30, 2, 1, 2, 'https://x.io/a', 'https://x.io/b', '/a', 'news', 0],
    ['s2', 'd3', 4, 1, 0, 1, 'https://x.io/c', 'https://x.io/c', null, null, 1],
  ], 'the last distinct id; entries and exits of the events that have them; a bounce is one pageview under 10 seconds')
  t.same(rows('select count(), avg($session_duration), sum(s.$is_bounce) from sessions as s'), [[2, 17, 1]], 'events without a session are none')
  t.same(rows("select $start_timestamp, $end_timestamp from sessions where session_id = 's1'"), [[Date.parse('2024-03-01T10:00:00Z'), Date.parse('2024-03-01T10:00:30Z')]])
  t.same(rows('select session_id, $is_bounce from sessions order by 1', { seconds: 5, mode: 'uniq_page_screen_autocaptures' }), [['s1', 0], ['s2', 1]], "the project's bounce rule")
  t.same(plan('select * from sessions').columns.slice(0, 4).map((c) => [c.name, c.time]), [['session_id', null], ['id', null], ['distinct_id', null], ['$start_timestamp', 'datetime']])
  t.throws(() => plan('select properties.x from sessions'), /Unknown field "properties": a query of a subquery reads its columns \(session_id, id, distinct_id/)
  t.throws(() => plan('select 1 from (select 1 from (select 1 from (select 1 from sessions)))'), /Subqueries nest at most 3 deep/, 'the sessions are a subquery level')
})

t.test("a query without FROM reads one row of no fields, as ClickHouse's system.one", async (t) => {
  const one = (text: string) => runHogqlQuery(plan(text), [{ uuid: '', event: '', distinct_id: '', person_id: '', timestamp: 0, texts: [] }], null)
  t.same(one("select 1, 'x' as y, 1 + 2, count()"), [[1, 'x', 3, 1]])
  t.same(one("select formatDateTime(toDateTime('2024-01-05 10:00:00'), '%F %a'), now() > '2024-01-01'"), [['2024-01-05 Fri', 1]])
  t.same([one('select 1 where 0'), one('select 1 limit 0')], [[], []])
  t.same(one('select max(x) from (select 1 as x)'), [[1]], 'as a subquery')
  t.equal(plan('select 1').table, 'one')
  t.throws(() => plan('select event'), /Unknown field "event": a query without FROM reads no table's fields/)
  t.throws(() => plan('select properties.x'), /Unknown field "properties": a query without FROM/)
  t.throws(() => plan('select *'), /SELECT \* reads the columns of a table: a query without FROM has none/)
  t.same(run('select event from events limit 0'), [], 'LIMIT 0 is no rows')
})

t.test("group_<n>.properties reads the event's group's property, as given before the run; NULL without one", async (t) => {
  const p = plan("select distinct_id, group_0.properties.plan, group_1.properties.a.b from events where group_0.properties.plan != 'free' or $group_0 = ''")
  t.same([p.lookups.map((l) => l.of), p.stored], [[{ holder: 'group', index: 0, path: ['plan'] }, { holder: 'group', index: 1, path: ['a', 'b'] }], ['$group_0', '$group_1']])
  fillLookup(p.lookups[0], [{ text: 'pro', ids: ['acme'] }, { text: 'free', ids: ['initech'] }])
  fillLookup(p.lookups[1], [{ text: '7', ids: ['x'] }])
  const event = (n: number, group0: string, group1: string) => ({ uuid: `u${n}`, event: 'e', distinct_id: `d${n}`, person_id: '', timestamp: n, texts: [], stored: { $group_0: group0, $group_1: group1 } })
  const rows = runHogqlQuery(p, [event(0, 'acme', 'x'), event(1, 'initech', 'y'), event(2, '', ''), event(3, 'gone', '')], null)
  t.same(rows, [['d0', 'pro', '7'], ['d2', null, null], ['d3', null, null]], "initech's plan is free; a key of no group reads NULL")
  const fields = plan('select distinct_id, person.id, person.created_at, person.is_identified, group_0.key, group_0.created_at from events order by distinct_id')
  t.same(fields.columns.map((c) => c.type), ['String', 'UUID', "DateTime64(6, 'UTC')", 'Int8', 'String', "DateTime64(6, 'UTC')"], "typed as PostHog's persons and groups tables type them")
  const [pid, created, identified, key, groupCreated] = fields.lookups
  fillLookup(pid, [{ text: 'f0e1', ids: ['d0'] }])
  fillLookup(created, [{ text: Date.UTC(2024, 0, 2), ids: ['d0'] }])
  fillLookup(identified, [{ text: 1, ids: ['d0'] }])
  fillLookup(key, [{ text: 'acme', ids: ['acme'] }])
  fillLookup(groupCreated, [{ text: Date.UTC(2023, 5, 1), ids: ['acme'] }])
  t.same(fields.lookups.map((l) => l.of), [{ holder: 'person', field: 'id' }, { holder: 'person', field: 'created_at' }, { holder: 'person', field: 'is_identified' }, { holder: 'group', index: 0, field: 'key' }, { holder: 'group', index: 0, field: 'created_at' }])
  t.same(runHogqlQuery(fields, [event(0, 'acme', ''), event(1, 'gone', '')], null), [
    ['d0', 'f0e1', Date.UTC(2024, 0, 2), 1, 'acme', Date.UTC(2023, 5, 1)],
    ['d1', '00000000-0000-0000-0000-000000000000', 0, 0, '', 0],
  ], "a distinct id of no person, a key of no group: a LEFT JOIN's defaults (join_use_nulls = 0)")
  const cohorts = plan("select distinct_id, person_id in cohort 5, person_id not in cohort 'Gold' from events order by distinct_id")
  t.same(cohorts.lookups.map((l) => l.of), [{ holder: 'cohort', cohort: 5 }, { holder: 'cohort', cohort: 'Gold' }])
  fillLookup(cohorts.lookups[0], [{ text: 1, ids: ['d0'] }])
  fillLookup(cohorts.lookups[1], [{ text: 0, ids: ['d0'] }], 1)
  t.same(runHogqlQuery(cohorts, [event(0, '', ''), event(1, '', '')], null), [['d0', 1, 1], ['d1', 0, 0]], 'members by their distinct ids; or the persons not in it, a key of none then a member')
  t.throws(() => plan('select distinct_id in cohort 5 from events'), /IN COHORT reads person_id and a cohort's id or name/)
  t.throws(() => plan('select person.created_at from persons'), /A query of persons reads each person's own properties/)
  t.throws(() => plan('select group_0.index from events'), /Of group_0, skylark reads its properties \(group_0.properties.<key>\) and key, created_at in HogQL queries/)
  t.throws(() => plan('select person.uuid from events'), /Of the person, skylark reads its properties \(person.properties.<key>\) and id, created_at, is_identified in HogQL queries/)
  t.throws(() => plan('select group_5.properties.x from events'), /Unknown field "group_5"/)
  t.throws(() => plan('select group_0.properties.x from persons'), /Unknown field "group_0"/, 'of events only')
})

t.test('x IN (SELECT …) tests x against the values of a subquery, run first', async (t) => {
  // Each subquery run on the same events, inner ones first, then the query: as the query endpoint runs them.
  const withSets = (text: string, count = 10) => {
    const p = plan(text)
    for (const set of p.inSets) fillInSet(set, runHogqlQuery(set.plan, events(count, innermost(set.plan).paths), null).map((row) => row[0]))
    return runHogqlQuery(p, events(count, innermost(p).paths), null).map((row) => row.slice(0, p.shown))
  }
  // u0 sent n = 0, 3, 6, 9; u1 1, 4, 7; u2 2, 5, 8.
  t.same(withSets('select count() from events where distinct_id in (select distinct_id from events where properties.n > 7)'), [[7]], "u0's and u2's events")
  t.same(withSets('select count() from events where distinct_id not in (select distinct_id from events where properties.n > 7)'), [[3]])
  t.same(withSets("select count() from events where distinct_id in (select distinct_id from events where event = 'none')"), [[0]], 'an empty set')
  t.same(withSets('select count() from events where properties.n in (select max(properties.n) from events group by distinct_id)'), [[3]], 'numbers')
  t.same(withSets('select properties.n from events where timestamp in (select max(timestamp) from events)'), [['9']], 'dates and times')
  // m is none for n = 0 and 5; the subquery gives m of n = 0 and 1: NULL and 1.
  t.same(withSets('select count() from events where properties.m in (select properties.m from events where properties.n < 2)'), [[4]], "a NULL in the set holds for a NULL x, as PostHog's transform_null_in")
  t.same(withSets('select count() from events where properties.m not in (select properties.m from events where properties.n < 2)'), [[6]])
  t.same(withSets('select count() from events where properties.m in (select properties.m from events where properties.n = 1)'), [[2]], 'a set without NULL: not for a NULL x')
  t.same(withSets('select count() from events where properties.m in (select properties.n / 0 - properties.n / 0 from events where properties.n = 1)'), [[2]], 'NaN in the set is NULL, as an answer writes it')
  const nested = 'select count() from events where distinct_id in (select distinct_id from events where properties.n in (select min(properties.n) from events group by distinct_id) and properties.n > 1)'
  t.same([plan(nested).inSets.length, withSets(nested)], [2, [[3]]], "inner ones first: u2's least n is 2")
  t.same(withSets('with big as (select distinct_id from events where properties.n = 9) select distinct event from events where distinct_id in (select * from big)'), [['even'], ['odd']], 'a name WITH gives, within it')
  const within = plan("select properties.n as c0, concat(toString(c0), if(properties.n in (select max(properties.n) from events group by distinct_id), 'y', 'n')) from events")
  t.equal(within.grouped, false, "a subquery's aggregation is its own, and its names: the query around it does not group")
  t.throws(() => plan('select 1 from events where event in (select event, uuid from events)'), /The subquery of IN gives one column here, not 2/)
  t.throws(() => withSets('select 1 from events where properties.n in (select properties.n from events)', 1100), /The subquery of IN gives too many values here: at most 1000/)
  t.throws(() => plan('select 1 from events where event in (select event from events'), /The subquery is not closed/)
  t.same(withSets('select count() from events where notIn(distinct_id, (select distinct_id from events where properties.n > 7))'), [[3]], 'notIn() of a subquery')
  // (SELECT …) as a value.
  t.same(withSets('select count() * 10 / (select count() from events where properties.n < 4) from events'), [[25]], "a column over aggregations: 10 events' count over 4")
  t.same(withSets("select properties.n from events where properties.n >= (select max(properties.n) from events where event = 'even')"), [['8'], ['9']], 'in WHERE')
  t.same(withSets("select (select min(properties.n) from events where event = 'none'), (select distinct_id from events where properties.n = 4) from events where properties.n = 1"), [[null, 'u1']], 'NULL without a row; a text')
  t.same(withSets('select (select count() from events where properties.n < (select max(properties.n) - 6 from events)) + 1 from events where properties.n = 0'), [[4]], 'nested')
  t.throws(() => withSets('select (select event from events) from events'), /Scalar subquery returned more than one row/)
  t.throws(() => plan('select (select event, uuid from events limit 1) from events'), /The subquery of a value gives one column here, not 2/)
  t.throws(() => plan('select (select max(timestamp) from events) from events'), /A subquery giving a date and time is not read as a value here/)
})

t.test("anyLast is the last value in time where not null, argMax(x, timestamp)'s, as any is the first", async (t) => {
  t.same(run('select distinct_id, anyLast(properties.n), argMax(properties.n, timestamp), anyLast(properties.m) from events group by distinct_id order by distinct_id'), [['u0', '9', '9', '4'], ['u1', '7', '7', '2'], ['u2', '8', '8', '3']])
})

t.test("varPop, varSamp, stddevPop and stddevSamp are ClickHouse's, from the sums of the values and their squares", async (t) => {
  t.same(run('select varPop(properties.n), varSamp(properties.n), stddevPop(properties.n), stddevSamp(properties.n) from events'), [[8.25, 82.5 / 9, Math.sqrt(8.25), Math.sqrt(82.5 / 9)]])
  t.same(run("select varPopIf(properties.n, event = 'even'), stddevSampIf(properties.m, properties.n > 5) from events"), [[8, Math.sqrt(5 / 3)]], 'of the values where the condition holds (m of n > 5: 1, 2, 3, 4)')
  t.same(run('select distinct_id, varPop(properties.n) from events group by distinct_id order by distinct_id'), [['u0', 11.25], ['u1', 6], ['u2', 6]], 'per group')
  t.same(run('select varSamp(properties.n), stddevPop(properties.n) from events where properties.n = 3'), [[Number.NaN, 0]], "a sample's of one value is NaN")
  t.same(run("select varPop(properties.n), stddevSamp(properties.m) from events where event = 'none'"), [[null, null]], 'of none, NULL')
  t.same(run('select varPop(toFloat(properties.n) * 1e200) from events where properties.n < 2'), [[0]], "squares past a double: ∞ − ∞, NaN, which ClickHouse's std::max(0, v) makes 0")
  t.throws(() => parseHogqlMath('varPop(properties.n)'), /The aggregation varPop\(\) is not supported in HogQL math here/, 'queries only')
})

t.test("skewPop, skewSamp, kurtPop and kurtSamp are the third and fourth central moments over the variance's powers", async (t) => {
  // Two passes, as a textbook writes them, against the sums of powers the stores keep.
  const shape = (xs: number[], power: number, sample: boolean) => {
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length
    const central = (p: number) => xs.reduce((a, x) => a + (x - mean) ** p, 0) / xs.length
    const variance = (central(2) * xs.length) / (sample ? xs.length - 1 : xs.length)
    return central(power) / variance ** (power / 2)
  }
  const squares = Array.from({ length: 10 }, (_, n) => n * n)
  const [row] = run('select skewPop(properties.n), kurtPop(properties.n), skewSamp(toFloat(properties.n) * toFloat(properties.n)), kurtSampIf(properties.n, properties.n > 2) from events') as number[][]
  const want = [0, shape([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 4, false), shape(squares, 3, true), shape([3, 4, 5, 6, 7, 8, 9], 4, true)]
  t.ok(row.every((v, i) => Math.abs(v - want[i]) <= 1e-12 * Math.max(1, Math.abs(want[i]))), `${row} ≈ ${want}`)
  t.same(run('select skewPop(properties.n), kurtSamp(properties.n), skewPop(properties.m) from events where properties.n in (3, 5)'), [[0, 0.25, Number.NaN]], 'of 3 and 5; of one value (m is none where n is 5) no variance, NaN')
  t.same(run("select kurtPop(properties.n) from events where event = 'none'"), [[null]], 'of none, NULL')
})

t.test("covarPop, covarSamp and corr of two values are ClickHouse's, over the rows where both are numbers", async (t) => {
  t.same(run('select covarPop(properties.n, properties.n), corr(properties.n, toFloat(properties.n) * 2) from events'), [[8.25, 1]])
  t.same(run('select covarSamp(properties.n, properties.m) from events'), [[10 / 7]], 'm is none where n is 0 or 5: those rows are left out')
  t.same(run("select corrIf(properties.n, properties.m, event = 'even'), covarPopIf(properties.n, properties.m, properties.n > 8) from events"), [[0, 0]], 'of the rows where the condition holds')
  t.same(run('select covarPop(properties.n, properties.m), covarSamp(properties.n, properties.m), corr(properties.n, properties.m) from events where properties.n = 3'), [[0, Number.NaN, Number.NaN]], 'of one row: a sample and a correlation have none')
  t.same(run("select covarSamp(properties.n, properties.m), corr(properties.n, properties.m) from events where event = 'none'"), [[null, null]], 'of none, NULL')
  t.throws(() => plan('select corr(properties.n) from events'), /corr\(\) takes two values, as in corr\(properties.a, properties.b\), got 1 arguments/)
  t.throws(() => plan('select covarSampIf(properties.n, properties.m) from events'), /covarsampif\(\) takes two values and a condition/)
  t.throws(() => plan('select corr(timestamp, properties.n) from events'), /A date and time .* is read here whole/)
  t.throws(() => parseHogqlMath('corr(properties.n, properties.m)'), /The aggregation corr\(\) is not supported in HogQL math here/)
})

t.test('a comparison of a date and time with a text is read wherever it stands twice: a CASE subject, nullIf, BETWEEN', async (t) => {
  t.same(run("select CASE timestamp > '2024-03-01 00:05' WHEN 1 THEN 'late' ELSE 'early' END AS c, count() from events group by c order by c"), [['early', 6], ['late', 4]])
  t.same(run("select countIf(nullIf(timestamp > '2024-03-01 00:05', 0) = 1), countIf((timestamp < '2024-03-01 00:02') BETWEEN 1 AND 1) from events"), [[4, 2]])
})

t.test("uniqHLL12 and uniqTheta, ClickHouse's sketches, count exactly here, as uniq does", async (t) => {
  t.same(run("select uniqHLL12(distinct_id), uniqTheta(properties.m), uniqThetaIf(properties.n, event = 'even'), uniqHLL12If(event, properties.n > 8) from events"), [[3, 4, 5, 1]])
  t.equal(parseHogqlMath('uniqHLL12(properties.n)').aggregation, 'uniq', 'in math too, where uniq is read')
})

t.test("LIMIT n BY keeps the first n rows in order of each of its columns' values, after ORDER BY and before LIMIT", async (t) => {
  // u0 sent n = 0, 3, 6, 9; u1 1, 4, 7; u2 2, 5, 8; the even n are 'even' events.
  t.same(run('select distinct_id, properties.n from events order by properties.n desc limit 1 by distinct_id'), [['u0', '9'], ['u2', '8'], ['u1', '7']], "each user's last")
  t.same(run('select distinct_id, toFloat(properties.n) as n from events order by n limit 2 by distinct_id limit 5'), [['u0', 0], ['u1', 1], ['u2', 2], ['u0', 3], ['u1', 4]], 'then LIMIT')
  t.same(run('select event from events limit 2 by event'), [['even'], ['odd'], ['even'], ['odd']], 'without ORDER BY, the first read')
  t.same(run('select lower(event) as e, distinct_id from events order by distinct_id, e limit 1 by lower(event), distinct_id'), [['even', 'u0'], ['odd', 'u0'], ['even', 'u1'], ['odd', 'u1'], ['even', 'u2'], ['odd', 'u2']], 'keys as expressions equal to columns, several')
  const grouped = 'select distinct_id, event, count() as c from events group by distinct_id, event order by c desc, distinct_id, event limit 1 by distinct_id'
  t.same(run(grouped), [['u0', 'even', 2], ['u1', 'odd', 2], ['u2', 'even', 2]], "groups: each user's most frequent event")
  t.same(run('select event, count() from events group by event, distinct_id order by count() desc, event limit 1 by distinct_id'), [['even', 2], ['even', 2], ['odd', 2]], 'by a GROUP BY key not shown: a hidden column')
  t.match(plan('select event from events order by timestamp desc limit 1 by event'), { scan: null, limitBy: { n: 1, columns: [0] } }, 'no early stop: LIMIT BY drops rows')
  t.throws(() => plan('select event from events limit 1 by distinct_id'), /LIMIT BY distinct_id must name a column of this query here/)
  t.throws(() => plan('select event from events limit x by event'), /LIMIT … BY takes a whole number and columns here/)
  t.throws(() => plan('select event from events limit 1 by event limit 1 by event'), /LIMIT stands where it can't be read/)
  t.throws(() => plan('select event from events limit 5 limit 1 by event'), /LIMIT stands where it can't be read/)
  t.throws(() => plan('select event from events limit 1 by event desc'), /Unexpected "desc" after the expression/)
})

t.test('WITH names queries FROM reads as subqueries, and expressions the query reads by name', async (t) => {
  // u0 sent n = 0, 3, 6, 9; u1 1, 4, 7; u2 2, 5, 8.
  const perUser = 'with per_user as (select distinct_id as d, count() as c from events group by d) '
  t.same(run(`${perUser}select avg(c), max(c) from per_user`), [[10 / 3, 4]], 'as the same subquery would')
  t.same(run(`${perUser}select per_user.d, r.c from per_user as r where c > 3`), [['u0', 4]], "by the query's name or its alias")
  t.same(run(`${perUser}, busy as (select d from per_user where c > 3) select count() from busy`), [[1]], 'a query WITH names reads those before it')
  t.same(run('with 3 as low, 6 as high select count() from events where properties.n >= low and properties.n <= high'), [[4]], 'expressions by name')
  t.same(plan('with 5 as k select properties.n * k from events').columns.map((c) => c.name), ['properties.n * k'], 'a column named as written')
  t.same(run('with 5 as k, big as (select properties.n as n from events where properties.n > k) select count(), min(n) from big'), [[4, 6]], 'an expression in a later query WITH names')
  t.same(run("select count() from (with even as (select uuid from events where event = 'even') select * from even)"), [[5]], 'WITH within a subquery')
  t.same(run('with events as (select event from events where properties.n > 7) select count() from events'), [[2]], "a query's name before a table's; within it, the table")
  t.same(run('with a as (select distinct_id as d from events), b as (select d from a), c as (select d from b) select count() from c'), [[10]], 'three deep')
  t.throws(() => plan('with a as (select distinct_id as d from events), b as (select d from a), c as (select d from b), e as (select d from c) select count() from e'), /Subqueries nest at most 3 deep here, a query WITH names counting as one/)
  t.throws(() => plan('with a as (select * from a) select * from a'), /read one table, events, persons, groups, sessions or person_distinct_ids/, 'a query WITH names reads only those before it')
  t.throws(() => plan('with x select 1 from events'), /WITH names queries \(name AS \(SELECT …\)\) or expressions/)
  t.throws(() => plan('with a as (select 1 from events)'), /WITH is followed by its SELECT/)
  t.throws(() => plan('select event from events with'), /WITH begins a query here, before its SELECT/)
})

t.test('ordered by timestamp first, events read in that order end the run at the first past the last row kept', async (t) => {
  t.same(['select uuid from events order by timestamp desc limit 3', 'select uuid from events order by timestamp, uuid', 'select distinct timestamp from events order by timestamp', 'select event, count() from events group by event order by event', 'select uuid from events order by uuid'].map((q) => plan(q).scan), ['desc', 'asc', null, null, null])
  // Five minutes of two events each; read newest first, counting the events read.
  const all = events(10, [['n']]).map((e, i) => ({ ...e, timestamp: Date.parse('2024-03-01T00:00:00Z') + Math.floor(i / 2) * 60_000 }))
  const newestFirst = [...all].reverse()
  const reading = function* (list: QueryEvent[], seen: { n: number }) {
    for (const e of list) {
      seen.n++
      yield e
    }
  }
  const text = "select uuid, properties.n from events where properties.n != '9' order by timestamp desc, uuid desc limit 3"
  const seen = { n: 0 }
  const early = runHogqlQuery(plan(text), reading(newestFirst, seen), null, true)
  t.same(early, runHogqlQuery(plan(text), all, null), 'the rows of a whole read')
  t.same(early.map((r) => r[1]), ['8', '7', '6'], "the time of the third row (6's, 7's too) read whole, the uuids ordering it")
  t.equal(seen.n, 5, "the read stops at the first event past that time (5's), not at the end (10)")
})

t.test("what PostHog's SQL writes often: count(*), fields after the table's name or alias, NULLS LAST, aliases in WHERE", async (t) => {
  t.same(run('select count(*), count() from events'), [[10, 10]], 'count(*) is count()')
  t.same(run("select e.event, count(*) from events as e where e.properties.n > 5 group by e.event order by e.event"), [['even', 2], ['odd', 2]])
  t.same(run('select events.distinct_id from events order by events.timestamp desc limit 1'), [['u0']])
  t.same(run('select properties.n as n from events where n > 7 order by n desc nulls last'), [['9'], ['8']], "WHERE reads a column's alias as its expression, as ClickHouse does")
  t.same(run('select toFloat(properties.n) * 2 as twice, event as e from events where twice < 3 and e = \'odd\''), [[2, 'odd']])
  t.equal(plan("select e from (select event as e from events) as s where s.e = 'x'").source?.columns[0].name, 'e', "the subquery's alias")
})

t.test('anyIf, medianIf, uniqExactIf and countDistinctIf aggregate where their condition holds', async (t) => {
  // Even events have n = 0, 2, 4, 6, 8; odd ones n = 1, 3, 5, 7, 9 from u1, u0, u2, u1, u0.
  t.same(run("select anyIf(event, properties.n > 5), medianIf(toFloat(properties.n), event = 'even'), uniqExactIf(distinct_id, event = 'odd'), countDistinctIf(distinct_id, properties.n > 7) from events"), [['even', 4, 3, 2]])
  t.throws(() => plan('select medianIf(properties.n) from events'), /medianif\(\) takes a value and a condition/)
})

t.test('any() is the first value in time that is not null, of texts, numbers and dates alike', async (t) => {
  // u0: n = 0, 3, 6, 9 (m null at 0); u1: 1, 4, 7; u2: 2, 5, 8 (m null at 5).
  t.same(run('select distinct_id, any(properties.m), any(event), any(timestamp) from events group by distinct_id order by distinct_id'), [
    ['u0', '3', 'even', Date.parse('2024-03-01T00:00:00Z')],
    ['u1', '1', 'odd', Date.parse('2024-03-01T00:01:00Z')],
    ['u2', '2', 'even', Date.parse('2024-03-01T00:02:00Z')],
  ])
  const p = plan('select any(properties.m), any(properties.n * 2), any(timestamp) from events')
  t.same(p.columns.map((c) => c.type), ['Nullable(String)', 'Nullable(Float64)', "DateTime64(6, 'UTC')"])
  t.same(run("select any(properties.m) from events where event = 'none'"), [[null]], 'null of no rows')
  t.same(run("select event from events group by event having any(properties.m) = '1'"), [['odd']], 'in HAVING')
})

t.test("placeholders read their values as constants, never as HogQL; {filters} without filters is true", async (t) => {
  const withValues = (text: string, values: Record<string, unknown>) => {
    const p = parseHogqlQuery(text, { now: NOW, zone: 'UTC' }, 100, values)
    return runHogqlQuery(p, events(10, p.paths), null).map((row) => row.slice(0, p.shown))
  }
  t.same(withValues('select count() from events where event = {name} and properties.n >= {low}', { name: 'odd', low: 5 }), [[3]])
  t.same(withValues('select count() from events where properties.n > {low} and {filters}', { low: -1 }), [[10]], 'a negative number, and {filters}')
  t.same(withValues('select count() from events where event in {names} and {flag}', { names: ['even', 'x'], flag: true }), [[5]], 'a list for IN, a boolean')
  t.same(withValues("select {text} from events limit 1", { text: "x') or (1 = 1" }), [["x') or (1 = 1"]], 'a text is one text, whatever it holds')
  t.same(withValues('select {v} from events limit 1', { v: null }), [[null]])
  t.throws(() => withValues('select {missing} from events', {}), /The placeholder \{missing\} has no value/)
  t.throws(() => withValues('select {v} from events', { v: { a: 1 } }), /is a text, a number, true, false, null or a list of them/)
  t.throws(() => withValues('select {v} from events', { v: [] }), /holds 1 to 1000 values/)
  t.throws(() => withValues('select {v.w} from events', {}), /The placeholder \{v.w\} has no value/, 'a chain of names is one name')
  t.throws(() => withValues('select {v.} from events', {}), /A placeholder is a name in braces/)
  t.throws(() => withValues('select } from events', {}), /A placeholder is a name in braces/)
})

t.test('uniqIf counts the distinct values where its condition holds', async (t) => {
  t.same(run("select uniqIf(distinct_id, properties.n in (0, 3)), uniqIf(distinct_id, event = 'odd'), uniqIf(properties.m, properties.n > 100) from events"), [[1, 3, 0]])
})

t.test('GROUP BY and ORDER BY read a whole number as the position of a column, as ClickHouse does', async (t) => {
  t.same(run('select distinct_id, count(), sum(properties.n) from events group by 1 order by 3 desc'), [['u0', 4, 18], ['u2', 3, 15], ['u1', 3, 12]])
  t.same(run('select properties.n * 2, event from events order by 2, 1 desc limit 2'), [[16, 'even'], [12, 'even']])
  t.throws(() => plan('select event, count() from events group by 3'), /Position 3 names no column: the query has 2, from 1/)
  t.throws(() => plan('select event from events order by 0'), /Position 0 names no column/)
  t.throws(() => plan('select event from events order by 1.5'), /Position 1.5 names no column/)
  t.throws(() => plan('select event, count() from events group by 2'), /GROUP BY count\(\) names an aggregation/)
})

t.test('IS NULL and IS NOT NULL are isNull and isNotNull', async (t) => {
  t.same(run('select count(), countIf(properties.m is null), countIf(properties.m is not null) from events'), [[10, 2, 8]])
  t.throws(() => plan('select event from events where properties.m is 3'), /Expected NULL after IS/)
})

t.test('what a query here cannot read is refused by name', async (t) => {
  const refusals: Array<[string, RegExp]> = [
    ['', /The query is empty/],
    ['delete from events', /one SELECT … FROM events/],
    ['select event', /a query without FROM reads no table's fields/],
    ['select event from raw_sessions', /read one table, events, persons, groups, sessions or person_distinct_ids/],
    ['select event from events having count() > 1', /HAVING filters groups/],
    ['select distinct event, count() from events group by event having count() > 1', /SELECT DISTINCT with HAVING/],
    ['select event, count() from events group by event having properties.n > 1', /HAVING reads each group/],
    ['select event, count() from events group by event having sum(count()) > 1', /read here as a whole column/],
    ['select event, count() from events group by event having event', /HAVING takes a condition, not a text/],
    ['select event, count() from events group by event having sum(timestamp) > 1', /aggregated here with min, max, any, count and uniq/],
    ['select count() from events having', /empty/],
    ['select event from events union all select event from events', /UNION joins whole queries here/],
    ['with 1 as x, select x from events', /An expression of WITH is empty/],
    ['select event from events limit 5, 10', /OFFSET is not supported/],
    ['select x.event from events', /Unknown field "x"/],
    ['select event from events e f', /read one table, events, persons, groups, sessions or person_distinct_ids \(FROM events \[AS e\]\)/],
    ['select count() as c from events where c > 1', /WHERE reads c, an aggregation/],
    ['select event from events where count() > 1', /The aggregation count\(\) is not read in WHERE/],
    ['select event from events order by count()', /orders by an aggregation: the query must group/],
    ['select distinct event from events order by count()', /SELECT DISTINCT orders by its columns/],
    ['select event, count() from events group by event order by distinct_id', /must name a column/],
    ['select distinct count() + 1 from events', /SELECT DISTINCT with an aggregation within a column's expression/],
    ['select properties.n / count() from events', /Column properties.n \/ count\(\) is neither aggregated nor in GROUP BY/],
    ['select event, concat(distinct_id, toString(count())) from events group by event', /neither aggregated nor in GROUP BY/],
    ['select twice + 1, count() * 2 as twice from events', /twice is read before it is written/],
    ['select count() * 2 as twice from events group by twice', /GROUP BY twice names a column computed from others/],
    ['select sum(count()) + 1 from events', /read here as a whole column/],
    ['select event, count() from events group by event order by sum(properties.n) + distinct_id', /ORDER BY sum\(properties.n\) \+ distinct_id must name a column, an aggregation or a GROUP BY expression/],
    ['select count() as n from events group by n', /GROUP BY n names an aggregation/],
    ['select event from events where event', /WHERE takes a condition/],
    ['select now() from events where timestamp = 3', /compared here with another date and time/],
    ['select interval 1 day from events', /added to or taken from a date and time/],
    ['select sum(timestamp) from events', /aggregated here with min, max, any, count and uniq/],
    ['select anyHeavy(properties.n) from events', /not supported in HogQL queries/],
    ['select quantile(1.5)(properties.n) from events', /level as a number from 0 to 1/],
    ['select median(timestamp) from events', /aggregated here with min, max, any, count and uniq/],
    ['select event from events order by event limit all', /LIMIT takes a whole number/],
    ["select toDateTime('2024-01-31', 'Nowhere/City') from events", /toDateTime\(\) takes a time zone's name .* "Nowhere\/City" is none/],
    ['select event,, distinct_id from events', /An expression of SELECT is empty/],
  ]
  for (const [text, message] of refusals) t.throws(() => plan(text), message, text)
  t.throws(() => plan('select event from events'.padEnd(50_001, ' ')), HogqlMathError)
  t.throws(() => plan(`select ${Array.from({ length: 51 }, (_, i) => `properties.k${i}`).join(', ')} from events`), /reads 51 properties; a query here reads at most 50/)
  t.doesNotThrow(() => plan(`select ${Array.from({ length: 50 }, (_, i) => `properties.k${i}`).join(', ')}, properties.k0 from events`), 'each path counted once')
})

t.test("{filters} is the date range's condition on the table of its SELECT: timestamp, sessions' $start_timestamp, groups' created_at", async (t) => {
  const filters = { from: Date.UTC(2024, 0, 5), to: Date.UTC(2024, 0, 8) }
  const where = (text: string) => parseHogqlQuery(text, { now: NOW, zone: 'UTC', filters }).where
  t.match(where('select 1 from events where {filters}'), { op: 'and', args: [{ op: '<', args: [{ field: 'timestamp' }, { value: filters.to }] }, { op: '>=', args: [{ field: 'timestamp' }, { value: filters.from }] }] })
  t.match(where('select 1 from groups where {filters}'), { op: 'and', args: [{ args: [{ field: 'created_at' }] }, { args: [{ field: 'created_at' }] }] })
  t.match(parseHogqlQuery('select count() from events where {filters}', { now: NOW, zone: 'UTC', filters }), { after: filters.from, before: filters.to }, "the range bounds the events a store reads, as WHERE's own bounds do")
  t.equal(parseHogqlQuery('select 1 from events where {filters}', { now: NOW, zone: 'UTC', filters: {} }).where?.op, 'number', 'no bound: true')
  t.throws(() => where('select 1 from persons where {filters}'), /\{filters\} is read in a SELECT of the events, sessions or groups table/)
  t.throws(() => where('select 1 from (select 1 as x from events) where {filters}'), /\{filters\} is read in a SELECT of the events/)
  t.throws(() => parseHogqlQuery('select `{filters}` from events', { now: NOW, zone: 'UTC', filters }), /Unknown field "\{filters\}"/, 'a quoted name is no placeholder')
})
