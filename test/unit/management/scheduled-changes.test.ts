/**
 * Scheduled changes, below HTTP: the recurrence arithmetic, the failure sentences, what each operation asks of
 * the flag, the serializer's field order and cross-field rules, and the applier on a real management.db with a
 * clock the test moves (applied through the flag service, failures recorded without stopping the others,
 * passing failures retried a minute later, recurring schedules moving on, paused ones left alone).
 */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import type { Clock } from '../../../src/common/clock.js'
import { createManagement, ScheduledChangeApplier } from '../../../src/management/index.js'
import { readCreate, readUpdate } from '../../../src/management/scheduled-changes/input.js'
import { flagPatchFor } from '../../../src/management/scheduled-changes/operations.js'
import type { ScheduledChangeRecord } from '../../../src/management/scheduled-changes/record.js'
import { failureContext, formatFailureReason, nextRun, nextRunAfter } from '../../../src/management/scheduled-changes/schedule.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'
import { tempDir } from '../../helpers/temp.js'
import { refusal } from '../../helpers/refusal.js'

const at = (s: string) => Date.parse(s)
const isoOf = (ms: number) => new Date(ms).toISOString()
const TURN_ON_PAYLOAD = { operation: 'update_status', value: true }

t.test('recurring runs follow the calendar, clamped to the end of a short month, and skip what was missed', async (t) => {
  t.equal(isoOf(nextRun(at('2025-01-31T09:00:00Z'), 'monthly')), '2025-02-28T09:00:00.000Z')
  t.equal(isoOf(nextRun(at('2024-01-31T09:00:00Z'), 'monthly')), '2024-02-29T09:00:00.000Z')
  t.equal(isoOf(nextRun(at('2024-02-29T09:00:00Z'), 'yearly')), '2025-02-28T09:00:00.000Z')
  t.equal(isoOf(nextRun(at('2025-12-15T09:00:00Z'), 'monthly')), '2026-01-15T09:00:00.000Z')
  t.equal(isoOf(nextRun(at('2025-03-01T09:00:00Z'), 'weekly')), '2025-03-08T09:00:00.000Z')
  // Three days late: the missed daily runs are skipped, the rhythm (09:00) kept.
  t.equal(isoOf(nextRunAfter(at('2025-03-01T09:00:00Z'), (ms) => nextRun(ms, 'daily'), at('2025-03-04T10:00:00Z'))), '2025-03-05T09:00:00.000Z')
})

t.test("failures read as PostHog's formatted_failure_reason", async (t) => {
  const show = (c: object) => formatFailureReason(JSON.stringify(c))
  t.equal(show(failureContext('Feature flag not found', 'DoesNotExist', true, 1)), 'Feature flag not found (permanent error)')
  t.equal(show(failureContext('database is locked', 'SqliteError', false, 1)), 'database is locked (will retry automatically, 4 attempts remaining)')
  t.equal(show(failureContext('database is locked', 'SqliteError', false, 4)), 'database is locked (will retry automatically, 1 attempt remaining)')
  t.equal(show(failureContext('database is locked', 'SqliteError', false, 5)), 'database is locked (failed after 5 out of 5 attempts)')
  t.equal(formatFailureReason('an old plain reason'), 'an old plain reason')
  t.equal(formatFailureReason(null), null)
})

t.test('each operation is the PATCH body PostHog builds, and a payload that does not fit is refused with its sentence', async (t) => {
  const filters = { groups: [{ properties: [], rollout_percentage: 10 }], payloads: {}, multivariate: null }
  t.same(flagPatchFor({ operation: 'update_status', value: true }, filters), { active: true })
  t.same(flagPatchFor({ operation: 'add_release_condition', value: { groups: [{ properties: [], rollout_percentage: 100 }] } }, filters).filters, {
    ...filters,
    groups: [...filters.groups, { properties: [], rollout_percentage: 100 }],
  })
  const variants = [
    { key: 'a', rollout_percentage: 50 },
    { key: 'b', rollout_percentage: 50 },
  ]
  t.same(flagPatchFor({ operation: 'update_variants', value: { variants, payloads: { a: '1' } } }, filters).filters, { ...filters, multivariate: { variants }, payloads: { a: '1' } })
  const refused = (payload: unknown) => refusal(() => flagPatchFor(payload, filters))?.detail
  t.equal(refused({ operation: 'update_status' }), 'Invalid payload')
  t.equal(refused([1]), 'Invalid payload')
  t.equal(refused({ operation: 'add_release_condition', value: { groups: 'x' } }), 'Invalid payload')
  t.equal(refused({ operation: 'flip', value: 1 }), 'Unrecognized operation: flip')
  t.equal(refused({ operation: 'update_variants', value: { variants: [{ key: 'a', rollout_percentage: 60 }] } }), 'Invalid variant rollout percentages: sum is 60, must be 100')
  t.equal(refused({ operation: 'update_variants', value: { variants, payloads: { z: '1', c: '2' } } }), "Payload keys {'c', 'z'} don't match variant keys {'a', 'b'}")
})

