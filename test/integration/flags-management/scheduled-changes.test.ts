/**
 * PostHog's scheduled change API over HTTP, against the real server and its applier: a change scheduled a
 * moment ahead turns a flag on and /decide answers the new value; a cron schedule runs and moves to the next
 * minute its expression matches, on the wall clock of the project's timezone when the change was made; a
 * change whose flag was deleted, or whose creator may no longer edit the flag, or whose expression matches no
 * date, fails with a reason; refusals carry the contract's envelope with DRF's messages; the list filters; and
 * the flag scopes and project boundaries hold.
 */
import t from 'tap'
import { MembershipLevel } from '../../../src/management/index.js'
import { readUntil } from '../../helpers/wait.js'
import { flagServer, simpleFlag } from './fixture.js'

const FIELDS = ['id', 'team_id', 'record_id', 'model_name', 'payload', 'scheduled_at', 'executed_at', 'failure_reason', 'created_at', 'created_by', 'updated_at', 'is_recurring', 'recurrence_interval', 'cron_expression', 'last_executed_at', 'end_date', 'timezone']
const TURN_ON = { operation: 'update_status', value: true }

t.test('scheduled change API', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server, base, flags } = f
  const changes = `${base}/scheduled_changes/`
  const api = (method: string, path: string, body?: unknown) => server.api(method, path, body)
  const newFlag = async (key: string, extra: Record<string, unknown> = {}) => (await api('POST', flags, simpleFlag(key, extra))).body
  const schedule = (recordId: unknown, inMs: number, payload: unknown = TURN_ON) =>
    api('POST', changes, { record_id: recordId, model_name: 'FeatureFlag', payload, scheduled_at: new Date(Date.now() + inMs).toISOString() })
  const settled = (id: number) => readUntil(`change ${id} to run`, async () => (await api('GET', `${changes}${id}/`)).body, (c) => c.executed_at !== null, 10_000)

  t.test('a change scheduled a moment ahead turns the flag on, and /decide answers the new value', async (t) => {
    const flag = await newFlag('launch-day', { active: false })
    const decide = async () => (await server.request('POST', '/decide/?v=3', { body: { api_key: server.boot.project_api_key, distinct_id: 'visitor' } })).body.featureFlags['launch-day']
    t.notOk(await decide(), 'off before')
    const res = await schedule(flag.id, 1_500)
    t.equal(res.status, 201)
    t.same(Object.keys(res.body), FIELDS, "PostHog's fields, in its order")
    t.match(res.body, { record_id: String(flag.id), model_name: 'FeatureFlag', payload: TURN_ON, executed_at: null, failure_reason: null, is_recurring: false, timezone: 'UTC', created_by: { email: 'admin@skylark.local' } })
    t.equal(await decide(), undefined, 'still off until it is due')
    t.equal(await readUntil('/decide to serve the flag', decide, (v) => v === true, 10_000), true)
    const done = (await api('GET', `${changes}${res.body.id}/`)).body
    t.ok(Date.parse(done.executed_at) >= Date.parse(res.body.scheduled_at), `executed at ${done.executed_at}, due ${res.body.scheduled_at}`)
    t.equal(done.failure_reason, null)
    const after = (await api('GET', `${flags}${flag.id}/`)).body
    t.match(after, { active: true, version: flag.version + 1 })
    const activity = (await api('GET', `${flags}${flag.id}/activity/`)).body.results
    t.match(activity[0], { activity: 'updated', user: { email: 'admin@skylark.local' }, detail: { changes: [{ field: 'active', before: false, after: true }] } })
    const again = await api('PATCH', `${changes}${res.body.id}/`, { scheduled_at: '2030-01-01T00:00:00Z' })
    t.same(again.body, { type: 'validation_error', code: 'invalid', detail: 'Cannot modify a scheduled change that has already executed.', attr: null })
  })

  t.test('a change whose flag was deleted fails with a reason; the others still run', async (t) => {
    const doomed = await newFlag('doomed')
    const other = await newFlag('survivor', { active: false })
    const gone = (await schedule(doomed.id, 800)).body
    const fine = (await schedule(other.id, 800)).body
    await api('PATCH', `${flags}${doomed.id}/`, { deleted: true })
    t.equal((await settled(gone.id)).failure_reason, 'Feature flag not found (permanent error)')
    t.equal((await settled(fine.id)).failure_reason, null)
    t.equal((await api('GET', `${flags}${other.id}/`)).body.active, true)
  })

  t.test("a change is applied as its creator's PATCH: one who may no longer edit the flag fails", async (t) => {
    const member = f.member(MembershipLevel.member)
    const flag = (await member.call('POST', flags, simpleFlag('guarded', { active: false }))).body
    const change = (await member.call('POST', changes, { record_id: flag.id, model_name: 'FeatureFlag', payload: TURN_ON, scheduled_at: new Date(Date.now() + 1_500).toISOString() })).body
    // Taken out of the flag's editors before it runs: the only role with access is one the member lacks.
    const role = (await api('POST', `/api/organizations/${f.orgId}/roles/`, { name: 'Flag owners' })).body
    t.equal((await api('POST', `${flags}${flag.id}/role_access/`, { role_id: role.id })).status, 201)
    const viewers = (await api('POST', `/api/organizations/${f.orgId}/roles/`, { name: 'Viewers only', feature_flags_access_level: 21 })).body
    await api('POST', `/api/organizations/${f.orgId}/roles/${viewers.id}/role_memberships/`, { user_uuid: member.user.uuid })
    // The member created the flag, and a flag's creator may always edit it; hand it to someone else.
    f.db.prepare('UPDATE feature_flags SET created_by_id = NULL WHERE id = ?').run(flag.id)
    t.equal((await settled(change.id)).failure_reason, "You don't have edit permissions for this feature flag. (permanent error)")
    t.equal((await api('GET', `${flags}${flag.id}/`)).body.active, false)
  })

  t.test("refusals carry the contract's envelope with DRF's messages", async (t) => {
    const flag = await newFlag('target')
    const refused = async (method: string, path: string, body: unknown, expected: object) => {
      const res = await api(method, path, body)
      t.equal(res.status, 400, JSON.stringify(body))
      t.same(res.body, { type: 'validation_error', ...expected })
    }
    await refused('POST', changes, {}, { code: 'required', detail: 'This field is required.', attr: 'record_id' })
    await refused('POST', changes, { record_id: flag.id, model_name: 'Survey' }, { code: 'invalid_choice', detail: '"Survey" is not a valid choice.', attr: 'model_name' })
    await refused('POST', changes, { record_id: flag.id, model_name: 'FeatureFlag', payload: TURN_ON, scheduled_at: 'tomorrow' }, {
      code: 'invalid',
      detail: 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
      attr: 'scheduled_at',
    })
    await refused('POST', changes, { record_id: 'nope', model_name: 'FeatureFlag', payload: TURN_ON, scheduled_at: '2030-01-01' }, { code: 'invalid', detail: 'Feature flag not found', attr: null })
    await refused('POST', changes, { record_id: flag.id, model_name: 'FeatureFlag', payload: TURN_ON, scheduled_at: '2030-01-01', is_recurring: true }, {
      code: 'invalid',
      detail: 'Either recurrence_interval or cron_expression is required when is_recurring is true.',
      attr: 'recurrence_interval',
    })
    const recurring = { record_id: flag.id, model_name: 'FeatureFlag', payload: TURN_ON, scheduled_at: '2030-01-01', is_recurring: true }
    await refused('POST', changes, { ...recurring, cron_expression: '0 9 * *' }, {
      code: 'invalid',
      detail: "Only standard 5-field cron expressions are supported (minute hour day month weekday). Example: '0 9 * * 1-5'.",
      attr: 'cron_expression',
    })
    await refused('POST', changes, { ...recurring, cron_expression: '0 9 * * 1L' }, { code: 'invalid', detail: "Invalid cron expression. Use standard 5-field cron syntax (e.g., '0 9 * * 1-5').", attr: 'cron_expression' })
    await refused('POST', changes, { ...recurring, cron_expression: '0 9 * * 1', recurrence_interval: 'weekly' }, {
      code: 'invalid',
      detail: 'Cannot set both cron_expression and recurrence_interval. Use one or the other.',
      attr: 'cron_expression',
    })
    await refused('POST', changes, { ...recurring, is_recurring: false, cron_expression: '0 9 * * 1' }, { code: 'invalid', detail: 'Cannot set cron_expression when is_recurring is false for new schedules.', attr: 'cron_expression' })
    const pending = (await schedule(flag.id, 3_600_000)).body
    await refused('PATCH', `${changes}${pending.id}/`, { record_id: '999' }, { code: 'invalid', detail: 'Cannot change the target record of an existing scheduled change.', attr: 'record_id' })
    // PostHog compares the text: another spelling of the same id is a change of target too.
    await refused('PATCH', `${changes}${pending.id}/`, { record_id: `0${flag.id}` }, { code: 'invalid', detail: 'Cannot change the target record of an existing scheduled change.', attr: 'record_id' })
    const moved = await api('PATCH', `${changes}${pending.id}/`, { scheduled_at: '2031-02-03T04:05:06+01:00', record_id: ` ${flag.id} ` })
    t.equal(moved.status, 200, 'the stored id, blanks trimmed as a CharField does, is no change of target')
    t.equal(moved.body.scheduled_at, '2031-02-03T03:05:06.000Z')
    t.equal((await api('GET', `${changes}abc/`)).status, 404)
  })

  t.test('a cron schedule is applied by the server and rescheduled to the next minute its expression matches', async (t) => {
    const flag = await newFlag('every-minute', { active: false })
    const decide = async () => (await server.request('POST', '/decide/?v=3', { body: { api_key: server.boot.project_api_key, distinct_id: 'visitor' } })).body.featureFlags['every-minute']
    const scheduledAt = new Date(Date.now() + 1_500).toISOString()
    const res = await api('POST', changes, { record_id: flag.id, model_name: 'FeatureFlag', payload: TURN_ON, scheduled_at: scheduledAt, is_recurring: true, cron_expression: ' * * * * * ' })
    t.equal(res.status, 201)
    t.match(res.body, { is_recurring: true, recurrence_interval: null, cron_expression: '* * * * *', timezone: 'UTC', last_executed_at: null })
    const ran = await readUntil(`change ${res.body.id} to run`, async () => (await api('GET', `${changes}${res.body.id}/`)).body, (c) => c.last_executed_at !== null, 10_000)
    const runAt = Date.parse(ran.last_executed_at)
    t.ok(runAt >= Date.parse(scheduledAt), 'not before it was due')
    t.equal(ran.executed_at, null, 'a recurring change is never done')
    t.equal(ran.failure_reason, null)
    t.equal(ran.scheduled_at, new Date(Math.floor(runAt / 60_000) * 60_000 + 60_000).toISOString(), 'the first whole minute after the run')
    t.equal(await decide(), true, '/decide serves the change')
    const listed = (await api('GET', `${changes}?record_id=${flag.id}`)).body.results
    // Not its time: a run just before a whole minute may already have run again.
    t.match(listed, [{ id: res.body.id, cron_expression: '* * * * *', recurrence_interval: null }], 'the list answers the expression too')
    const paused = await api('PATCH', `${changes}${res.body.id}/`, { is_recurring: false })
    t.match(paused.body, { is_recurring: false, cron_expression: '* * * * *' }, 'paused: the expression is kept')
    const switched = await api('PATCH', `${changes}${res.body.id}/`, { is_recurring: true, cron_expression: null, recurrence_interval: 'daily' })
    t.match(switched.body, { is_recurring: true, cron_expression: null, recurrence_interval: 'daily' })
  })

  t.test('a cron expression no date matches: the flag changes once, then the change fails for good', async (t) => {
    const flag = await newFlag('leap-ghost', { active: false })
    const res = await api('POST', changes, { record_id: flag.id, model_name: 'FeatureFlag', payload: TURN_ON, scheduled_at: new Date(Date.now() + 800).toISOString(), is_recurring: true, cron_expression: '0 0 31 2 *' })
    t.equal(res.status, 201, 'croniter takes it: 31 February is a valid field value')
    const done = await settled(res.body.id)
    t.equal(done.failure_reason, 'failed to find next date (permanent error)')
    t.equal(done.scheduled_at, res.body.scheduled_at)
    t.equal((await api('GET', `${flags}${flag.id}/`)).body.active, true)
  })

  t.test("a cron schedule runs on the wall clock of its project's timezone when it was made", async (t) => {
    // Kathmandu is UTC+05:45: a minute field read there names a minute 45 away from the same field read in UTC.
    // The runs after the first, once the project has moved, are the unit tests' (a clock they move): here they
    // would wait for a real minute.
    const project = `${base}/`
    t.equal((await api('PATCH', project, { timezone: 'Asia/Kathmandu' })).status, 200)
    t.teardown(() => api('PATCH', project, { timezone: 'UTC' }))
    const flag = await newFlag('kathmandu-minute', { active: false })
    const firstRun = Date.now() + 1_500
    // The run after the first: the first whole minute 10 s or more after it, by its minute in Kathmandu.
    const target = Math.ceil((firstRun + 10_000) / 60_000) * 60_000
    const kathmanduMinute = new Date(target + (5 * 60 + 45) * 60_000).getUTCMinutes()
    const res = await api('POST', changes, { record_id: flag.id, model_name: 'FeatureFlag', payload: TURN_ON, scheduled_at: new Date(firstRun).toISOString(), is_recurring: true, cron_expression: `${kathmanduMinute} * * * *` })
    t.match([res.status, res.body], [201, { timezone: 'Asia/Kathmandu', cron_expression: `${kathmanduMinute} * * * *` }])
    const read = async () => (await api('GET', `${changes}${res.body.id}/`)).body
    const first = await readUntil(`change ${res.body.id} to run`, read, (c) => c.last_executed_at !== null, 10_000)
    t.equal(first.scheduled_at, new Date(target).toISOString(), `next at minute ${kathmanduMinute} in Kathmandu, not in UTC`)
    t.equal((await api('GET', `${flags}${flag.id}/`)).body.active, true)
    t.equal((await api('PATCH', project, { timezone: 'UTC' })).status, 200)
    t.equal((await read()).timezone, 'Asia/Kathmandu', 'the project moved to UTC: the change keeps the timezone it was made in')
    const later = await api('POST', changes, { record_id: flag.id, model_name: 'FeatureFlag', payload: TURN_ON, scheduled_at: '2030-01-01T00:00:00Z', is_recurring: true, cron_expression: '0 9 * * *' })
    t.equal(later.body.timezone, 'UTC', "a change made now takes the project's new timezone")
    await api('DELETE', `${changes}${res.body.id}/`)
  })

  t.test('the list filters by model_name and record_id, oldest first', async (t) => {
    const a = await newFlag('listed-a')
    const b = await newFlag('listed-b')
    const first = (await schedule(`00${a.id}`, 3_600_000)).body
    const second = (await schedule(a.id, 7_200_000)).body
    await schedule(b.id, 3_600_000)
    t.equal(first.record_id, String(a.id), "stored as the flag's own id, whatever spelling created it")
    const ofA = (await api('GET', `${changes}?model_name=FeatureFlag&record_id=${a.id}`)).body
    t.same(ofA.results.map((c: { id: number }) => c.id), [first.id, second.id])
    t.equal(ofA.count, 2)
    t.equal((await api('GET', `${changes}?model_name=Survey`)).body.count, 0)
    const deleted = await api('DELETE', `${changes}${second.id}/`)
    t.equal(deleted.status, 204)
    t.equal((await api('GET', `${changes}${second.id}/`)).status, 404)
  })

  t.test('flag scopes and project boundaries', async (t) => {
    const flag = await newFlag('scoped')
    const reader = f.keyFor(f.m.accounts.userByEmail('admin@skylark.local')!, ['feature_flag:read'])
    const none = f.keyFor(f.m.accounts.userByEmail('admin@skylark.local')!, ['experiment:write'])
    const body = { record_id: flag.id, model_name: 'FeatureFlag', payload: TURN_ON, scheduled_at: '2030-01-01T00:00:00Z' }
    t.equal((await reader.call('GET', changes)).status, 200, 'feature_flag:read lists')
    t.match(await reader.call('POST', changes, body), { status: 403, body: { type: 'authentication_error', code: 'permission_denied' } })
    t.equal((await none.call('GET', changes)).status, 403)
    // Another project of the organisation: its changes and flags are not this project's.
    const elsewhere = f.m.accounts.createProject(f.orgId, 'Elsewhere')
    t.match((await api('POST', `/api/projects/${elsewhere.id}/scheduled_changes/`, body)).body, { code: 'invalid', detail: 'Feature flag not found' }, "this project's flag is no flag there")
    const theirFlag = (await api('POST', `/api/projects/${elsewhere.id}/feature_flags/`, simpleFlag('theirs'))).body
    const created = await api('POST', `/api/projects/${elsewhere.id}/scheduled_changes/`, { ...body, record_id: theirFlag.id })
    t.equal(created.status, 201)
    t.equal((await api('GET', `${changes}${created.body.id}/`)).status, 404, "another project's change is not found here")
    t.equal((await api('DELETE', `${changes}${created.body.id}/`)).status, 404)
    t.equal((await api('GET', `/api/projects/${elsewhere.id}/scheduled_changes/${created.body.id}/`)).status, 200)
  })
})
