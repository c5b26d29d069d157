import t from 'tap'
import { zoneOffsetMs } from '../../../src/common/time-zones.js'
import { innermost, parseHogqlQuery } from '../../../src/storage/events/hogql-query.js'
import { runHogqlQuery } from '../../../src/storage/events/hogql-query-run.js'
import { Rng, fuzzSeed } from '../fuzz/rng.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'

const at = (iso: string) => Date.parse(iso)
const DAY = 86_400_000
const now = at('2024-06-20T12:00:00Z')

/** The query's rows over events at `times` (ms), each event's properties read as `text`. */
function run(query: string, times: readonly number[], zone: string, text: string | null = null) {
  const p = parseHogqlQuery(query, { now, zone })
  const rows = times.map((ms, n) => ({ uuid: `u${n}`, event: 'e', distinct_id: 'd', person_id: 'p', timestamp: ms, texts: innermost(p).paths.map(() => text) }))
  return runHogqlQuery(p, rows, null).map((row) => row.slice(0, p.shown))
}
const plan = (text: string, zone = 'UTC') => parseHogqlQuery(text, { now, zone })

/** `zone`'s wall clock at `ms` as the ms of the same fields read as UTC (Intl). */
const wallMs = (ms: number, zone: string) => ms + zoneOffsetMs(zone, ms)!
/** The day (days from 1970-01-01) of `zone`'s wall clock at `ms`. */
const dayOf = (ms: number, zone: string) => Math.floor(wallMs(ms, zone) / DAY)

t.test('a choice among dates and times (if, coalesce, greatest …) is one, of their zone, compared and read as one', async (t) => {
  const times = [at('2024-03-10T12:00:00Z'), at('2024-03-20T12:00:00Z')]
  const columns = "coalesce(toDateTime(properties.t), timestamp), greatest(timestamp, toDateTime('2024-03-15')), if(toFloat(properties.t) > 0, null, timestamp), multiIf(properties.t = 'x', toDate(timestamp), today())"
  t.same(run(`select ${columns} from events`, times, 'UTC', '2024-03-01 00:00'), [
    [at('2024-03-01T00:00:00Z'), at('2024-03-15T00:00:00Z'), times[0], at('2024-06-20T00:00:00Z')],
    [at('2024-03-01T00:00:00Z'), times[1], times[1], at('2024-06-20T00:00:00Z')],
  ])
  t.same(run("select coalesce(toDateTime(properties.t), timestamp) from events", times, 'UTC', 'not a date'), [[times[0]], [times[1]]], 'NULL where the text is none: the timestamp')
  t.same(plan("select if(1, toDate(toTimeZone(timestamp, 'UTC')), today()) from events").columns[0].type, 'Date', "a date has no zone: one made on a clock moved to the project's zone stands beside today()")
  t.same(plan(`select ${columns} from events`).columns.map((c) => c.type), ["DateTime64(6, 'UTC')", "DateTime64(6, 'UTC')", "DateTime64(6, 'UTC')", 'Date'], 'a date where all are dates')
  t.same(run("select count() from events where greatest(timestamp, toDateTime('2024-03-15')) > '2024-03-16'", times, 'UTC'), [[1]], 'compared with a text')
  t.same(run("select toHour(ifNull(toTimeZone(timestamp, 'Asia/Tokyo'), null)), nullIf(timestamp, toDateTime('2024-03-10 12:00:00')) from events", times, 'UTC'), [[21, null], [21, times[1]]], 'of its zone; nullIf')
  t.same(run("select minIf(timestamp, timestamp > '2024-03-15'), maxIf(timestamp, 0) from events", times, 'UTC'), [[times[1], null]], "an -If's value")
  t.same(run("select CASE WHEN timestamp > '2024-03-15' THEN timestamp ELSE toDateTime('2000-01-01') END from events", times, 'UTC'), [[at('2000-01-01T00:00:00Z')], [times[1]]], 'CASE')
  const refused: Array<[string, RegExp]> = [
    ["select coalesce(timestamp, 'x') from events", /The values a choice gives .* are all dates and times of one zone, or NULL, where one is/],
    ['select if(1, timestamp, 1) from events', /are all dates and times of one zone/],
    ["select coalesce(toTimeZone(timestamp, 'UTC'), timestamp) from events", /of one zone/],
    ["select if(1, toDate(timestamp), toTimeZone(timestamp, 'UTC')) from events", /of one zone/],
    ['select if(timestamp, 1, 2) from events', /is read here whole, compared, or plus or minus an interval/],
    ['select sum(if(1, timestamp, null)) from events', /Dates and times are aggregated here with min, max, any, count and uniq/],
  ]
  for (const [text, message] of refused) t.throws(() => plan(text), message, text)
})