t.test("bodies are read in the serializer's order, then its cross-field rules", async (t) => {
  const body = { record_id: '1', model_name: 'FeatureFlag', payload: { operation: 'update_status', value: true }, scheduled_at: '2025-06-01T14:00:00Z' }
  t.match(refusal(() => readCreate({})), { code: 'required', attr: 'record_id' })
  t.match(refusal(() => readCreate({ ...body, model_name: 'Survey', scheduled_at: 'soon' })), { code: 'invalid_choice', detail: '"Survey" is not a valid choice.', attr: 'model_name' })
  t.match(refusal(() => readCreate({ ...body, payload: null })), { code: 'null', attr: 'payload' })
  t.match(refusal(() => readCreate({ ...body, scheduled_at: 20250601 })), { code: 'invalid', attr: 'scheduled_at', detail: /^Datetime has wrong format/ })
  t.match(refusal(() => readCreate({ ...body, is_recurring: true })), { attr: 'recurrence_interval', detail: 'Either recurrence_interval or cron_expression is required when is_recurring is true.' })
  t.match(refusal(() => readCreate({ ...body, recurrence_interval: 'daily' })), { attr: 'recurrence_interval', detail: 'Cannot set recurrence_interval when is_recurring is false for new schedules.' })
  t.match(refusal(() => readCreate({ ...body, is_recurring: true, recurrence_interval: 'daily', payload: { operation: 'add_release_condition', value: {} } })), { attr: 'payload' })
  t.match(refusal(() => readCreate({ ...body, end_date: '2025-06-01T13:00:00Z' })), { attr: 'end_date', detail: 'End date must be after the scheduled start date.' })
  t.match(readCreate({ ...body, record_id: 7, cron_expression: '' }), { record_id: '7', is_recurring: false, scheduled_at: '2025-06-01T14:00:00.000Z' })
  const stored = { ...body, id: 1, payload: body.payload, executed_at: null, is_recurring: false, recurrence_interval: null, end_date: null } as unknown as ScheduledChangeRecord
  t.match(refusal(() => readUpdate({ record_id: '2' }, stored)), { attr: 'record_id', detail: 'Cannot change the target record of an existing scheduled change.' })
  t.match(refusal(() => readUpdate({ scheduled_at: '2025-07-01' }, { ...stored, executed_at: '2025-06-01T14:00:00.000Z' })), { attr: null, detail: 'Cannot modify a scheduled change that has already executed.' })
  t.same(readUpdate({ is_recurring: false }, { ...stored, is_recurring: true, recurrence_interval: 'daily' }), { is_recurring: false }, 'an update keeps the interval: a pause')
})

/** A real management.db in a temp folder, a user who owns its project, and a clock the test moves. */
function setup(t: Test) {
  const dir = tempDir('skylark-scheduled-')
  const db = openDatabase(join(dir, 'management.db'))
  migrate(db, MANAGEMENT_MIGRATIONS)
  t.teardown(() => db.close())
  let now = at('2025-06-01T12:00:00Z')
  const clock: Clock = { now: () => now }
  const m = createManagement(db, clock)
  const org = m.accounts.createOrganization('o')
  const user = m.accounts.createUser({ email: 'u@example.com' })
  m.accounts.addMember(org.id, user.id, 15)
  const project = m.accounts.createProject(org.id, 'p')
  const applier = new ScheduledChangeApplier({ db, clock, accounts: m.accounts, featureFlags: m.featureFlags, changes: m.scheduledChanges })
  const schedule = (flagId: number, payload: unknown, inMs: number, extra: object = {}) =>
    m.scheduledChanges.create(project, { record_id: flagId, model_name: 'FeatureFlag', payload, scheduled_at: isoOf(now + inMs), ...extra }, user.id)
  return { db, m, user, project, applier, schedule, advance: (ms: number) => (now += ms), change: (id: number) => m.scheduledChanges.get(project, id) }
}

