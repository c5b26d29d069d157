/**
 * Cron schedules of scheduled changes: which expressions PostHog's validation (five fields, then croniter's
 * is_valid) accepts with which sentence, and when each runs next, as croniter computes it from the run before
 * (PostHog: a croniter started at the last run, as a zoneinfo datetime in the change's timezone). The expected
 * times are croniter 6.2.4's answers for the same expressions, times and zones.
 */
import t from 'tap'
import { NoNextRun, isValidCron, nextCronRun } from '../../../src/management/scheduled-changes/cron.js'
import { CRON_BOTH, CRON_FIVE_FIELDS, CRON_INVALID, readCreate, readUpdate } from '../../../src/management/scheduled-changes/input.js'
import type { ScheduledChangeRecord } from '../../../src/management/scheduled-changes/record.js'
import { nextRunAfter, stepOf } from '../../../src/management/scheduled-changes/schedule.js'
import { refusal } from '../../helpers/refusal.js'

/** The next `count` runs of `expression` after `from`, each computed from the one before, as PostHog's task does. */
function runs(expression: string, from: string, count = 4, zone = 'UTC'): string[] {
  const out: string[] = []
  let at = Date.parse(from)
  for (let i = 0; i < count; i++) {
    at = nextCronRun(expression, at, zone)
    out.push(new Date(at).toISOString().slice(0, 16))
  }
  return out
}

