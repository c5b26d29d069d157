import t from 'tap'
import { offsetChanges, wallToInstant } from '../../../src/common/time-zones.js'
import { datetimeMs, parsedInstant, wallInstant } from '../../../src/storage/events/hogql-datetime-text.js'
import { parsedTimeSql } from '../../../src/storage/events/clickhouse-periods.js'
import { innermost, parseHogqlQuery } from '../../../src/storage/events/hogql-query.js'
import { runHogqlQuery } from '../../../src/storage/events/hogql-query-run.js'
import { hogqlTextSql } from '../../../src/storage/events/hogql-values.js'
import type { HogqlNode } from '../../../src/storage/events/hogql-math.js'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { Rng, fuzzSeed } from '../fuzz/rng.js'

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe']
const offsetsOf = (zone: string) => offsetChanges(zone, 0, Date.UTC(2036, 0, 1))
const UTC = offsetsOf('UTC')
const at = (iso: string) => Date.parse(iso)

t.test("a text reads as the instant it writes, in the zone unless it has its own offset; any other text is null", async (t) => {
  const berlin = offsetsOf('Europe/Berlin')
  t.equal(parsedInstant('2024-01-31', berlin), at('2024-01-30T23:00:00Z'), 'a date is its midnight on the zone’s wall clock')
  t.equal(parsedInstant(' 2024-01-31T12:30:05.25Z\n', berlin), at('2024-01-31T12:30:05.250Z'), 'Z, spaces around')
  t.equal(parsedInstant('2024-01-31 12:30 -05', berlin), at('2024-01-31T17:30:00Z'), 'an offset of hours')
  t.equal(parsedInstant('2024-01-31 12:30:00+0530', berlin), at('2024-01-31T07:00:00Z'), 'an offset without a colon')
  t.equal(parsedInstant('2024-01-31 00:00:00.123456789', UTC), at('2024-01-31T00:00:00Z') + 123.456789, 'nanoseconds below the millisecond kept')
  t.equal(parsedInstant('0000-03-01', UTC), new Date(0).setUTCFullYear(0, 2, 1), 'year 0')
  const refused = ['2024-02-30', '2023-02-29', '2024-04-31', '2024-13-01', '2024-01-00', '2024-01-31 24:00', '2024-01-31 12:60', '2024-01-31 12:00:60', '2024-1-31', '2024-01-31 12', '2024-01-31 12:00:00.', '31/01/2024', 'yesterday', '', 'ä2024-01-31']
  t.same(refused.map((s) => parsedInstant(s, UTC)), refused.map(() => null), 'impossible dates and times and other forms')
  t.equal(parsedInstant(null, UTC), null)
  t.equal(parsedInstant('2024-02-29 23:59:59', UTC), at('2024-02-29T23:59:59Z'), 'a leap day')
})

t.test("a wall time skipped or repeated by summer time reads as Python's fold=0, as a literal's does", async (t) => {
  const york = offsetsOf('America/New_York')
  t.equal(parsedInstant('2024-03-10 02:30', york), at('2024-03-10T07:30:00Z'), 'skipped: read with the offset from before (03:30 EDT)')
  t.equal(parsedInstant('2024-11-03 01:30', york), at('2024-11-03T05:30:00Z'), 'repeated: its first occurrence (EDT)')
  t.equal(parsedInstant('2024-03-10 12:00', york), at('2024-03-10T16:00:00Z'), 'the day after a change: the new offset')
  let differ = 0
  for (const zone of ZONES) {
    const offsets = offsetsOf(zone)
    // Each change from 2000 on, every 15 minutes of wall time from 2 hours before it to a day after.
    offsets.forEach(([change, offset], i) => {
      if (i === 0 || change < Date.UTC(2000, 0, 1)) return
      const from = change + Math.min(offset, offsets[i - 1][1]) - 7_200_000
      for (let wall = from; wall < from + 28 * 3_600_000; wall += 900_000) if (wallInstant(wall, offsets) !== wallToInstant(zone, wall)) differ++
    })
  }
  t.equal(differ, 0, 'wallInstant on the offsets agrees with wallToInstant on Intl')
  t.equal(datetimeMs('2024-03-10 02:30', 'America/New_York'), parsedInstant('2024-03-10 02:30', york), 'a literal reads the same')
})