t.test("the periods' last days, the ISO year's start, the second's, digits, month names and zones, on the zone's wall clock", async (t) => {
  const rng = new Rng(fuzzSeed(), 9)
  const times = Array.from({ length: 300 }, () => Date.UTC(2000, 0, 1) + rng.int(30 * 365 * 24) * 3_600_000 + rng.int(3_600_000))
  const zones = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Pacific/Kiritimati']
  const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
  for (const zone of zones) {
    const query = `select toYYYYMMDDhhmmss(t), toString(toLastDayOfMonth(t)), toString(toLastDayOfWeek(t)), toString(toLastDayOfWeek(t, 1)), toString(toStartOfISOYear(t)), toStartOfSecond(t), monthName(t), timeZoneOf(t), timeZoneOffset(t) from (select toTimeZone(timestamp, '${zone}') as t from events) limit 1000`
    const rows = run(query, times, 'Europe/Berlin')
    const wrong = times.filter((ms, i) => {
      const wall = new Date(wallMs(ms, zone))
      const [y, mo, d] = [wall.getUTCFullYear(), wall.getUTCMonth(), wall.getUTCDate()]
      const date = (dayMs: number) => new Date(dayMs).toISOString().slice(0, 10)
      const day = dayOf(ms, zone) * DAY
      const weekday = wall.getUTCDay() // Sunday 0
      // ISO 8601: week 1 holds the year's first Thursday; its Monday starts the ISO year.
      const thursday = day + (3 - ((weekday + 6) % 7)) * DAY
      const isoYear = new Date(thursday).getUTCFullYear()
      const jan4 = Date.UTC(isoYear, 0, 4)
      const want = [
        Number(`${y}${[mo + 1, d, wall.getUTCHours(), wall.getUTCMinutes(), wall.getUTCSeconds()].map((n) => String(n).padStart(2, '0')).join('')}`),
        date(Date.UTC(y, mo + 1, 0)),
        date(day + (6 - weekday) * DAY),
        date(day + ((7 - weekday) % 7) * DAY),
        date(jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY),
        Math.floor(ms / 1000) * 1000,
        months[mo],
        zone,
        zoneOffsetMs(zone, ms)! / 1000,
      ]
      return JSON.stringify(rows[i]) !== JSON.stringify(want)
    })
    t.same(wrong.slice(0, 3).map((ms) => [new Date(ms).toISOString(), rows[times.indexOf(ms)]]), [], `${zone}: ${times.length} instants, ${wrong.length} differ`)
  }
  t.same(plan('select toLastDayOfMonth(timestamp), toStartOfISOYear(timestamp), toStartOfSecond(timestamp), timeZoneOf(timestamp) from events').columns.map((c) => c.type), ['Date', 'Date', "DateTime64(6, 'UTC')", 'Nullable(String)'])
  t.same(run('select timeZoneOf(timestamp), timeZoneOffset(timestamp) from events', [at('2024-06-01T00:00:00Z')], 'Europe/Berlin'), [['Europe/Berlin', 7200]], "of the project's zone")
  const refused: Array<[string, RegExp]> = [
    ['select timeZoneOf(toDate(timestamp)) from events', /timeZoneOf\(\) takes a date and time here, not a date/],
    ['select toLastDayOfWeek(timestamp, 10) from events', /toLastDayOfWeek\(\) takes a date and time and a mode from 0 to 9/],
    ['select monthName(event) from events', /monthName\(\) takes one date and time here/],
  ]
  for (const [text, message] of refused) t.throws(() => plan(text), message, text)
})

t.test('on ClickHouse 18.16 they give what the Node engine gives, in zones with and without summer time', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const rng = new Rng(fuzzSeed(), 10)
  // An event every few days over five years, at any second, with a text some read as a date and time.
  const rows = pageviewRows(3, Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`d${i}`, { t: rng.chance(0.5) ? '2024-03-10 02:30:00' : 'x' }]))).map((row, i) => ({ ...row, timestamp: Date.UTC(2021, 0, 1) + i * 15 * DAY + rng.int(DAY) }))
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_hogql_date_functions')
  for (const [zone, project] of [['America/New_York', 'UTC'], ['Australia/Lord_Howe', 'Europe/Berlin'], ['Asia/Kolkata', 'America/St_Johns']]) {
    const columns = [
      'toYYYYMMDDhhmmss(t)', 'toLastDayOfMonth(t)', 'toLastDayOfWeek(t, 3)', 'toStartOfISOYear(t)', 'toStartOfSecond(t)', 'monthName(t)', 'timeZoneOf(t)', 'timeZoneOffset(t)',
      'coalesce(toDateTime(p), timestamp)', `greatest(t, toDateTime('2024-01-01 00:00:00', '${zone}'))`, "toHour(if(p = 'x', t, null))",
    ]
    const plan = parseHogqlQuery(`select ${columns.join(', ')} from (select toTimeZone(timestamp, '${zone}') as t, properties.t as p, timestamp from events) order by t limit 1000`, { now, zone: project })
    const [onSqlite, onClickHouse] = [await sqlite.hogqlQuery(3, plan), await clickhouse.hogqlQuery(3, plan)]
    t.equal(onSqlite.length, rows.length, `${zone} in ${project}: every event`)
    const differ = onSqlite.filter((row, i) => JSON.stringify(row) !== JSON.stringify(onClickHouse[i]))
    t.same(differ.slice(0, 2), [], `${zone} in ${project}: ${differ.length} rows differ`)
  }
})