/** The same runs written as the zone's wall clock with its offset (`03-29T03:00+02:00`), as croniter answers them. */
function localRuns(expression: string, from: string, zone: string, count = 4): string[] {
  const format = new Intl.DateTimeFormat('sv-SE', { timeZone: zone, month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', timeZoneName: 'longOffset' })
  return runs(expression, from, count, zone).map((at) => {
    const parts = Object.fromEntries(format.formatToParts(new Date(`${at}Z`)).map((p) => [p.type, p.value]))
    return `${parts.month}-${parts.day}T${parts.hour}:${parts.minute}${parts.timeZoneName!.replace('GMT', '').replace('−', '-')}`
  })
}

t.test('the next run is the first whole minute after the last that matches', async (t) => {
  t.same(runs('0 9 * * 1-5', '2026-01-30T12:00:00Z'), ['2026-02-02T09:00', '2026-02-03T09:00', '2026-02-04T09:00', '2026-02-05T09:00'], 'weekdays at nine, from a Friday noon')
  t.same(runs('0 9 * * *', '2026-01-30T09:00:30Z', 1), ['2026-01-31T09:00'], 'strictly after: a run half a minute late does not run again that day')
  t.same(runs('0 9 * * *', '2026-01-30T08:59:59.999Z', 1), ['2026-01-30T09:00'])
  t.same(runs('0 9 ? * MON', '2026-02-01T00:00:00Z', 2), ['2026-02-02T09:00', '2026-02-09T09:00'], 'names in any case, ? as *')
})

t.test("month ends: days a month lacks are skipped, L is each month's last day, 29 February waits for a leap year", async (t) => {
  t.same(runs('0 0 31 * *', '2026-01-31T00:00:00Z'), ['2026-03-31T00:00', '2026-05-31T00:00', '2026-07-31T00:00', '2026-08-31T00:00'])
  t.same(runs('0 0 L * *', '2026-01-31T00:00:00Z'), ['2026-02-28T00:00', '2026-03-31T00:00', '2026-04-30T00:00', '2026-05-31T00:00'])
  t.same(runs('0 0 L 2 *', '2027-03-01T00:00:00Z', 2), ['2028-02-29T00:00', '2029-02-28T00:00'])
  t.same(runs('0 0 29 2 *', '2026-01-01T00:00:00Z', 2), ['2028-02-29T00:00', '2032-02-29T00:00'])
  t.same(runs('0 0 25-L * *', '2026-02-26T00:00:00Z', 3), ['2026-02-27T00:00', '2026-02-28T00:00', '2026-03-25T00:00'], 'L as the end of a range')
  // croniter 6.0 (PostHog's pin) skipped 1 March here; 6.1 fixed it, and so does skylark.
  t.same(runs('0 0 */10 * *', '2026-02-21T00:00:00Z', 2), ['2026-03-01T00:00', '2026-03-11T00:00'])
})

t.test('both day fields restricted: a day matching either runs, as croniter (and Vixie cron) do', async (t) => {
  t.same(runs('0 0 13 * 5', '2026-02-01T00:00:00Z'), ['2026-02-06T00:00', '2026-02-13T00:00', '2026-02-20T00:00', '2026-02-27T00:00'], 'the 13th and every Friday')
  t.same(runs('0 0 */2 * 1', '2026-02-01T00:00:00Z'), ['2026-02-02T00:00', '2026-02-03T00:00', '2026-02-05T00:00', '2026-02-07T00:00'], 'odd days and Mondays: a step is a restriction')
  t.same(runs('0 0 1-31 * 1', '2026-02-01T00:00:00Z', 3), ['2026-02-02T00:00', '2026-02-03T00:00', '2026-02-04T00:00'], 'every day written out, beside Mondays, is every day')
  t.same(runs('0 0 * * 1#1,5#3', '2026-02-01T00:00:00Z'), ['2026-02-02T00:00', '2026-02-20T00:00', '2026-03-02T00:00', '2026-03-20T00:00'], 'first Monday and third Friday')
  t.same(runs('0 0 * * 5#5', '2026-01-01T00:00:00Z', 3), ['2026-01-30T00:00', '2026-05-29T00:00', '2026-07-31T00:00'], 'only months with five Fridays')
  t.same(runs('0 0 * * L5', '2026-01-01T00:00:00Z', 2), ['2026-01-30T00:00', '2026-02-27T00:00'], "croniter's last Friday")
})

t.test("croniter's ranges: reversed ones wrap, a value to itself is the whole field, 7 is Sunday", async (t) => {
  t.same(runs('0 0 * * fri-mon', '2026-02-01T00:00:00Z'), ['2026-02-02T00:00', '2026-02-06T00:00', '2026-02-07T00:00', '2026-02-08T00:00'])
  t.same(runs('0 0 * nov-feb 1', '2026-02-20T00:00:00Z', 2), ['2026-02-23T00:00', '2026-11-02T00:00'])
  t.same(runs('1-1 9 * * 7', '2026-02-01T00:00:00Z', 2), ['2026-02-01T09:00', '2026-02-01T09:01'], 'every minute of nine o’clock on Sundays')
  t.same(runs('50-10/10 9 1 * *', '2026-02-01T00:00:00Z'), ['2026-02-01T09:00', '2026-02-01T09:10', '2026-02-01T09:50', '2026-03-01T09:00'])
  const drawn = (draw: number) => new Date(nextCronRun('R 9 * * *', Date.parse('2026-02-01T10:00:00Z'), 'UTC', () => draw)).toISOString()
  t.same([drawn(0), drawn(0.999)], ['2026-02-02T09:00:00.000Z', '2026-02-02T09:59:00.000Z'], 'R draws the minute anew each time')
})

t.test('in UTC no daylight saving applies: the nights European and American clocks change are like any other', async (t) => {
  t.same(runs('30 2 * * *', '2026-03-29T00:00:00Z', 2), ['2026-03-29T02:30', '2026-03-30T02:30'])
  t.same(runs('0 1 * * *', '2026-11-01T00:00:00Z', 2), ['2026-11-01T01:00', '2026-11-02T01:00'])
})

t.test("in a project's timezone the fields are its wall clock, whatever its offset that day", async (t) => {
  t.same(localRuns('0 9 * * 1-5', '2026-03-06T00:00:00Z', 'America/New_York'), ['03-06T09:00-05:00', '03-09T09:00-04:00', '03-10T09:00-04:00', '03-11T09:00-04:00'], 'nine in New York, before and after 8 March')
  t.same(runs('0 9 * * 1-5', '2026-03-06T00:00:00Z', 4, 'America/New_York'), ['2026-03-06T14:00', '2026-03-09T13:00', '2026-03-10T13:00', '2026-03-11T13:00'], 'so the UTC instant moves by the hour')
  t.same(localRuns('0 0 * * *', '2026-03-28T12:00:00Z', 'Asia/Kolkata', 2), ['03-29T00:00+05:30', '03-30T00:00+05:30'], 'a half-hour offset')
  t.same(localRuns('0 0 1 * *', '2026-01-31T09:00:00Z', 'Pacific/Chatham', 2), ['02-01T00:00+13:45', '03-01T00:00+13:45'], 'the day is the wall clock’s: 1 February in Chatham is still 31 January in UTC')
})

t.test('spring forward: a time the clock skips runs once at the first minute after the gap, unless the hour is *', async (t) => {
  // Berlin, 29 March 2026: 02:00 CET becomes 03:00 CEST.
  t.same(localRuns('30 2 * * *', '2026-03-27T20:00:00Z', 'Europe/Berlin'), ['03-28T02:30+01:00', '03-29T03:00+02:00', '03-30T02:30+02:00', '03-31T02:30+02:00'])
  t.same(localRuns('0 3 * * *', '2026-03-28T12:00:00Z', 'Europe/Berlin', 2), ['03-29T03:00+02:00', '03-30T03:00+02:00'], 'the hour after the gap, once')
  t.same(localRuns('30 * * * *', '2026-03-28T23:00:00Z', 'Europe/Berlin'), ['03-29T00:30+01:00', '03-29T01:30+01:00', '03-29T03:30+02:00', '03-29T04:30+02:00'], 'every hour: 02:30 does not exist and is skipped')
  t.same(localRuns('*/20 2 * * *', '2026-03-28T12:00:00Z', 'Europe/Berlin', 2), ['03-29T03:00+02:00', '03-30T02:00+02:00'], 'three times 02:xx that night, run once at 03:00')
  // New York, 8 March 2026: 02:00 EST becomes 03:00 EDT.
  t.same(localRuns('30 2 * * *', '2026-03-06T12:00:00Z', 'America/New_York'), ['03-07T02:30-05:00', '03-08T03:00-04:00', '03-09T02:30-04:00', '03-10T02:30-04:00'])
  t.same(localRuns('0 * * * *', '2026-03-08T05:30:00Z', 'America/New_York', 3), ['03-08T01:00-05:00', '03-08T03:00-04:00', '03-08T04:00-04:00'])
})

t.test('fall back: a time the clock repeats runs at its first occurrence and again at its second', async (t) => {
  // Berlin, 25 October 2026: 03:00 CEST becomes 02:00 CET.
  t.same(localRuns('30 2 * * *', '2026-10-24T20:00:00Z', 'Europe/Berlin'), ['10-25T02:30+02:00', '10-25T02:30+01:00', '10-26T02:30+01:00', '10-27T02:30+01:00'])
  t.same(localRuns('0 * * * *', '2026-10-24T22:30:00Z', 'Europe/Berlin', 5), ['10-25T01:00+02:00', '10-25T02:00+02:00', '10-25T02:00+01:00', '10-25T03:00+01:00', '10-25T04:00+01:00'])
  t.same(localRuns('0 3 * * *', '2026-10-24T12:00:00Z', 'Europe/Berlin', 2), ['10-25T03:00+01:00', '10-26T03:00+01:00'], 'a time after the repeat runs once, an hour later in UTC than the day before')
  // New York, 1 November 2026: 02:00 EDT becomes 01:00 EST.
  t.same(localRuns('30 1 * * *', '2026-11-01T00:00:00Z', 'America/New_York'), ['11-01T01:30-04:00', '11-01T01:30-05:00', '11-02T01:30-05:00', '11-03T01:30-05:00'])
  t.same(localRuns('*/30 1 * * 0', '2026-11-01T04:00:00Z', 'America/New_York', 5), ['11-01T01:00-04:00', '11-01T01:30-04:00', '11-01T01:00-05:00', '11-01T01:30-05:00', '11-08T01:00-05:00'])
})

t.test('other zones croniter was checked on: a 30-minute shift, and a day a zone skipped', async (t) => {
  // Lord Howe Island moves its clocks by half an hour: 02:00 becomes 02:30 on 4 October 2026.
  t.same(localRuns('15,45 2 * * *', '2026-10-03T12:00:00Z', 'Australia/Lord_Howe', 3), ['10-04T02:30+11:00', '10-04T02:45+11:00', '10-05T02:15+11:00'])
  // Samoa skipped 30 December 2011: its noon lies in the gap, so the run after the 29th's is at the gap's end.
  t.same(localRuns('0 12 * * *', '2011-12-29T00:00:00Z', 'Pacific/Apia', 2), ['12-29T12:00-10:00', '12-31T00:00+14:00'])
})

t.test('an expression no date matches within 50 years fails as croniter fails', async (t) => {
  for (const expression of ['0 0 31 2 *', '0 0 30 2 1', '0 0 13 * 5#3']) {
    t.throws(() => nextCronRun(expression, Date.parse('2026-02-01T00:00:00Z')), new NoNextRun(), expression)
  }
  const error = (() => {
    try {
      nextCronRun('0 0 31 2 *', 0)
    } catch (e) {
      return e as Error
    }
  })()
  t.match(error, { name: 'CroniterBadDateError', message: 'failed to find next date' })
})

t.test("croniter's is_valid: what it accepts and refuses", async (t) => {
  const accepted = ['0 9 * * MON-FRI', '0 0 ? * 1', '* * * * 7', '0 0 * nov-feb *', '10-5 * * * *', '0 0 25-L * *', '0 0 * * 1#1,5#3', 'R * * * *', '0 0 * * 0-7', '*/60 * * * *', '0 0 31 2 *']
  const refused = ['60 * * * *', '0 24 * * *', '0 0 32 * *', '0 0 0 * *', '0 0 * 13 *', '0 0 * * 8', '*/0 * * * *', '0 0 * * 5L', '0 0 * * L', '0 0 * * 1,5#3', '0 0 * * 5#6', '? 0 * * *', 'H * * * *', '0 0 15W * *', '0 0 L-5 * *', '1,,2 * * * *', '-1 * * * *', '0x1 * * * *', '0 0 * * monday', 'constructor * * * *', '0 0 * __proto__ *']
  for (const e of accepted) t.ok(isValidCron(e), e)
  for (const e of refused) t.notOk(isValidCron(e), e)
})

const body = { record_id: '1', model_name: 'FeatureFlag', payload: { operation: 'update_status', value: true }, scheduled_at: '2026-06-01T14:00:00Z' }

t.test("a cron expression is checked as PostHog's serializer checks it, with its sentences", async (t) => {
  const cron = (cron_expression: unknown, extra: object = {}) => refusal(() => readCreate({ ...body, is_recurring: true, cron_expression, ...extra }))
  t.equal(cron('0 9 * * 1-5'), null)
  t.match(readCreate({ ...body, is_recurring: true, cron_expression: '  0 9 * * 1-5 ' }), { cron_expression: '0 9 * * 1-5' }, 'trimmed, as a CharField is')
  for (const e of ['0 9 * *', '0 9 * * * *', '@daily', '0 0 9 * * 1-5 2026']) t.same(cron(e), { code: 'invalid', detail: CRON_FIVE_FIELDS, attr: 'cron_expression' }, e)
  t.same(cron('60 9 * * *'), { code: 'invalid', detail: CRON_INVALID, attr: 'cron_expression' })
  t.same(cron('0 9 * * 1-5', { recurrence_interval: 'daily' }), { code: 'invalid', detail: CRON_BOTH, attr: 'cron_expression' })
  t.same(cron('0 9 * * 1-5', { is_recurring: false }), { code: 'invalid', detail: 'Cannot set cron_expression when is_recurring is false for new schedules.', attr: 'cron_expression' })
  t.match(cron('x'.repeat(101)), { code: 'max_length', attr: 'cron_expression' })
  t.match(cron(5), { code: 'invalid', detail: CRON_FIVE_FIELDS }, 'a number is text to a CharField')
  t.match(cron('0 9 * * 1-5', { payload: { operation: 'add_release_condition', value: {} } }), { attr: 'payload' })
  t.match(cron(''), { attr: 'recurrence_interval' }, 'blank is no cron expression: a recurring change then needs an interval')
  t.equal(refusal(() => readCreate({ ...body, cron_expression: '' })), null)
})

t.test('an update checks the stored expression and interval with the body: switching needs the interval cleared', async (t) => {
  const stored = { ...body, id: 1, executed_at: null, is_recurring: true, recurrence_interval: 'daily', cron_expression: null, end_date: null } as unknown as ScheduledChangeRecord
  t.same(refusal(() => readUpdate({ cron_expression: '0 9 * * *' }, stored)), { code: 'invalid', detail: CRON_BOTH, attr: 'cron_expression' })
  t.same(readUpdate({ cron_expression: '0 9 * * *', recurrence_interval: null }, stored), { cron_expression: '0 9 * * *', recurrence_interval: null })
  const cronRow = { ...stored, recurrence_interval: null, cron_expression: '0 9 * * *' } as ScheduledChangeRecord
  t.same(readUpdate({ is_recurring: false }, cronRow), { is_recurring: false }, 'a pause keeps the expression')
  t.match(refusal(() => readUpdate({ cron_expression: null }, cronRow)), { attr: 'recurrence_interval', detail: /^Either recurrence_interval or cron_expression/ })
})

t.test('a cron schedule moves on from its last run, skipping what was missed, and PostHog tries the expression first', async (t) => {
  const change = { is_recurring: true, recurrence_interval: null, cron_expression: '0 9 * * 1-5', timezone: 'UTC' }
  const step = stepOf(change)!
  t.equal(new Date(nextRunAfter(Date.parse('2026-01-30T09:00:00Z'), step, Date.parse('2026-01-30T09:00:05Z'))).toISOString(), '2026-02-02T09:00:00.000Z')
  t.equal(new Date(nextRunAfter(Date.parse('2026-01-26T09:00:00Z'), step, Date.parse('2026-01-29T12:00:00Z'))).toISOString(), '2026-01-30T09:00:00.000Z', 'three days late: the missed runs are skipped')
  t.equal(stepOf({ ...change, is_recurring: false }), null, 'paused')
  t.equal(stepOf({ ...change, cron_expression: '' }), null, 'blank, no interval: not recurring')
})

t.test("a schedule reads its expression in its own timezone; intervals stay in UTC, as PostHog's relativedelta on a UTC datetime", async (t) => {
  const cron = { is_recurring: true, recurrence_interval: null, cron_expression: '0 9 * * *', timezone: 'Europe/Berlin' }
  t.equal(new Date(stepOf(cron)!(Date.parse('2026-03-28T08:00:00Z'))).toISOString(), '2026-03-29T07:00:00.000Z', 'nine in Berlin, the morning after the clocks went forward')
  t.equal(new Date(stepOf({ ...cron, timezone: 'Mars/Olympus_Mons' })!(Date.parse('2026-03-28T09:00:00Z'))).toISOString(), '2026-03-29T09:00:00.000Z', 'a zone the runtime does not know reads UTC, as resolve_schedule_timezone falls back')
  const daily = { ...cron, cron_expression: null, recurrence_interval: 'daily' as const }
  t.equal(new Date(stepOf(daily)!(Date.parse('2026-03-28T08:00:00Z'))).toISOString(), '2026-03-29T08:00:00.000Z', 'daily is 24 hours, across the change too')
})
