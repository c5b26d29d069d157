/**
 * PostHog's cohort rules that keep flags working: a cohort a flag needs can't be deleted or given event
 * filters, filters are checked as PostHog's CohortFilters checks them, static cohorts keep their criteria.
 */
import t from 'tap'
import { flagServer } from './fixture.js'

const person = (key = 'email', value: unknown = '@x.com') => ({ key, value, operator: 'icontains', type: 'person' })
const behavioural = { key: 'purchase', type: 'behavioral', value: 'performed_event', event_type: 'events' }
const cohortRef = (id: unknown) => ({ key: 'id', type: 'cohort', value: id })
const refusal = (code: string, detail: string, attr: string | null = null) => ({ type: 'validation_error', code, detail, attr })
/** The two-level shape PostHog's UI writes and its flag service reads. */
const tree = (...values: unknown[]) => ({ properties: { type: 'OR', values: [{ type: 'AND', values }] } })

t.test('cohort rules', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server } = f
  const cohorts = `${f.base}/cohorts/`
  const create = async (body: Record<string, unknown>) => {
    const res = await server.api('POST', cohorts, body)
    t.equal(res.status, 201, `created ${String(body.name)}`)
    return res.body as { id: number; name: string }
  }
  const flagOn = async (key: string, cohortId: number, extra: Record<string, unknown> = {}) => {
    const res = await server.api('POST', f.flags, {
      key,
      filters: { groups: [{ properties: [cohortRef(cohortId)], rollout_percentage: 100 }] },
      ...extra,
    })
    t.equal(res.status, 201, `flag ${key} created`)
    return res.body as { id: number }
  }

  t.test('a cohort an active flag uses, directly or through another cohort, cannot be deleted', async (t) => {
    const inner = await create({ name: 'Inner', filters: tree(person()) })
    const outer = await create({ name: 'Outer', filters: tree(cohortRef(inner.id)) })
    const flag = await flagOn('uses-outer', outer.id, { name: 'Checkout' })
    await flagOn('uses-outer-too', outer.id)

    for (const id of [outer.id, inner.id]) {
      const res = await server.api('PATCH', `${cohorts}${id}/`, { deleted: true })
      t.equal(res.status, 400)
      const detail = 'This cohort is used in 2 active feature flag(s): Checkout, uses-outer-too. Please remove the cohort from these feature flags before deleting it.'
      t.same(res.body, refusal('invalid', detail))
      t.equal((await server.api('GET', `${cohorts}${id}/`)).body.deleted, false, 'still live')
    }

    await server.api('PATCH', `${f.flags}${flag.id}/`, { active: false })
    const oneLeft = await server.api('PATCH', `${cohorts}${outer.id}/`, { deleted: true })
    t.match(oneLeft.body.detail, /^This cohort is used in 1 active feature flag\(s\): uses-outer-too\./, 'inactive flags do not count')
  })

  t.test('a cohort other live cohorts reference cannot be deleted; once they are gone it can', async (t) => {
    const base = await create({ name: 'Base', filters: tree(person()) })
    const users = await create({ name: 'Users of base', filters: tree(cohortRef(base.id)) })
    const refused = await server.api('PATCH', `${cohorts}${base.id}/`, { deleted: true })
    t.equal(refused.status, 400)
    t.equal(
      refused.body.detail,
      'This cohort is used as criteria in 1 other cohort(s): Users of base. Please remove this cohort from those cohort definitions before deleting it.',
    )
    t.equal((await server.api('PATCH', `${cohorts}${users.id}/`, { deleted: true })).status, 200)
    t.equal((await server.api('PATCH', `${cohorts}${base.id}/`, { deleted: true })).status, 200)
  })

  t.test('event filters cannot be added to a cohort an active flag uses, nor through a cohort it names', async (t) => {
    const target = await create({ name: 'Flagged', filters: tree(person()) })
    const nested = await create({ name: 'Targeted', filters: tree(cohortRef(target.id)) })
    const events = await create({ name: 'Purchasers', filters: tree(behavioural) })
    await flagOn('targeted', nested.id)

    const direct = await server.api('PATCH', `${cohorts}${target.id}/`, { filters: tree(person(), behavioural) })
    t.same(direct.body, refusal('behavioral_cohort_found', 'Behavioral filters cannot be added to cohorts used in feature flags.', 'filters'))
    const through = await server.api('PATCH', `${cohorts}${target.id}/`, { filters: tree(cohortRef(events.id)) })
    t.equal(through.status, 400)
    t.equal(through.body.code, 'behavioral_cohort_found')
    t.equal(through.body.detail, "A cohort dependency (Purchasers) has filters based on events. These cohorts can't be used in feature flags.")
    t.same((await server.api('GET', `${cohorts}${target.id}/`)).body.filters, tree(person()), 'filters unchanged')

    const unused = await create({ name: 'Unused', filters: tree(person()) })
    t.equal((await server.api('PATCH', `${cohorts}${unused.id}/`, { filters: tree(behavioural) })).status, 200, 'unused cohorts may')
  })

  t.test("filters are checked as PostHog's CohortFilters, with its messages", async (t) => {
    const cases: Array<[unknown, string | RegExp]> = [
      [{}, "Must contain a 'properties' key with type and values"],
      [tree({ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }), /^Input tag 'event' found using 'type' does not match any of the expected tags: 'behavioral', 'cohort', 'person'/],
      [tree({ key: 'email', value: 'a@b.c', type: 'person' }), 'Missing required keys for person filter: operator'],
      [tree({ key: 'email', type: 'person' }), 'Missing required keys for person filter: value, operator'],
      [tree({ key: 'purchase', type: 'behavioral', value: 'performed_event' }), 'Missing required keys for behavioral filter: event_type'],
      [tree(cohortRef('one')), 'Input should be a valid integer, unable to parse string as an integer'],
    ]
    for (const [filters, detail] of cases) {
      const res = await server.api('POST', cohorts, { name: 'Bad', filters })
      t.equal(res.status, 400, JSON.stringify(filters))
      t.match(res.body, { type: 'validation_error', code: 'invalid', attr: 'filters', detail })
    }
    t.equal((await server.api('POST', cohorts, { name: 'Set', filters: tree({ key: 'email', operator: 'is_set', type: 'person' }) })).status, 201, 'is_set needs no value')
  })

  t.test('a nested cohort id sent as text is stored as an integer and flags find the cohort', async (t) => {
    const inner = await create({ name: 'Inner by text', filters: tree(person('plan', 'pro')) })
    const outer = await create({ name: 'Outer by text', filters: tree(cohortRef(String(inner.id))) })
    const stored = (await server.api('GET', `${cohorts}${outer.id}/`)).body
    t.same(stored.filters.properties.values[0].values[0], cohortRef(inner.id))
    await flagOn('by-text', outer.id)
    const decide = await server.request('POST', '/flags/?v=2', {
      body: { token: server.boot.project_api_key, distinct_id: 'p1', person_properties: { plan: 'pro' } },
    })
    t.equal(decide.body.flags['by-text'].enabled, true, JSON.stringify(decide.body.flags['by-text']))
  })

  t.test('the criteria of a static cohort cannot be edited; its event filters do not stop flags', async (t) => {
    const frozen = await create({ name: 'Frozen', is_static: true, filters: tree(behavioural) })
    const edit = await server.api('PATCH', `${cohorts}${frozen.id}/`, { filters: tree(person()) })
    t.same(edit.body, refusal('invalid', 'Editing the criteria of a static cohort is not supported yet. Create a new static cohort instead.'))
    t.equal((await server.api('PATCH', `${cohorts}${frozen.id}/`, { name: 'Still frozen' })).status, 200, 'other fields may change')
    await flagOn('on-static', frozen.id)
    const wrapper = await create({ name: 'Wraps static', filters: tree(cohortRef(frozen.id)) })
    await flagOn('through-static', wrapper.id)
  })
})
