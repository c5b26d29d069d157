/**
 * dateName and age (hogql-date-parts.ts): dateName's texts against Intl's wall clock, age against ClickHouse's
 * adjustment of dateDiff (dateDiff.cpp) written out here from the parts, and both stores alike on 18.16.
 */
import t from 'tap'
import { zoneOffsetMs } from '../../../src/common/time-zones.js'
import { innermost, parseHogqlQuery } from '../../../src/storage/events/hogql-query.js'
import { runHogqlQuery } from '../../../src/storage/events/hogql-query-run.js'
import { Rng, fuzzSeed } from '../fuzz/rng.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'

const DAY = 86_400_000
const now = Date.parse('2024-06-20T12:00:00Z')
const plan = (text: string, zone = 'UTC') => parseHogqlQuery(text, { now, zone })
/** The query's rows over events at `times` (ms) and at `others` (each event's property t, read with toDateTime). */
function run(query: string, times: readonly number[], zone: string, others: readonly number[] = []) {
  const p = plan(query, zone)
  const rows = times.map((ms, n) => ({ uuid: `u${n}`, event: 'e', distinct_id: 'd', person_id: 'p', timestamp: ms, texts: innermost(p).paths.map(() => (others[n] === undefined ? null : new Date(others[n]).toISOString())) }))
  return runHogqlQuery(p, rows, null).map((row) => row.slice(0, p.shown))
}
/** `zone`'s wall clock at `ms` as a UTC Date of the same fields. */
const wall = (ms: number, zone: string) => new Date(ms + zoneOffsetMs(zone, ms)!)
const ZONES = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe']

