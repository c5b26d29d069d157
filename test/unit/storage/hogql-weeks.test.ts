import t from 'tap'
import { calendarSql } from '../../../src/storage/events/clickhouse-periods.js'
import { weekMode, yearWeek } from '../../../src/storage/events/hogql-instants.js'
import { parseHogqlQuery } from '../../../src/storage/events/hogql-query.js'
import { runHogqlQuery } from '../../../src/storage/events/hogql-query-run.js'
import type { HogqlNode, WeekPart } from '../../../src/storage/events/hogql-math.js'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'

const DAY = 86_400_000
const dayOf = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY
const week = (date: string, mode: number) => yearWeek(dayOf(date), mode)[1]
const yearWeekOf = (date: string, mode: number) => {
  const [year, w] = yearWeek(dayOf(date), mode | 2)
  return year * 100 + w
}

t.test("week numbers are ClickHouse's and MySQL's in every mode", async (t) => {
  // ClickHouse's documented examples, then MySQL's (WEEK and YEARWEEK, whose modes ClickHouse's are).
  t.same([week('2016-12-27', 0), week('2016-12-27', 1), week('2016-12-27', 9)], [52, 52, 1], 'toWeek')
  t.same([yearWeekOf('2016-12-27', 0), yearWeekOf('2016-12-27', 1), yearWeekOf('2016-12-27', 9), yearWeekOf('2022-01-01', 0)], [201652, 201652, 201701, 202152], 'toYearWeek')
  t.same([week('2008-02-20', 0), week('2008-02-20', 1), week('2008-12-31', 1), week('2000-01-01', 0), week('2000-01-01', 2), yearWeekOf('1987-01-01', 0)], [7, 8, 53, 0, 52, 198652], "MySQL's")
  let differ = 0
  for (let day = 0; day < 60_000; day++) {
    // ISO 8601: a week is its Thursday's, counted from the week holding the year's first Thursday.
    const thursday = day - ((((day + 3) % 7) + 7) % 7) + 3
    const year = new Date(thursday * DAY).getUTCFullYear()
    const [y, w] = yearWeek(day, 3)
    if (y !== year || w !== Math.floor((thursday - Date.UTC(year, 0, 1) / DAY) / 7) + 1) differ++
  }
  t.equal(differ, 0, "mode 3 is ISO 8601's week, 1970–2134")
})

t.test('queries read toWeek, toYearWeek, toISOWeek and toISOYear on the project zone’s wall clock', async (t) => {
  const run = (text: string, zone: string, iso: string) => {
    const p = parseHogqlQuery(text, { now: Date.parse('2024-03-10T12:00:00Z'), zone })
    return runHogqlQuery(p, [{ uuid: 'u', event: 'e', distinct_id: 'd', person_id: 'p', timestamp: Date.parse(iso), texts: [] }], null)[0]
  }
  const columns = 'select toISOWeek(timestamp), toISOYear(timestamp), toWeek(timestamp), toWeek(timestamp, 9), toYearWeek(timestamp), toYearWeek(timestamp, 3) from events'
  t.same(run(columns, 'UTC', '2021-01-03T12:00:00Z'), [53, 2020, 1, 1, 202101, 202053], 'a Sunday, January 3rd 2021')
  t.same(run(columns, 'America/New_York', '2021-01-04T03:00:00Z'), [53, 2020, 1, 1, 202101, 202053], "still Sunday on New York's wall clock")
  t.throws(() => run('select toWeek(timestamp, 10) from events', 'UTC', '2021-01-04T00:00:00Z'), /toWeek\(\) takes a date and time and a mode from 0 to 9/)
  t.throws(() => run('select toISOWeek(timestamp, 1) from events', 'UTC', '2021-01-04T00:00:00Z'), /toISOWeek\(\) takes one date and time here/)
  t.throws(() => run('select toYearWeek(event) from events', 'UTC', '2021-01-04T00:00:00Z'), /toYearWeek\(\) takes a date and time/)
})

t.test("on ClickHouse 18.16 the written SQL gives yearWeek's numbers for every day of 1970–2104 in every mode", { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const server = await startClickHouse()
  t.teardown(() => server.destroy())
  const cases: Array<[WeekPart, number]> = [...[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((mode): Array<[WeekPart, number]> => [['week', mode], ['yearWeek', mode]]), ['isoYear', 3]]
  for (const [part, mode] of cases) {
    let n = 0
    const node = { op: 'calendar', type: 'number', part, mode, offsets: [[0, 0]], args: [{ op: 'null', type: 'null' }] } as HogqlNode & { op: 'calendar' }
    const bind = (sql: string): [string, string] => {
      const name = `b_${n++}`
      return [`(${sql} AS ${name})`, name]
    }
    const sql = calendarSql(node, 'toFloat64(number * 86400000)', bind, () => `w_${n++}`)
    const res = await fetch(server.url, { method: 'POST', body: `SELECT toString(${sql}) FROM system.numbers LIMIT 49000 FORMAT TSV` })
    const answers = (await res.text()).replace(/\n$/, '').split('\n')
    const wrong = answers.filter((answer, day) => {
      const [year, w] = yearWeek(day, weekMode(part, mode))
      return answer !== String(part === 'week' ? w : part === 'yearWeek' ? year * 100 + w : year)
    })
    t.same([res.status, answers.length, wrong.slice(0, 3)], [200, 49_000, []], `${part} in mode ${mode}: ${wrong.length} of 49,000 days differ`)
  }
})