t.test('queries read texts as dates and times: toDateTime, parseDateTimeBestEffort and toDate', async (t) => {
  const now = at('2024-03-20T12:00:00Z')
  const run = (text: string, values: Array<string | null>, zone = 'UTC') => {
    const p = parseHogqlQuery(text, { now, zone })
    const rows = values.map((v, n) => ({ uuid: `u${n}`, event: 'e', distinct_id: 'd', person_id: 'p', timestamp: at('2024-03-10T00:00:00Z'), texts: innermost(p).paths.map(() => v) }))
    return runHogqlQuery(p, rows, null).map((row) => row.slice(0, p.shown))
  }
  const texts = ['2024-03-10 02:30:00', '2024-03-12T08:00:00.5Z', '2024-02-30', null]
  t.same(run('select toDateTime(properties.t) from events', texts, 'America/New_York'), [[at('2024-03-10T07:30:00Z')], [at('2024-03-12T08:00:00.500Z')], [null], [null]])
  t.same(run("select parseDateTimeBestEffort(properties.t, 'Asia/Kolkata') from events", texts.slice(0, 1)), [[at('2024-03-09T21:00:00Z')]], 'another zone for a text without an offset')
  t.same(run('select toString(toDate(properties.t)), toDayOfMonth(parseDateTime64BestEffortOrNull(properties.t)) from events', texts), [['2024-03-10', 10], ['2024-03-12', 12], [null, null], [null, null]], 'toDate of a text: its day in the zone')
  t.same(run("select dateDiff('hour', toDateTime(properties.t), timestamp) from events where toDateTime(properties.t) < '2024-03-11'", texts), [[-2]], 'compared and subtracted as any date and time')
  t.same(run('select toDateTime(toFloat(properties.t)) from events', ['1710000000.9', 'x']), [[1_710_000_000_000], [null]], 'a number is seconds from 1970, the fraction dropped')
  t.same(run('select toDateTime(toDate(timestamp)) = toDateTime(timestamp), toDateTime(timestamp) from events', ['x']), [[1, at('2024-03-10T00:00:00Z')]], 'a date and time is itself')
  const refusals: Array<[string, RegExp]> = [
    ["select toDateTime(properties.t, 'Mars/Base') from events", /toDateTime\(\) takes a time zone's name \(a tz database name as a text literal, such as 'UTC' or 'Europe\/Berlin'\) as its last argument here. "Mars\/Base" is none/],
    ["select parseDateTimeBestEffort(toFloat(properties.t)) from events", /parseDateTimeBestEffort\(\) takes a text, and/],
    ['select parseDateTime64BestEffort(timestamp) from events', /parseDateTime64BestEffort\(\) takes a text, and/],
    ['select toDateTime() from events', /toDateTime\(\) takes a text/],
    ["select toDateTime(splitByChar(',', properties.t)) from events", /takes a text/],
    ["select toDateTime('2024-02-30') from events", /Cannot read "2024-02-30" as a date and time/],
    ['select toDateTime(properties.t) + interval 1 month from events', /not to timestamp or a property's date/],
  ]
  for (const [text, message] of refusals) t.throws(() => parseHogqlQuery(text, { now, zone: 'UTC' }), message, text)
})

t.test("on ClickHouse 18.16 the written SQL reads every text as the evaluation does", { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const server = await startClickHouse()
  t.teardown(() => server.destroy())
  const rng = new Rng(fuzzSeed(), 12)
  const two = (n: number) => String(rng.int(n)).padStart(2, '0')
  const texts = ['2024-03-10 02:30', '2024-11-03 01:30:00.000001', '2024-03-31T02:30:00.25', '2024-10-27 02:30 +01', '0000-02-29', '0000-03-01 00:00:00.5', '9999-12-31 23:59:59.999999999-0130', '1900-02-29', '2000-02-29', ' 2024-01-31\t', '2024-01-31 12:00:00Z', 'x', '']
  for (let i = 0; i < 400; i++) {
    // Any field out of range now and then; offsets and fractions of every length; a time near a change of offset.
    const fraction = rng.chance(0.3) ? `.${String(rng.int(1e9)).slice(0, 1 + rng.int(9))}` : ''
    const offset = rng.pick(['', '', 'Z', `+${two(15)}`, `-${two(15)}:${two(60)}`, `+${two(15)}${two(60)}`])
    texts.push(`${String(rng.int(10_000)).padStart(4, '0')}-${two(14)}-${two(33)}${rng.chance(0.8) ? `${rng.pick([' ', 'T'])}${two(25)}:${two(61)}${rng.chance(0.7) ? `:${two(61)}${fraction}` : ''}` : ''}${offset}`)
    texts.push(new Date(Date.UTC(2020, 0, 1) + rng.int(8 * 365) * 86_400_000 + rng.int(48) * 1_800_000).toISOString().slice(0, 16).replace('T', ' '))
  }
  const rows = `arrayJoin([${texts.map((s) => `CAST(${hogqlTextSql(s)} AS Nullable(String))`).join(', ')}, NULL])`
  for (const zone of ZONES) {
    const offsets = offsetsOf(zone)
    let n = 0
    const node = { op: 'parseTime', type: 'number', offsets, args: [{ op: 'null', type: 'null' }] } as HogqlNode & { op: 'parseTime' }
    const sql = `SELECT ifNull(toString(${parsedTimeSql(node, 'x', () => `v_${n++}`)}), 'N') FROM (SELECT ${rows} AS x) FORMAT TSV`
    const res = await fetch(server.url, { method: 'POST', body: sql })
    const answers = (await res.text()).replace(/\n$/, '').split('\n')
    t.equal(res.status, 200, res.status === 200 ? `${zone}: the SQL runs` : answers[0].slice(0, 300))
    const wrong = [...texts, null].filter((text, i) => {
      const want = parsedInstant(text, offsets)
      return want === null ? answers[i] !== 'N' : Number(answers[i]) !== want
    })
    t.same(wrong.slice(0, 5), [], `${zone}: ${texts.length + 1} texts, ${wrong.length} differ`)
  }
})