t.test('a due change is applied through the flag service as its creator, once', async (t) => {
  const { m, user, project, applier, schedule, advance, change } = setup(t)
  const flag = m.featureFlags.create(project, { key: 'launch', active: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }, user.id)
  const noticed: number[] = []
  m.featureFlags.onChange((teamId) => noticed.push(teamId))
  const c = schedule(flag.id, { operation: 'update_status', value: true }, 3_600_000)
  t.same([...applier.runDue()], [], 'nothing is due an hour early')
  advance(3_600_000)
  t.same([...applier.runDue()], [[c.id, 'applied']])
  const after = m.featureFlags.get(project, flag.id, user.id)
  t.equal(after.active, true)
  t.equal(after.version, flag.version + 1, 'a new version, as a PATCH makes')
  t.same(noticed, [project.id], 'the evaluation caches heard of it')
  t.equal(change(c.id).executed_at, '2025-06-01T13:00:00.000Z')
  t.equal(change(c.id).failure_reason, null)
  const activity = m.featureFlags.activity(project, flag.id, { limit: 10, page: 1 }).results[0] as { activity: string; user: { email: string } }
  t.match(activity, { activity: 'updated', user: { email: 'u@example.com' } }, 'the activity entry names the creator')
  advance(60_000)
  t.same([...applier.runDue()], [], 'an executed change is not applied again')
})

t.test('a change whose flag was deleted, or whose payload no longer validates, fails with a reason and does not stop the others', async (t) => {
  const { m, user, project, applier, schedule, advance, change } = setup(t)
  const doomed = m.featureFlags.create(project, { key: 'doomed' }, user.id)
  const multi = m.featureFlags.create(project, { key: 'multi' }, user.id)
  const fine = m.featureFlags.create(project, { key: 'fine', active: false }, user.id)
  const gone = schedule(doomed.id, { operation: 'update_status', value: true }, 1_000)
  const bad = schedule(multi.id, { operation: 'add_release_condition', value: { groups: [{ properties: [{ key: 'plan', type: 'person', operator: 'gt', value: [1, 2] }] }] } }, 2_000)
  const ok = schedule(fine.id, { operation: 'update_status', value: true }, 3_000)
  m.featureFlags.update(project, doomed.id, { deleted: true }, user.id)
  advance(5_000)
  t.same([...applier.runDue()], [
    [gone.id, 'failed'],
    [bad.id, 'failed'],
    [ok.id, 'applied'],
  ])
  t.equal(change(gone.id).failure_reason, 'Feature flag not found (permanent error)')
  t.equal(change(bad.id).failure_reason, 'Invalid value for operator gt: [1, 2] (permanent error)', "the flag's own validation sentence")
  t.not(change(bad.id).executed_at, null, 'a permanent failure ends the change')
  t.equal(m.featureFlags.get(project, multi.id, user.id).version, multi.version, 'the flag is left as it was')
  t.equal(m.featureFlags.get(project, fine.id, user.id).active, true)
})

t.test('a passing failure is retried a minute later, and recorded as such', async (t) => {
  const { db, m, user, project, applier, schedule, advance, change } = setup(t)
  const flag = m.featureFlags.create(project, { key: 'busy', active: false }, user.id)
  const c = schedule(flag.id, { operation: 'update_status', value: true }, 0)
  // A write the database refuses for a reason of its own, not the change's.
  db.exec(`CREATE TRIGGER refuse BEFORE UPDATE ON feature_flags BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`)
  t.same([...applier.runDue()], [[c.id, 'retrying']])
  t.equal(change(c.id).failure_reason, 'disk I/O error (will retry automatically, 4 attempts remaining)')
  t.equal(change(c.id).executed_at, null)
  advance(30_000)
  t.same([...applier.runDue()], [], 'not before a minute has passed')
  db.exec('DROP TRIGGER refuse')
  advance(30_000)
  t.same([...applier.runDue()], [[c.id, 'applied']])
  t.equal(m.featureFlags.get(project, flag.id, user.id).active, true)
})

