import t from 'tap'
import { flagWorld, simple } from './flag-fixture.js'

const person = (extra: Record<string, unknown>) => ({ key: 'email', value: 'a@b.c', operator: 'exact', type: 'person', ...extra })
const withProps = (key: string, properties: unknown[], extra: Record<string, unknown> = {}) => ({
  key,
  filters: { groups: [{ properties, rollout_percentage: 100 }], ...extra },
})

t.test('flag create validation', async (t) => {
  const w = flagWorld()
  const taken = w.create(simple('taken'))
  const disabled = w.create(simple('disabled', { active: false }))
  const behavioural = w.cohort({
    name: 'Did things',
    filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [{ key: '$pageview', type: 'behavioral', value: 'performed_event', event_type: 'events' }] }] } },
  })
  const wrapsBehavioural = w.cohort({
    name: 'Wrapper',
    filters: { properties: { type: 'OR', values: [{ key: 'id', type: 'cohort', value: behavioural.id }] } },
  })
  const deletedCohort = w.cohort({ name: 'Gone' })
  w.m.cohorts.update(w.project.id, deletedCohort.id, { deleted: true })

  const cases: Array<[string, Record<string, unknown>, { code: string; attr: string | null; detail?: string | RegExp }]> = [
    ['key is required', { name: 'x' }, { code: 'required', attr: 'key', detail: 'This field is required.' }],
    ['key must be a string', { key: 5 }, { code: 'invalid_input', attr: 'key' }],
    ['key may not be blank', { key: '' }, { code: 'blank', attr: 'key', detail: 'This field may not be blank.' }],
    ['key is at most 400 characters', { key: 'k'.repeat(401) }, { code: 'max_length', attr: 'key' }],
    ['key uses letters, digits, - and _ only', { key: 'has space' }, { code: 'invalid_key', attr: 'key', detail: 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.' }],
    ['key is unique among live flags', { key: 'taken' }, { code: 'unique', attr: 'key', detail: 'There is already a feature flag with this key.' }],
    ['active must be a boolean', { key: 'a1', active: 'yes' }, { code: 'invalid_input', attr: 'active' }],
    ['tags must be strings', { key: 'a2', tags: [1] }, { code: 'invalid_input', attr: 'tags.0' }],
    ['evaluation_runtime is a choice', { key: 'a3', evaluation_runtime: 'edge' }, { code: 'invalid_choice', detail: '"edge" is not a valid choice.', attr: 'evaluation_runtime' }],
    ['rollout_percentage must be a number', { key: 'a4', filters: { groups: [{ rollout_percentage: 'all' }] } }, { code: 'invalid_input', attr: 'filters.groups.0.rollout_percentage' }],
    ['a condition needs a key', { key: 'a5', filters: { groups: [{ properties: [{ value: 1, type: 'person' }] }] } }, { code: 'required', attr: 'key' }],
    ['filters need a condition set on create', { key: 'b1', filters: { groups: [] } }, { code: 'invalid', attr: 'filters', detail: 'Feature flags must have at least one condition set (group).' }],
    ['filters without groups are refused on create', { key: 'b2', filters: { payloads: {} } }, { code: 'invalid', attr: 'filters', detail: 'Feature flags must have at least one condition set (group).' }],
    ['person flags take person, cohort and flag conditions only', withProps('b3', [person({ type: 'event' })]), { code: 'invalid', attr: 'filters', detail: 'Filters are not valid (can only use person, cohort, and flag properties)' }],
    ['a condition without type is an event condition', withProps('b4', [{ key: 'email', value: 'x' }]), { code: 'invalid', attr: 'filters', detail: 'Filters are not valid (can only use person, cohort, and flag properties)' }],
    ['group conditions are refused on person flags', withProps('b5', [person({ type: 'group', group_type_index: 0 })]), { code: 'invalid', attr: 'filters' }],
    ['group flags take group conditions of their index only', withProps('b6', [person({ type: 'group', group_type_index: 1 })], { aggregation_group_type_index: 0 }), { code: 'invalid', attr: 'filters', detail: 'Filters are not valid (can only use group properties)' }],
    ['group flags refuse person conditions', withProps('b7', [person({})], { aggregation_group_type_index: 0 }), { code: 'invalid', attr: 'filters', detail: 'Filters are not valid (can only use group properties)' }],
    ['variant percentages sum to 100', { key: 'c1', filters: { groups: [{ rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 40 }] } } }, { code: 'invalid_input', attr: 'filters', detail: 'Invalid variant definitions: Variant rollout percentages must sum to 100.' }],
    ['a variant needs a key', { key: 'c2', filters: { groups: [{}], multivariate: { variants: [{ rollout_percentage: 100 }] } } }, { code: 'required', attr: 'key' }],
    ['a variant override names a variant', { key: 'c3', filters: { groups: [{ rollout_percentage: 100, variant: 'c' }], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] } } }, { code: 'invalid', attr: 'filters', detail: 'Filters are not valid (variant override does not exist)' }],
    ['a variant override needs variants', { key: 'c4', filters: { groups: [{ rollout_percentage: 100, variant: 'a' }] } }, { code: 'invalid', attr: 'filters', detail: 'Filters are not valid (variant override does not exist)' }],
    ['lists hold at most 1000 values', withProps('d1', [person({ key: 'id', value: Array.from({ length: 1001 }, (_, i) => i) })]), { code: 'invalid', attr: 'filters', detail: 'Property group expressions of type id cannot contain more than 1000 values.' }],
    ['regex needs a string value', withProps('d2', [person({ operator: 'regex', value: 5 })]), { code: 'invalid_value', attr: 'filters', detail: 'Invalid value for operator regex: 5' }],
    ['gt needs a string value', withProps('d3', [person({ operator: 'gt', value: [1, 'a'] })]), { code: 'invalid_value', attr: 'filters', detail: "Invalid value for operator gt: [1, 'a']" }],
    ['icontains refuses null', withProps('d4', [person({ operator: 'icontains', value: null })]), { code: 'invalid_value', attr: 'filters', detail: 'Invalid value for operator icontains: None' }],
    ['date operators need a date', withProps('d5', [person({ operator: 'is_date_before', value: 'yesterday-ish' })]), { code: 'invalid_date', attr: 'filters', detail: 'Invalid date value: yesterday-ish' }],
    ['relative dates stay under 10,000 units', withProps('d6', [person({ operator: 'is_date_after', value: '-10000d' })]), { code: 'invalid_date', attr: 'filters' }],
    ['in is for cohorts only', withProps('d7', [person({ operator: 'in', value: ['a'] })]), { code: 'invalid_operator', attr: 'filters', detail: "The 'in' operator is only valid for cohort properties, not 'person' properties." }],
    ['cohorts must exist', withProps('e1', [{ key: 'id', type: 'cohort', value: 999 }]), { code: 'cohort_does_not_exist', attr: 'filters', detail: 'Cohort with id 999 does not exist' }],
    ['deleted cohorts do not exist', withProps('e2', [{ key: 'id', type: 'cohort', value: deletedCohort.id }]), { code: 'cohort_does_not_exist', attr: 'filters' }],
    ['behavioural cohorts are refused', withProps('e3', [{ key: 'id', type: 'cohort', value: behavioural.id }]), { code: 'behavioral_cohort_found', attr: 'filters', detail: "Cohort 'Did things' with filters on events cannot be used in feature flags." }],
    ['cohorts referencing behavioural ones are refused', withProps('e4', [{ key: 'id', type: 'cohort', value: wrapsBehavioural.id }]), { code: 'behavioral_cohort_found', attr: 'filters', detail: "Cohort 'Did things' with filters on events cannot be used in feature flags." }],
    ['flag conditions use flag_evaluates_to', withProps('f1', [{ key: String(taken.id), type: 'flag', value: true, operator: 'exact' }]), { code: 'invalid', attr: 'filters', detail: "Flag properties must use the 'flag_evaluates_to' operator" }],
    ['flag conditions name flags by id', withProps('f2', [{ key: 'taken', type: 'flag', value: true, operator: 'flag_evaluates_to' }]), { code: 'invalid', attr: 'filters', detail: "Flag dependencies must reference flag IDs (integers), not flag keys. Invalid reference: 'taken'" }],
    ['flag conditions name existing flags', withProps('f3', [{ key: '9999', type: 'flag', value: true, operator: 'flag_evaluates_to' }]), { code: 'invalid', attr: 'filters', detail: 'Flag dependency references non-existent flag with ID 9999' }],
    ['flag conditions name active flags', withProps('f4', [{ key: disabled.id, type: 'flag', value: true, operator: 'flag_evaluates_to' }]), { code: 'invalid', attr: 'filters', detail: `Cannot create dependency on disabled flag 'disabled' (ID: ${disabled.id}). Flag dependencies must reference active flags only.` }],
    ['payloads are a dictionary', { key: 'g1', filters: { groups: [{}], payloads: ['x'] } }, { code: 'invalid', attr: 'filters', detail: 'Payloads must be passed as a dictionary' }],
    ['payloads are not null', { key: 'g2', filters: { groups: [{}], payloads: null } }, { code: 'invalid', attr: 'filters', detail: 'Payloads must be passed as a dictionary' }],
    ['payload strings are JSON', { key: 'g3', filters: { groups: [{}], payloads: { true: '{not json' } } }, { code: 'invalid', attr: 'filters', detail: 'Payload value is not valid JSON' }],
    ["boolean flags' payload key is true", { key: 'g4', filters: { groups: [{}], payloads: { on: '1' } } }, { code: 'invalid', attr: 'filters', detail: "Payload keys must be 'true' for boolean flags" }],
    ["multivariate flags' payload keys are variants", { key: 'g5', filters: { groups: [{}], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] }, payloads: { b: '1' } } }, { code: 'invalid', attr: 'filters', detail: 'Payload keys must match a variant key for multivariate flags' }],
    ['analytics dashboards must exist', { key: 'h1', analytics_dashboards: [42] }, { code: 'does_not_exist', attr: 'analytics_dashboards', detail: 'Invalid pk "42" - object does not exist.' }],
  ]

  for (const [name, body, expected] of cases) {
    t.test(name, async (t) => {
      t.throws(() => w.m.featureFlags.create(w.project, body, w.owner.id), { status: 400, type: 'validation_error', ...expected })
    })
  }

  t.test('valid filters of every kind are accepted', async (t) => {
    const staticCohort = w.cohort({ name: 'Static', is_static: true })
    const flag = w.create({
      key: 'everything',
      filters: {
        groups: [
          { properties: [person({ operator: 'regex', value: '^a' }), person({ operator: 'is_date_after', value: '-30d' })], rollout_percentage: 50, variant: 'b' },
          { properties: [{ key: 'id', type: 'cohort', value: String(staticCohort.id), operator: 'in' }], rollout_percentage: null },
          { properties: [{ key: String(taken.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }] },
          { properties: [person({ operator: 'is_date_before', value: '2024-02-01T00:00:00Z' })] },
          // PostHog's serializer checks the dates of is_date_before and is_date_after only
          { properties: [person({ operator: 'is_date_exact', value: 'notadate' })] },
        ],
        multivariate: { variants: [{ key: 'a', rollout_percentage: 34 }, { key: 'b', rollout_percentage: 66 }] },
        payloads: { a: { x: 'é', y: [1, 2] }, b: '"quoted"' },
      },
    })
    t.equal(flag.filters.payloads && (flag.filters.payloads as Record<string, unknown>).a, '{"x": "\\u00e9", "y": [1, 2]}', 'object payloads become Python json.dumps text')
    t.equal((flag.filters.payloads as Record<string, unknown>).b, '"quoted"')
    t.equal(flag.filters.groups && (flag.filters.groups as Array<{ properties: Array<{ cohort_name?: string }> }>)[1].properties[0].cohort_name, 'Static')
  })

  t.test('a group flag with matching group conditions is accepted', async (t) => {
    const flag = w.create(withProps('groups-ok', [person({ type: 'group', group_type_index: 2 })], { aggregation_group_type_index: 2 }))
    t.equal(flag.is_simple_flag, false)
  })

  t.test('a deleted flag frees its key', async (t) => {
    const old = w.create(simple('reused'))
    w.update(old.id, { deleted: true })
    const again = w.create(simple('reused'))
    t.not(again.id, old.id)
    t.equal(w.m.featureFlags.get(w.project, old.id, w.owner.id).deleted, true, 'the deleted flag is kept')
  })
})