t.test("dateName gives the part's number as a text, the month's and weekday's names, on the zone's wall clock", async (t) => {
  const rng = new Rng(fuzzSeed(), 13)
  const times = Array.from({ length: 300 }, () => Date.UTC(2000, 0, 1) + rng.int(30 * 365 * 24) * 3_600_000 + rng.int(3_600_000))
  const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
  const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
  const parts = ['year', 'quarter', 'month', 'week', 'dayofyear', 'day', 'weekday', 'hour', 'minute', 'second']
  for (const zone of ZONES) {
    const rows = run(`select ${parts.map((p) => `dateName('${p}', t)`).join(', ')}, toISOWeek(t) from (select toTimeZone(timestamp, '${zone}') as t from events) limit 1000`, times, 'Europe/Berlin')
    const wrong = times.filter((ms, i) => {
      const w = wall(ms, zone)
      const dayOfYear = Math.floor((Date.UTC(w.getUTCFullYear(), w.getUTCMonth(), w.getUTCDate()) - Date.UTC(w.getUTCFullYear(), 0, 1)) / DAY) + 1
      const want = [w.getUTCFullYear(), Math.floor(w.getUTCMonth() / 3) + 1, months[w.getUTCMonth()], rows[i][10], dayOfYear, w.getUTCDate(), days[w.getUTCDay()], w.getUTCHours(), w.getUTCMinutes(), w.getUTCSeconds()].map(String)
      return JSON.stringify(rows[i].slice(0, 10)) !== JSON.stringify(want)
    })
    t.same(wrong.slice(0, 3).map((ms) => [new Date(ms).toISOString(), rows[times.indexOf(ms)]]), [], `${zone}: ${times.length} instants, ${wrong.length} differ`)
  }
  t.same(run("select dateName('month', toDate(timestamp)), dateName('year', toDate('2024-01-31')) from events", [Date.UTC(2024, 4, 1)], 'UTC'), [['May', '2024']], 'of a date')
  const refused: Array<[string, RegExp]> = [
    ["select dateName('Month', timestamp) from events", /dateName\(\) takes a part \('year', 'quarter'/],
    ["select dateName('hour', toDate(timestamp)) from events", /dateName\('hour', …\) takes a date and time, not a date/],
    ['select dateName(event, timestamp) from events', /dateName\(\) takes a part as a text literal/],
    ["select dateName('day', event) from events", /dateName\(\) takes a part as a text literal and a date and time/],
  ]
  for (const [text, message] of refused) t.throws(() => plan(text), message, text)
})

/** ClickHouse's age adjustment of dateDiff (dateDiff.cpp), from the wall-clock parts of x and y. */
function adjustment(unit: string, x: number, y: number, zone: string): number {
  const parts = (ms: number) => {
    const w = wall(ms, zone)
    return { month: w.getUTCMonth() + 1, day: w.getUTCDate(), rest: [w.getUTCHours(), w.getUTCMinutes(), w.getUTCSeconds(), w.getUTCMilliseconds()], dow: ((w.getUTCDay() + 6) % 7) + 1 }
  }
  const [px, py] = [parts(x), parts(y)]
  const [a, b, adjust] = x <= y ? [px, py, -1] : [py, px, 1]
  const after = (p: number[], q: number[]): boolean => p.length > 0 && (p[0] > q[0] || (p[0] === q[0] && after(p.slice(1), q.slice(1))))
  const below = { year: [a.month, a.day, ...a.rest], quarter: [(a.month - 1) % 3, a.day, ...a.rest], month: [a.day, ...a.rest], day: a.rest, hour: a.rest.slice(1), minute: a.rest.slice(2), second: a.rest.slice(3) } as Record<string, number[]>
  const belowB = { year: [b.month, b.day, ...b.rest], quarter: [(b.month - 1) % 3, b.day, ...b.rest], month: [b.day, ...b.rest], day: b.rest, hour: b.rest.slice(1), minute: b.rest.slice(2), second: b.rest.slice(3) } as Record<string, number[]>
  const later = unit === 'week' ? px.dow > py.dow || (px.dow === py.dow && a.rest[0] > b.rest[0]) || (a.rest[0] === b.rest[0] && after(a.rest.slice(1), b.rest.slice(1))) : after(below[unit], belowB[unit])
  return later ? adjust : 0
}

t.test("age is dateDiff less the unit not yet whole, as ClickHouse adjusts it, both ways and in zones with summer time", async (t) => {
  const at = (iso: string) => Date.parse(`${iso}Z`)
  const ages = "age('month', toDateTime('2024-01-31 00:00:00'), toDateTime('2024-02-29 00:00:00')), dateDiff('month', toDateTime('2024-01-31 00:00:00'), toDateTime('2024-02-29 00:00:00')), age('year', toDate('2020-02-29'), toDate('2021-02-28')), age('day', toDateTime('2024-01-01 12:00:00'), toDateTime('2024-01-03 11:59:59')), age('day', toDateTime('2024-01-03 11:59:59'), toDateTime('2024-01-01 12:00:00')), age('quarter', toDate('2024-01-15'), toDate('2024-04-15')), age('quarter', toDate('2024-03-15'), toDate('2024-04-14'))"
  t.same(run(`select ${ages}`, [0], 'UTC'), [[0, 1, 0, 1, -1, 1, 0]], 'whole months, years, days and quarters between them; negative when the end is first')
  const weeks = "age('week', toDateTime('2024-01-01 10:00:00'), toDateTime('2024-01-08 09:00:00')), age('week', toDateTime('2024-01-03 10:00:00'), toDateTime('2024-01-08 10:30:00')), age('week', toDateTime('2024-01-01 10:30:00'), toDateTime('2024-01-10 10:00:00')), age('hour', toDateTime('2024-01-01 00:00:00'), toDateTime('2024-01-01 23:59:59'))"
  t.same(run(`select ${weeks}`, [0], 'UTC'), [[0, 0, 0, 23]], "weeks as ClickHouse's condition reads them: nine days from a Monday 10:30 to a Wednesday 10:00 are 0, an equal hour going on to the minutes")
  const rng = new Rng(fuzzSeed(), 14)
  const xs = Array.from({ length: 400 }, () => Date.UTC(2019, 0, 1) + rng.int(6 * 365) * DAY + rng.int(DAY))
  // Near x, a unit or so away, on either side, or whole months or days away (± a millisecond): the parts below the unit decide.
  const months = (x: number, k: number) => {
    const d = new Date(x)
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + k, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds())
  }
  const ys = xs.map((x) =>
    rng.chance(0.3)
      ? (rng.chance(0.5) ? months(x, rng.pick([-1, 1]) * rng.int(30)) : x + rng.pick([-1, 1]) * rng.int(60) * DAY) + rng.pick([-1, 0, 1])
      : x + rng.pick([-1, 1]) * rng.pick([rng.int(400) * DAY, rng.int(40) * DAY, rng.int(8) * DAY + rng.int(DAY), rng.int(2 * 3_600_000), rng.int(120_000)]) + rng.pick([0, 0, rng.int(1000)]),
  )
  const units = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year']
  for (const zone of ZONES) {
    const query = `select ${units.map((u) => `age('${u}', timestamp, toDateTime(properties.t)) - dateDiff('${u}', timestamp, toDateTime(properties.t))`).join(', ')} from events limit 1000`
    const rows = run(query, xs, zone, ys)
    const wrong = xs.flatMap((x, i) => units.flatMap((u, k) => (rows[i][k] === adjustment(u, x, ys[i], zone) ? [] : [[u, new Date(x).toISOString(), new Date(ys[i]).toISOString(), rows[i][k]]])))
    t.same(wrong.slice(0, 3), [], `${zone}: ${xs.length} pairs in ${units.length} units, ${wrong.length} differ`)
  }
  t.same(run("select age('day', timestamp, toDateTime(properties.t)) from events", [at('2024-03-01T00:00:00')], 'UTC'), [[null]], 'NULL where one is')
  t.throws(() => plan("select age('fortnight', timestamp, now()) from events"), /age\(\) takes a unit \('second'/)
})

t.test('on ClickHouse 18.16 they give what the Node engine gives', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const rng = new Rng(fuzzSeed(), 15)
  const rows = pageviewRows(3, Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`d${i}`, { t: new Date(Date.UTC(2022, 0, 1) + rng.int(3 * 365) * DAY + rng.int(DAY)).toISOString() }]))).map((row, i) => ({ ...row, timestamp: Date.UTC(2022, 0, 1) + i * 7 * DAY + rng.int(DAY) }))
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_hogql_date_parts')
  for (const [zone, project] of [['America/New_York', 'UTC'], ['Australia/Lord_Howe', 'Europe/Berlin']]) {
    const columns = [
      ...['year', 'quarter', 'month', 'week', 'dayofyear', 'day', 'weekday', 'hour', 'minute', 'second'].map((p) => `dateName('${p}', t)`),
      ...['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'].map((u) => `age('${u}', t, toDateTime(p))`),
      "age('month', toDate(t), toDate(p))",
    ]
    const query = parseHogqlQuery(`select ${columns.join(', ')} from (select toTimeZone(timestamp, '${zone}') as t, properties.t as p, timestamp from events) order by t limit 1000`, { now, zone: project })
    const [onSqlite, onClickHouse] = [await sqlite.hogqlQuery(3, query), await clickhouse.hogqlQuery(3, query)]
    t.equal(onSqlite.length, rows.length, `${zone} in ${project}: every event`)
    const differ = onSqlite.filter((row, i) => JSON.stringify(row) !== JSON.stringify(onClickHouse[i]))
    t.same(differ.slice(0, 2), [], `${zone} in ${project}: ${differ.length} rows differ`)
  }
})
