import t from 'tap'
import { inlineSingleCohort } from '../../../src/flags/cohort-inline.js'
import type { CohortDefinition } from '../../../src/flags/types.js'

const plan = { key: 'plan', value: 'pro', operator: 'exact', type: 'person' }
const email = { key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }
const country = { key: 'country', value: 'DE', operator: 'exact', type: 'person' }

function cohorts(...list: Array<[number, unknown, boolean?]>): Map<number, CohortDefinition> {
  return new Map(list.map(([id, properties, isStatic]) => [id, { id, is_static: isStatic ?? false, filters: { properties } }]))
}
const onCohort = (id: unknown, rollout: number | null = 100) => ({ properties: [{ key: 'id', value: id, type: 'cohort' }], rollout_percentage: rollout })

t.test('a cohort of one property becomes one condition with the rollout', async (t) => {
  const c = cohorts([1, { type: 'OR', values: [{ type: 'AND', values: [plan] }] }])
  t.same(inlineSingleCohort([onCohort(1, 40)], c), [{ properties: [plan], rollout_percentage: 40 }])
})

t.test('an AND of properties becomes one condition, an OR one condition each', async (t) => {
  t.same(inlineSingleCohort([onCohort('1')], cohorts([1, { type: 'AND', values: [plan, email] }])), [{ properties: [plan, email], rollout_percentage: 100 }])
  t.same(inlineSingleCohort([onCohort(1)], cohorts([1, { type: 'OR', values: [plan, email] }])), [
    { properties: [plan], rollout_percentage: 100 },
    { properties: [email], rollout_percentage: 100 },
  ])
})

t.test('an OR of ANDs becomes one condition per AND, after the conditions without a cohort', async (t) => {
  const c = cohorts([1, { type: 'OR', values: [{ type: 'AND', values: [plan, email] }, { type: 'AND', values: [country] }] }])
  const other = { properties: [country], rollout_percentage: 10 }
  t.same(inlineSingleCohort([onCohort(1, 50), other], c), [
    other,
    { properties: [plan, email], rollout_percentage: 10 },
    { properties: [country], rollout_percentage: 10 },
  ], 'PostHog gives the inlined conditions the last condition’s rollout')
})

t.test('conditions are served unchanged where PostHog does not inline', async (t) => {
  const simple = cohorts([1, { type: 'AND', values: [plan] }], [2, { type: 'AND', values: [email] }])
  t.equal(inlineSingleCohort([onCohort(1), onCohort(2)], simple), null, 'two cohorts')
  t.equal(inlineSingleCohort([{ ...onCohort(1), variant: 'test' }], simple), null, 'a variant override')
  t.equal(inlineSingleCohort([{ properties: [...onCohort(1).properties, country], rollout_percentage: 100 }], simple), null, 'the cohort shares its condition')
  t.equal(inlineSingleCohort([onCohort(3)], simple), null, 'a missing cohort')
  t.equal(inlineSingleCohort([onCohort('x')], simple), null, 'an id Python cannot read')
  const nested = cohorts([1, { type: 'AND', values: [{ key: 'id', value: 2, type: 'cohort' }] }], [2, { type: 'AND', values: [plan] }])
  t.equal(inlineSingleCohort([onCohort(1)], nested), null, 'a cohort reaching another counts as two')
  t.equal(inlineSingleCohort([onCohort(1)], cohorts([1, { type: 'AND', values: [{ ...plan, negation: true }] }])), null, 'negation')
  t.equal(inlineSingleCohort([onCohort(1)], cohorts([1, { type: 'AND', values: [{ key: '$pageview', type: 'behavioral', value: 'performed_event' }] }])), null, 'behavioral')
  t.equal(inlineSingleCohort([onCohort(1)], cohorts([1, { type: 'AND', values: [{ type: 'OR', values: [plan] }, { type: 'AND', values: [email] }] }])), null, 'an AND of groups')
  t.equal(inlineSingleCohort([onCohort(1)], cohorts([1, { type: 'OR', values: [{ type: 'OR', values: [plan, email] }, { type: 'AND', values: [country] }] }])), null, 'an OR of wide ORs')
  t.equal(inlineSingleCohort([onCohort(1)], cohorts([1, { type: 'AND', values: [] }])), null, 'no properties')
})
