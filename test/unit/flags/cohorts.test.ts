import t from 'tap'
import { compileFlags, evaluateAll, type CohortDefinition } from '../../../src/flags/index.js'
import { flag, input } from './fixtures/vectors.js'

const person = (key: string, value: unknown, operator = 'exact', negation = false) => ({ key, value, operator, type: 'person', negation })
const cohortRef = (id: unknown, operator?: string, negation = false) => ({ key: 'id', value: id, type: 'cohort', negation, ...(operator === undefined ? {} : { operator }) })
const dynamic = (id: number, type: 'AND' | 'OR', groups: { type: string; values: unknown[] }[]): CohortDefinition => ({ id, is_static: false, filters: { properties: { type, values: groups } } })

/** One flag per cohort condition under test; returns enabled / the reason code of each. */
function evaluate(cohorts: CohortDefinition[], conditions: Record<string, unknown[]>, props: Record<string, unknown>, staticIds: number[] = []) {
  const set = compileFlags(
    Object.entries(conditions).map(([key, properties]) => flag(key, { groups: [{ properties, rollout_percentage: 100 }] })),
    { groupTypeMapping: {}, cohorts },
  )
  const { flags, errorsWhileComputingFlags } = evaluateAll(set, input('u', props, { staticCohortIds: new Set(staticIds) }))
  const out: Record<string, boolean | string> = {}
  for (const [k, r] of Object.entries(flags)) out[k] = r.failed ? r.reason.code : r.enabled
  return { out, errorsWhileComputingFlags }
}

t.test('static cohorts', async (t) => {
  t.test('are answered from the membership the caller supplies', async (t) => {
    const cohorts: CohortDefinition[] = [{ id: 1, is_static: true, filters: null }]
    const conditions = { in: [cohortRef(1, 'in')], notIn: [cohortRef(1, 'not_in')], bare: [cohortRef(1)], exact: [cohortRef(1, 'exact')], asString: [cohortRef('1', 'in')] }
    t.same(evaluate(cohorts, conditions, {}, [1]).out, { in: true, notIn: false, bare: true, exact: false, asString: true })
    t.same(evaluate(cohorts, conditions, {}, []).out, { in: false, notIn: true, bare: false, exact: false, asString: false })
  })
})

t.test('dynamic cohorts', async (t) => {
  const cohorts: CohortDefinition[] = [
    dynamic(10, 'AND', [{ type: 'AND', values: [person('plan', 'pro'), person('email', '@acme.com', 'icontains')] }]),
    dynamic(11, 'OR', [
      { type: 'OR', values: [person('country', 'FR'), person('country', 'DE')] },
      { type: 'AND', values: [person('vip', true)] },
    ]),
    dynamic(12, 'AND', [{ type: 'property', values: [person('banned', true, 'exact', true)] }]),
    dynamic(13, 'AND', [{ type: 'AND', values: [cohortRef(10, 'in'), cohortRef(2, 'in', true)] }]),
    dynamic(14, 'OR', [{ type: 'OR', values: [cohortRef(2, 'in', true)] }]),
    { id: 2, is_static: true, filters: null },
  ]
  const conditions = {
    and: [cohortRef(10, 'in')],
    or: [cohortRef(11, 'in')],
    negated: [cohortRef(12, 'in')],
    nested: [cohortRef(13, 'in')],
    orIgnoresCohortNegation: [cohortRef(14, 'in')],
    notIn: [cohortRef(10, 'not_in')],
  }

  t.test('evaluate AND/OR trees on the person properties', async (t) => {
    const r = evaluate(cohorts, conditions, { plan: 'pro', email: 'x@ACME.com', country: 'DE', banned: false }, [])
    t.same(r.out, { and: true, or: true, negated: true, nested: true, orIgnoresCohortNegation: false, notIn: false })
    t.equal(r.errorsWhileComputingFlags, false)
  })

  t.test('honour negation of properties, and of cohorts inside AND groups only', async (t) => {
    const r = evaluate(cohorts, conditions, { plan: 'pro', email: 'x@acme.com', vip: 'True', banned: true }, [2])
    t.same(r.out, { and: true, or: true, negated: false, nested: false, orIgnoresCohortNegation: true, notIn: false })
  })

  t.test('count a missing property as not matching (is_not would match)', async (t) => {
    const r = evaluate([dynamic(20, 'AND', [{ type: 'AND', values: [person('plan', 'free', 'is_not')] }])], { c: [cohortRef(20, 'in')] }, {})
    t.same(r.out, { c: true })
  })

  t.test('treat a dynamic cohort without filters as empty', async (t) => {
    t.same(evaluate([{ id: 21, is_static: false, filters: null }], { c: [cohortRef(21, 'in')] }, {}).out, { c: false })
  })
})

t.test('broken cohorts fail the flag that reaches them', async (t) => {
  const cohorts: CohortDefinition[] = [
    dynamic(30, 'AND', [{ type: 'AND', values: [cohortRef(999, 'in')] }]),
    dynamic(31, 'AND', [{ type: 'AND', values: [cohortRef(32, 'in')] }]),
    dynamic(32, 'AND', [{ type: 'AND', values: [cohortRef(31, 'in')] }]),
    dynamic(33, 'AND', [{ type: 'AND', values: [{ type: 'AND', values: [person('a', 1)] }] }]),
    dynamic(34, 'AND', [{ type: 'AND', values: [cohortRef('35', 'in')] }]),
    dynamic(36, 'AND', [{ type: 'NOR', values: [person('a', 1)] }]),
    { id: 37, is_static: true, deleted: true, filters: null },
    { id: 38, is_static: false, filters: { properties: {} } },
  ]
  const r = evaluate(cohorts, {
    missingNested: [cohortRef(30, 'in')],
    cycle: [cohortRef(31, 'in')],
    deeperNesting: [cohortRef(33, 'in')],
    stringNestedId: [cohortRef(34, 'in')],
    unknownGroupType: [cohortRef(36, 'in')],
    deleted: [cohortRef(37, 'in')],
    emptyProperties: [cohortRef(38, 'in')],
    notAnId: [cohortRef('abc', 'in')],
    unreached: [person('plan', 'pro'), cohortRef(999, 'in')],
    healthy: [],
  }, { plan: 'free' })

  t.test('with PostHog error labels', async (t) => {
    t.same(r.out, {
      missingNested: 'dependency_not_found_cohort',
      cycle: 'dependency_cycle_cohort',
      deeperNesting: 'cohort_filters_parsing_error',
      stringNestedId: 'cohort_filters_parsing_error',
      unknownGroupType: 'cohort_filters_parsing_error',
      deleted: 'dependency_not_found_cohort',
      emptyProperties: 'cohort_filters_parsing_error',
      notAnId: 'cohort_filters_parsing_error',
      unreached: false,
      healthy: true,
    })
    t.equal(r.errorsWhileComputingFlags, true)
  })
})

t.test('cohorts read person properties even in group conditions', async (t) => {
  const set = compileFlags(
    [flag('g', { aggregation_group_type_index: 0, groups: [{ properties: [cohortRef(40, 'in')], rollout_percentage: 100 }] })],
    { groupTypeMapping: { '0': 'company' }, cohorts: [dynamic(40, 'AND', [{ type: 'AND', values: [person('plan', 'pro')] }])] },
  )
  const r = evaluateAll(set, input('u', { plan: 'pro' }, { groups: { company: 'acme' }, groupProperties: { company: { plan: 'free' } } }))
  t.equal(r.flags.g.enabled, true)
})