t.test('flag dependency cycles', async (t) => {
  const w = flagWorld()
  const dep = (id: number) => ({ groups: [{ properties: [{ key: String(id), type: 'flag', value: true, operator: 'flag_evaluates_to' }] }] })
  const a = w.create(simple('a'))
  const b = w.create({ key: 'b', filters: dep(a.id) })
  const c = w.create({ key: 'c', filters: dep(b.id) })

  t.test('a flag cannot depend on itself', async (t) => {
    t.throws(() => w.update(a.id, { filters: dep(a.id) }), { code: 'invalid', attr: 'filters', detail: "Feature flag 'a' cannot depend on itself" })
  })
  t.test('a cycle through other flags is refused with its path', async (t) => {
    t.throws(() => w.update(a.id, { filters: dep(c.id) }), { code: 'invalid', attr: 'filters', detail: 'Circular dependency detected: a → c → b → a' })
  })
  t.test('a chain without a cycle is accepted', async (t) => {
    const d = w.create({ key: 'd', filters: dep(c.id) })
    t.equal(d.key, 'd')
  })
})

t.test('flag update validation', async (t) => {
  const w = flagWorld()
  const flag = w.create(simple('one'))
  w.create(simple('two'))

  t.test('renaming to a live key is refused', async (t) => {
    t.throws(() => w.update(flag.id, { key: 'two' }), { code: 'unique', attr: 'key' })
  })
  t.test('keeping its own key is fine', async (t) => {
    t.equal(w.update(flag.id, { key: 'one', name: 'n' }).name, 'n')
  })
  t.test('empty groups are allowed on update', async (t) => {
    t.same(w.update(flag.id, { filters: { groups: [] } }).filters, { groups: [] })
  })
  t.test('filters without groups keep the stored filters', async (t) => {
    w.update(flag.id, { filters: { groups: [{ properties: [], rollout_percentage: 30 }] } })
    const after = w.update(flag.id, { filters: { payloads: { nonsense: 1 } } })
    t.same(after.filters, { groups: [{ properties: [], rollout_percentage: 30 }] })
  })
  t.test('restoring a deleted flag whose key was reused is refused', async (t) => {
    const old = w.create(simple('phoenix'))
    w.update(old.id, { deleted: true })
    w.create(simple('phoenix'))
    t.throws(() => w.update(old.id, { deleted: false }), { code: 'unique', attr: 'key' })
  })
  t.test('unknown fields are ignored', async (t) => {
    const updated = w.update(flag.id, { name: 'ignored-extra', team_id: 99, id: 5, is_simple_flag: false })
    t.equal(updated.id, flag.id)
    t.equal(updated.name, 'ignored-extra')
  })
})