t.test('a recurring change moves to its next run until its end date, and a paused one waits', async (t) => {
  const { m, user, project, applier, schedule, advance, change } = setup(t)
  const flag = m.featureFlags.create(project, { key: 'nightly' }, user.id)
  const c = schedule(flag.id, { operation: 'update_status', value: false }, 0, { is_recurring: true, recurrence_interval: 'daily', end_date: '2025-06-02T18:00:00Z' })
  t.same([...applier.runDue()], [[c.id, 'applied']])
  t.match(change(c.id), { scheduled_at: '2025-06-02T12:00:00.000Z', last_executed_at: '2025-06-01T12:00:00.000Z', executed_at: null })
  m.featureFlags.update(project, flag.id, { active: true }, user.id)
  m.scheduledChanges.update(project, c.id, { is_recurring: false }, user.id)
  advance(86_400_000)
  t.same([...applier.runDue()], [[c.id, 'skipped']], 'paused')
  t.equal(m.featureFlags.get(project, flag.id, user.id).active, true)
  m.scheduledChanges.update(project, c.id, { is_recurring: true }, user.id)
  t.same([...applier.runDue()], [[c.id, 'applied']])
  t.match(change(c.id), { executed_at: '2025-06-02T12:00:00.000Z' }, 'the next run would pass the end date: done')
})

t.test('the timer wakes for a change written to fall due soon, not a minute later', async (t) => {
  const { db, m, user, project } = setup(t)
  const clock: Clock = { now: () => Date.now() }
  const live = createManagement(db, clock)
  const applier = new ScheduledChangeApplier({ db, clock, accounts: live.accounts, featureFlags: live.featureFlags, changes: live.scheduledChanges })
  applier.start()
  t.teardown(() => applier.stop())
  const flag = m.featureFlags.create(project, { key: 'soon', active: false }, user.id)
  live.scheduledChanges.create(project, { record_id: flag.id, model_name: 'FeatureFlag', payload: { operation: 'update_status', value: true }, scheduled_at: isoOf(Date.now() + 300) }, user.id)
  const started = Date.now()
  // Well under the minute the applier would otherwise wait, with room for a busy machine.
  while (!m.featureFlags.get(project, flag.id, user.id).active && Date.now() - started < 30_000) await new Promise((r) => setTimeout(r, 25))
  t.ok(m.featureFlags.get(project, flag.id, user.id).active, `applied without waiting for the minute, in ${Date.now() - started} ms`)
})

t.test('a change that falls due while a run works is applied at once, not a minute later', async (t) => {
  const { m, user, project, applier, schedule, advance, change } = setup(t)
  const first = m.featureFlags.create(project, { key: 'first', active: false }, user.id)
  const second = m.featureFlags.create(project, { key: 'second', active: false }, user.id)
  const a = schedule(first.id, TURN_ON_PAYLOAD, 0)
  const b = schedule(second.id, TURN_ON_PAYLOAD, 5)
  // Applying the first change takes the clock past the second's time.
  m.featureFlags.onChange(() => advance(10))
  applier.start()
  t.teardown(() => applier.stop())
  const started = Date.now()
  while (change(b.id).executed_at === null && Date.now() - started < 2_000) await new Promise((r) => setTimeout(r, 10))
  t.not(change(a.id).executed_at, null)
  t.not(change(b.id).executed_at, null, 'the second ran on the next tick')
})

t.test("a database the timer can't read is logged and tried again later, not thrown out of the timer", async (t) => {
  const { db, m, applier, schedule, user, project } = setup(t)
  const flag = m.featureFlags.create(project, { key: 'unread' }, user.id)
  schedule(flag.id, TURN_ON_PAYLOAD, 0)
  db.exec('ALTER TABLE scheduled_changes RENAME TO scheduled_changes_away')
  applier.start()
  t.teardown(() => applier.stop())
  await new Promise((r) => setTimeout(r, 100))
  t.pass('the process is still here after the timer ran')
  db.exec('ALTER TABLE scheduled_changes_away RENAME TO scheduled_changes')
})

