import t from 'tap'
import { cohortMembership, type CohortSource } from '../../../src/management/index.js'

const TEAM = 7
const dynamic = (properties: unknown): CohortSource => ({ is_static: false, deleted: false, filters: { properties } as never })
const cohorts = new Map<number, CohortSource>([
  [1, { is_static: true, deleted: false, filters: null }],
  [2, dynamic({ type: 'AND', values: [{ type: 'person', key: 'plan', value: 'pro', operator: 'exact' }] })],
  [3, dynamic({ type: 'OR', values: [{ type: 'cohort', key: 'id', value: 1 }, { type: 'cohort', key: 'id', value: 2, negation: true }] })],
  [4, { ...dynamic({ type: 'AND', values: [] }), deleted: true }],
  [5, dynamic({ type: 'AND', values: [{ type: 'behavioral', key: '$pageview', value: 'performed_event' }] })],
  [6, { is_static: false, deleted: false, filters: {} }],
  [7, dynamic({ type: 'AND', values: [{ type: 'AND', values: [] }] })],
])
const byId = (team: number, id: number) => (team === TEAM ? (cohorts.get(id) ?? null) : null)

t.test('a cohort filter reads as the persons of the cohort it names: stored members, or its conditions', async (t) => {
  t.same(cohortMembership({ type: 'cohort', key: 'id', value: 1 }, byId, TEAM), { staticCohort: 1, teamId: TEAM })
  t.same(cohortMembership({ type: 'cohort', key: 'id', value: ' 2 ' }, byId, TEAM), { type: 'AND', values: [{ key: 'plan', operator: 'exact', value: 'pro' }] }, 'an id as text')
  t.same(
    cohortMembership({ type: 'cohort', key: 'id', value: 3, operator: 'not_in' }, byId, TEAM),
    { not: { type: 'OR', values: [{ staticCohort: 1, teamId: TEAM }, { not: { type: 'AND', values: [{ key: 'plan', operator: 'exact', value: 'pro' }] } }] } },
    'not_in negates the membership; a nested negated cohort is the persons outside it',
  )
  const nobody = { not: { type: 'AND', values: [] } }
  t.same(cohortMembership({ type: 'cohort', key: 'id', value: 6 }, byId, TEAM), nobody, 'a dynamic cohort without criteria holds no one')
  t.same(cohortMembership({ type: 'cohort', key: 'id', value: 7, operator: 'not_in' }, byId, TEAM), { not: nobody }, 'nor with empty groups only; not_in it is everyone')
})

t.test('a cohort filter naming no live cohort of the project, or one with conditions skylark cannot evaluate, is a 400', async (t) => {
  t.throws(() => cohortMembership({ type: 'cohort', key: 'id', value: 'two' }, byId, TEAM), { code: 'invalid', detail: 'A cohort filter needs the id of a cohort as its value.' })
  t.throws(() => cohortMembership({ type: 'cohort', key: 'id', value: 4 }, byId, TEAM), { code: 'invalid', detail: 'The cohort filter names cohort 4, which does not exist.' }, 'deleted')
  t.throws(() => cohortMembership({ type: 'cohort', key: 'id', value: 2 }, byId, TEAM + 1), { code: 'invalid', detail: 'The cohort filter names cohort 2, which does not exist.' }, 'another project’s')
  t.throws(() => cohortMembership({ type: 'cohort', key: 'id', value: 5 }, byId, TEAM), { code: 'invalid', detail: /^Cohort 5 has conditions skylark can't evaluate/ }, 'behavioural')
})
