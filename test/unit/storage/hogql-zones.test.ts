import t from 'tap'
import { offsetChanges, wallToInstant } from '../../../src/common/time-zones.js'
import { wallInstant } from '../../../src/storage/events/hogql-datetime-text.js'
import { wallTimeSql } from '../../../src/storage/events/clickhouse-periods.js'
import { innermost, parseHogqlQuery } from '../../../src/storage/events/hogql-query.js'
import { runHogqlQuery } from '../../../src/storage/events/hogql-query-run.js'
import type { HogqlNode } from '../../../src/storage/events/hogql-math.js'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { Rng, fuzzSeed } from '../fuzz/rng.js'

const at = (iso: string) => Date.parse(iso)
const now = at('2024-06-20T12:00:00Z')
/** Zones with summer time at 2:00, of half an hour, of a half-hour offset, far east and west; none skips midnight. */
const ZONES = ['UTC', 'Asia/Tokyo', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Kiritimati', 'America/St_Johns', 'Europe/Berlin']

/** The query's rows over events at `times` (ms), each event's properties read as `text`. */
function run(query: string, times: readonly number[], zone: string, text: string | null = null) {
  const p = parseHogqlQuery(query, { now, zone })
  const rows = times.map((ms, n) => ({ uuid: `u${n}`, event: 'e', distinct_id: 'd', person_id: 'p', timestamp: ms, texts: innermost(p).paths.map(() => text) }))
  return runHogqlQuery(p, rows, null).map((row) => row.slice(0, p.shown))
}

/** The wall clock of `zone` at `ms`, by Intl: [year, month, day, hour, minute, second]. */
function wall(ms: number, zone: string): number[] {
  const format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
  const parts = Object.fromEntries(format.formatToParts(ms).map((p) => [p.type, Number(p.value)]))
  return [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second]
}
const pad = (n: number) => String(n).padStart(2, '0')

/** Instants spread over 2000–2030, and each side of every change of offset in those years of the zones. */
function instants(rng: Rng): number[] {
  const times = Array.from({ length: 150 }, () => Date.UTC(2000, 0, 1) + rng.int(30 * 365 * 24) * 3_600_000 + rng.int(3_600) * 1000)
  for (const zone of ZONES) {
    for (const [change] of offsetChanges(zone, Date.UTC(2020, 0, 1), Date.UTC(2026, 0, 1)).slice(1)) times.push(change - 1000, change, change + 1_799_000)
  }
  return times
}

t.test("a date and time moved to a zone (toTimeZone) reads its parts, periods and text on that zone's wall clock", async (t) => {
  const times = instants(new Rng(fuzzSeed(), 1))
  for (const zone of ZONES) {
    const project = zone === 'Asia/Tokyo' ? 'America/New_York' : 'Asia/Tokyo'
    const query = `select toYear(z), toMonth(z), toDayOfMonth(z), toHour(z), toMinute(z), toSecond(z), formatDateTime(z, '%Y-%m-%d %H:%i:%S'), toStartOfDay(z), toDate(z) from (select toTimeZone(timestamp, '${zone}') as z from events) limit 1000`
    const rows = run(query, times, project)
    const wrong = times.filter((ms, i) => {
      const [y, mo, d, h, mi, s] = wall(ms, zone)
      const want = [y, mo, d, h, mi, s, `${y}-${pad(mo)}-${pad(d)} ${pad(h)}:${pad(mi)}:${pad(s)}`, wallToInstant(zone, Date.UTC(y, mo - 1, d))]
      const date = wall(rows[i][8] as number, project)
      return JSON.stringify(rows[i].slice(0, 8)) !== JSON.stringify(want) || JSON.stringify(date.slice(0, 3)) !== JSON.stringify([y, mo, d]) || date[3] !== 0
    })
    t.same(wrong.slice(0, 3).map((ms) => new Date(ms).toISOString()), [], `${zone} in a ${project} project: ${times.length} instants, ${wrong.length} differ`)
  }
})

t.test("a date is a day of no zone: one made on another zone's clock is that day's start on the project's", async (t) => {
  // 2024-05-31 20:00 UTC is 2024-06-01 05:00 in Tokyo.
  const times = [at('2024-05-31T20:00:00Z')]
  t.same(run("select toDate(toTimeZone(timestamp, 'UTC')) = toDate('2024-05-31'), toDate(timestamp) = toDate('2024-06-01'), toStartOfMonth(toTimeZone(timestamp, 'UTC')) = toDate('2024-05-01') from events", times, 'Asia/Tokyo'), [[1, 1, 1]])
  t.same(run("select toDate(toTimeZone(timestamp, 'UTC')) from events", times, 'Asia/Tokyo'), [[at('2024-05-30T15:00:00Z')]], "the Tokyo midnight of the UTC day")
  t.same(
    run("select toTimeZone(timestamp, 'UTC') >= toDate('2024-06-01'), timestamp >= toDate('2024-06-01'), toTimeZone(toDate('2024-06-01'), 'UTC') from events", times, 'Asia/Tokyo'),
    [[0, 1, at('2024-06-01T00:00:00Z')]],
    "compared with a date and time of another zone, a date is its day's first instant there, as ClickHouse converts it",
  )
  t.same(run("select toTimeZone(timestamp, 'UTC') < '2024-05-31 20:00:01', toTimeZone(timestamp, 'Asia/Kolkata') = '2024-06-01 01:30:00' from events", times, 'Asia/Tokyo'), [[1, 1]], 'a text compared with one is read on its zone’s wall clock')
})

t.test("a function's time zone argument is toTimeZone of its date and time, as ClickHouse and PostHog read it", async (t) => {
  const times = instants(new Rng(fuzzSeed(), 2)).slice(0, 200)
  const pairs: Array<[string, string]> = [
    ["toStartOfDay(timestamp, 'Asia/Kolkata')", "toStartOfDay(toTimeZone(timestamp, 'Asia/Kolkata'))"],
    ["formatDateTime(timestamp, '%F %T', 'America/St_Johns')", "formatDateTime(toTimeZone(timestamp, 'America/St_Johns'), '%F %T')"],
    ["dateTrunc('week', timestamp, 'Pacific/Kiritimati')", "dateTrunc('week', toTimeZone(timestamp, 'Pacific/Kiritimati'))"],
    ["toDayOfWeek(timestamp, 3, 'Asia/Tokyo')", "toDayOfWeek(toTimeZone(timestamp, 'Asia/Tokyo'), 3)"],
    ["toWeek(timestamp, 1, 'Australia/Lord_Howe')", "toWeek(toTimeZone(timestamp, 'Australia/Lord_Howe'), 1)"],
    ["toYearWeek(timestamp, 0, 'UTC')", "toYearWeek(toTimeZone(timestamp, 'UTC'))"],
    ["timezone('UTC', timestamp)", "toTimeZone(timestamp, 'UTC')"],
    ["toDateTime(timestamp, 'UTC')", "toTimeZone(timestamp, 'UTC')"],
    ["toUnixTimestamp(timestamp, 'Asia/Tokyo')", 'toUnixTimestamp(timestamp)'],
    ["now('Asia/Tokyo')", 'now()'],
    ['toHour(toTimeZone(timestamp))', 'toHour(timestamp)'],
  ]
  for (const [zoned, moved] of pairs) {
    const rows = run(`select ${zoned}, ${moved} from events limit 1000`, times, 'Europe/Berlin')
    t.same(rows.filter(([a, b]) => a !== b).slice(0, 3), [], `${zoned} is ${moved}`)
  }
  t.same(run("select toHour(toTimeZone(timestamp, 'Asia/Tokyo')), toHour(timestamp) from events", [at('2024-06-01T00:00:00Z')], 'Europe/Berlin'), [[9, 2]], 'and differs from the project’s')
  t.same(run("select toHour(toDateTime(properties.t, 'Asia/Tokyo')), toHour(toDateTime('2024-06-01 12:00', 'Asia/Tokyo')) from events", [0], 'Europe/Berlin', '2024-06-01 12:00'), [[12, 12]], "a text read in a zone is a date and time of it, as ClickHouse's DateTime('zone')")
  t.same(
    run("select dateDiff('hour', toTimeZone(timestamp, 'UTC'), toTimeZone(timestamp, 'Europe/Oslo')), dateDiff('day', toTimeZone(timestamp, 'UTC'), toTimeZone(timestamp, 'Asia/Tokyo')) from events", [at('2024-06-01T20:00:00Z')], 'UTC'),
    [[-1, 1]],
    "dateDiff reads each on its own clock, as ClickHouse's: hours less 1970's offset (toStableRelativeHourNum), days of each wall clock",
  )
  t.same(run("select toHour(toTimeZone(timestamp, 'Asia/Tokyo') + interval 1 day), toDayOfMonth(toTimeZone(now(), 'Asia/Tokyo') - interval 1 month) from events", [at('2024-06-01T00:00:00Z')], 'UTC'), [[9, 20]], 'moved by an interval it stays of its zone')
})

t.test("a column of another zone's date and time has its zone's type, and is read so by the query around it", async (t) => {
  const plan = (text: string) => parseHogqlQuery(text, { now, zone: 'Europe/Berlin' })
  const p = plan("select toTimeZone(timestamp, 'Asia/Tokyo') as t, toStartOfHour(toDateTime(timestamp, 'UTC')), toDate(toTimeZone(timestamp, 'UTC')), timestamp from events")
  t.same(p.columns.map((c) => [c.type, c.zone ?? null]), [["DateTime64(6, 'Asia/Tokyo')", 'Asia/Tokyo'], ["DateTime64(6, 'UTC')", 'UTC'], ['Date', null], ["DateTime64(6, 'Europe/Berlin')", null]])
  t.same(plan("select max(toTimeZone(timestamp, 'UTC')) from events").columns[0].type, "DateTime64(6, 'UTC')", 'min and max keep it')
  t.same(run("select toHour(t) from (select toTimeZone(timestamp, 'UTC') as t from events)", [at('2024-06-01T00:00:00Z')], 'Asia/Tokyo'), [[0]], 'a subquery’s column')
  const refusals: Array<[string, RegExp]> = [
    ["select toTimeZone(timestamp, 'Mars/Base') from events", /toTimeZone\(\) takes a time zone's name .* "Mars\/Base" is none/],
    ['select toTimeZone(timestamp, event) from events', /toTimeZone\(\) takes a time zone's name \(a tz database name as a text literal/],
    ["select toTimeZone(event, 'UTC') from events", /toTimeZone\(\) takes a date and time and a time zone's name here, as in toTimeZone\(timestamp, 'UTC'\)/],
    ["select timezone(timestamp, 'UTC') from events", /timezone\(\) takes a time zone's name/],
    ["select toHour(timestamp, 'UTC') from events", /toHour\(\) takes one date and time here/],
    ["select toStartOfDay(timestamp, 'Nowhere') from events", /toStartOfDay\(\) takes a time zone's name/],
  ]
  for (const [text, message] of refusals) t.throws(() => plan(text), message, text)
})

t.test('on ClickHouse 18.16 a wall time reads as the instant wallInstant gives', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const server = await startClickHouse()
  t.teardown(() => server.destroy())
  const rng = new Rng(fuzzSeed(), 3)
  for (const zone of ZONES) {
    const offsets = offsetChanges(zone, 0, Date.UTC(2036, 0, 1))
    // Every 15 minutes of wall time around each change from 2015 on, and noons at random.
    const walls: number[] = Array.from({ length: 200 }, () => Date.UTC(1970, 0, 1) + rng.int(60 * 365) * 86_400_000 + 43_200_000)
    offsets.forEach(([change, offset], i) => {
      if (i === 0 || change < Date.UTC(2015, 0, 1)) return
      const from = change + Math.min(offset, offsets[i - 1][1]) - 7_200_000
      for (let w = from; w < from + 6 * 3_600_000; w += 900_000) walls.push(w)
    })
    let n = 0
    const node = { op: 'wallTime', type: 'number', offsets, args: [{ op: 'null', type: 'null' }] } as HogqlNode & { op: 'wallTime' }
    const sql = `SELECT ifNull(toString(${wallTimeSql(node, 'x', () => `v_${n++}`)}), 'N') FROM (SELECT arrayJoin([${walls.map((w) => `toFloat64(${w})`).join(', ')}, NULL]) AS x) FORMAT TSV`
    const res = await fetch(server.url, { method: 'POST', body: sql })
    const answers = (await res.text()).replace(/\n$/, '').split('\n')
    t.equal(res.status, 200, res.status === 200 ? `${zone}: the SQL runs` : answers[0].slice(0, 300))
    const wrong = walls.filter((w, i) => Number(answers[i]) !== wallInstant(w, offsets))
    t.same([wrong.slice(0, 3), answers[walls.length]], [[], 'N'], `${zone}: ${walls.length} wall times, ${wrong.length} differ; NULL is NULL`)
  }
})