t.test('a cron schedule runs, moves to the next time its expression matches, pauses, and ends at its end date', async (t) => {
  const { m, user, project, applier, schedule, advance, change } = setup(t)
  const flag = m.featureFlags.create(project, { key: 'weekday-mornings', active: false }, user.id)
  // 2025-06-01 is a Sunday; the clock stands at 12:00.
  const c = schedule(flag.id, TURN_ON_PAYLOAD, 0, { is_recurring: true, cron_expression: '0 9 * * 1-5', end_date: '2025-06-04T00:00:00Z' })
  t.match(c, { cron_expression: '0 9 * * 1-5', recurrence_interval: null, timezone: 'UTC' })
  t.same([...applier.runDue()], [[c.id, 'applied']])
  t.equal(m.featureFlags.get(project, flag.id, user.id).active, true)
  t.match(change(c.id), { scheduled_at: '2025-06-02T09:00:00.000Z', last_executed_at: '2025-06-01T12:00:00.000Z', executed_at: null, failure_reason: null })
  m.scheduledChanges.update(project, c.id, { is_recurring: false }, user.id)
  advance(86_400_000)
  t.same([...applier.runDue()], [[c.id, 'skipped']], 'paused: the expression is kept')
  m.scheduledChanges.update(project, c.id, { is_recurring: true }, user.id)
  t.same([...applier.runDue()], [[c.id, 'applied']], 'resumed, a day late')
  t.match(change(c.id), { scheduled_at: '2025-06-03T09:00:00.000Z', last_executed_at: '2025-06-02T12:00:00.000Z', executed_at: null }, 'the next run follows the expression, not the late hour')
  advance(86_400_000)
  t.same([...applier.runDue()], [[c.id, 'applied']])
  t.match(change(c.id), { executed_at: '2025-06-03T12:00:00.000Z', last_executed_at: '2025-06-03T12:00:00.000Z' }, 'the next run would pass the end date: done')
})

t.test("a cron expression reads the wall clock of its project's timezone when the change was made, kept after the project moves", async (t) => {
  const { m, user, project, applier, advance, change } = setup(t)
  const flag = m.featureFlags.create(project, { key: 'kathmandu-mornings', active: false }, user.id)
  // Kathmandu is UTC+05:45: 09:00 there is 03:15 UTC. The clock stands at 2025-06-01 12:00 UTC.
  const inKathmandu = m.accounts.updateProject(project.id, { timezone: 'Asia/Kathmandu' })
  const body = { record_id: flag.id, model_name: 'FeatureFlag', payload: TURN_ON_PAYLOAD, scheduled_at: '2025-06-01T12:00:00Z', is_recurring: true, cron_expression: '0 9 * * *' }
  const c = m.scheduledChanges.create(inKathmandu, body, user.id)
  t.equal(c.timezone, 'Asia/Kathmandu')
  t.same([...applier.runDue()], [[c.id, 'applied']])
  t.equal(change(c.id).scheduled_at, '2025-06-02T03:15:00.000Z', '09:00 in Kathmandu, not in UTC')
  const inUtc = m.accounts.updateProject(project.id, { timezone: 'UTC' })
  m.featureFlags.update(inUtc, flag.id, { active: false }, user.id)
  advance(15 * 3_600_000 + 15 * 60_000)
  t.same([...applier.runDue()], [[c.id, 'applied']], 'due at 03:15 UTC')
  t.equal(m.featureFlags.get(inUtc, flag.id, user.id).active, true)
  t.match(change(c.id), { scheduled_at: '2025-06-03T03:15:00.000Z', timezone: 'Asia/Kathmandu' }, 'the project moved to UTC; the change keeps its zone')
  t.equal(m.scheduledChanges.create(inUtc, body, user.id).timezone, 'UTC', "a change made now takes the project's new timezone")
})

t.test('a cron expression no date matches: the flag changes once, then the schedule fails for good', async (t) => {
  const { m, user, project, applier, schedule, change } = setup(t)
  const flag = m.featureFlags.create(project, { key: 'never-again', active: false }, user.id)
  const c = schedule(flag.id, TURN_ON_PAYLOAD, 0, { is_recurring: true, cron_expression: '0 0 31 2 *' })
  t.same([...applier.runDue()], [[c.id, 'failed']])
  t.equal(m.featureFlags.get(project, flag.id, user.id).active, true, "PostHog's task applied the change before looking for the next run, and keeps it")
  t.match(change(c.id), { failure_reason: 'failed to find next date (permanent error)', executed_at: '2025-06-01T12:00:00.000Z', scheduled_at: '2025-06-01T12:00:00.000Z', last_executed_at: null })
})
