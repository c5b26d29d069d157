import t from 'tap'
import { compileFlags, type CohortDefinition } from '../../../src/flags/index.js'
import { flag } from './fixtures/vectors.js'

const person = (key: string, value: unknown = 'x', operator = 'exact') => ({ key, value, operator, type: 'person' })
const cohorts: CohortDefinition[] = [
  { id: 1, is_static: true, filters: null },
  { id: 2, is_static: false, filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [person('cohort_prop'), { key: 'id', value: 3, type: 'cohort', operator: 'in' }] }] } } },
  { id: 3, is_static: true, filters: null },
  { id: 4, is_static: true, filters: null },
]

const set = compileFlags(
  [
    flag('person', { groups: [{ properties: [person('email'), { key: 'created_at', value: '-7d', operator: 'is_date_after', type: 'person_metadata' }], rollout_percentage: 100 }] }),
    flag('zero', { groups: [{ properties: [person('never_loaded')], rollout_percentage: 0 }] }),
    flag('cohort', { groups: [{ properties: [{ key: 'id', value: 2, type: 'cohort', operator: 'in' }] }] }),
    flag('group', { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'group', group_type_index: 0 }] }] }),
    flag('mixed', { groups: [{ aggregation_group_type_index: 1, rollout_percentage: 100 }] }),
    flag('ea', { feature_enrollment: true, groups: [] }),
    flag('ea-legacy', { super_groups: [{ properties: [person('$feature_enrollment/ea-legacy', true)], rollout_percentage: 100 }], groups: [{ rollout_percentage: 0 }] }),
    flag('sticky', { groups: [{ rollout_percentage: 40 }] }, { ensure_experience_continuity: true }),
    flag('sticky-full', { groups: [{ rollout_percentage: 100 }] }, { ensure_experience_continuity: true }),
    flag('off', { groups: [{ properties: [{ key: 'id', value: 4, type: 'cohort' }] }] }, { active: false }),
    flag('gone', { groups: [] }, { deleted: true }),
  ],
  { groupTypeMapping: { '0': 'company', '1': 'project' }, cohorts, timezone: 'Mars/Olympus_Mons' },
)

t.test('CompiledFlagSet metadata', async (t) => {
  t.test('counts active, non-deleted flags', async (t) => t.equal(set.flagCount, 9))

  t.test('lists the person properties the active flags and their cohorts read', async (t) => {
    t.same([...set.personPropertyKeys].sort(), ['$feature_enrollment/ea', '$feature_enrollment/ea-legacy', '__posthog_person_metadata__created_at', 'cohort_prop', 'email', 'never_loaded'])
  })

  t.test('lists group types and static cohorts (through dynamic ones, active flags only)', async (t) => {
    t.same([...set.groupTypeIndexes].sort(), [0, 1])
    t.same(set.groupTypeNames.sort(), ['company', 'project'])
    t.equal(set.usesGroups, true)
    t.same([...set.staticCohortIds], [3])
  })

  t.test('lists continuity flags and whether their overrides matter', async (t) => {
    t.same(set.continuityFlagKeys, ['sticky', 'sticky-full'])
    t.equal(set.needsHashKeyOverrides(), true)
    t.equal(set.needsHashKeyOverrides(['sticky-full']), false, 'a 100% boolean flag does not hash')
  })

  t.test('decides whether stored properties are needed as PostHog does', async (t) => {
    t.equal(set.needsStoredProperties({}, ['person']), true)
    t.equal(set.needsStoredProperties({ email: 'a', created_at: 1 }, ['person']), false, 'overrides cover the keys')
    t.equal(set.needsStoredProperties({}, ['zero']), false, 'a 0% condition never needs them')
    t.equal(set.needsStoredProperties({ cohort_prop: 1 }, ['cohort']), true, 'cohorts always do')
    t.equal(set.needsStoredProperties({ plan: 'pro' }, ['group']), true, 'a group-aggregated flag always does')
    t.equal(set.needsStoredProperties({}, ['mixed']), true, 'so does a condition aggregated by a group')
    t.equal(set.needsStoredProperties({}, ['ea']), true, "an early-access flag reads the person's stored enrollment")
    t.equal(set.needsStoredProperties({ '$feature_enrollment/ea': true }, ['ea']), false, 'unless the overrides carry it')
    t.equal(set.needsStoredProperties({}, ['ea-legacy']), true, "and a legacy super condition's keys")
    t.equal(set.needsStoredProperties({}, ['sticky']), false)
  })

  t.test('falls back to UTC for an unknown time zone and says so', async (t) => {
    t.equal(set.timezone, 'UTC')
    t.match(set.warnings, [{ key: '', message: /unknown time zone/ }])
  })

  t.test('knows its keys', async (t) => {
    t.same([set.hasFlag('off'), set.hasFlag('gone'), set.hasFlag('nope')], [true, false, false])
  })
})
