import t from 'tap'
import { compileFlags, evaluateAll, evaluateFlag, type FlagDefinition } from '../../../src/flags/index.js'
import { input } from './fixtures/vectors.js'

const on = (id: number, key: string, filters: Record<string, unknown>, extra: Partial<FlagDefinition> = {}): FlagDefinition => ({
  id,
  key,
  filters,
  active: true,
  deleted: false,
  ensure_experience_continuity: false,
  version: 1,
  ...extra,
})
const dependsOn = (id: number | string, value: unknown, operator = 'flag_evaluates_to') => ({ groups: [{ properties: [{ key: String(id), type: 'flag', operator, value }], rollout_percentage: 100 }] })
const always = { groups: [{ rollout_percentage: 100 }] }
const never = { groups: [{ rollout_percentage: 0 }] }
const compile = (flags: FlagDefinition[]) => compileFlags(flags, { groupTypeMapping: {}, cohorts: [] })

t.test('flag_evaluates_to', async (t) => {
  const set = compile([
    // dependents first: evaluation follows the dependency order, not the list order
    on(10, 'wants-true', dependsOn(1, true)),
    on(11, 'wants-false', dependsOn(2, false)),
    on(12, 'wants-variant', dependsOn(3, 'test')),
    on(13, 'wants-variant-case', dependsOn(3, 'TEST')),
    on(14, 'variant-is-true', dependsOn(3, true)),
    on(15, 'wants-inactive-false', dependsOn(4, false)),
    on(16, 'wants-inactive-true', dependsOn(4, true)),
    on(17, 'exact-operator', dependsOn(1, true, 'exact')),
    on(18, 'chain', dependsOn(10, true)),
    on(1, 'base-on', always),
    on(2, 'base-off', never),
    on(3, 'base-variant', { ...always, multivariate: { variants: [{ key: 'test', rollout_percentage: 100 }] } }),
    on(4, 'base-inactive', always, { active: false }),
  ])
  const { flags, errorsWhileComputingFlags } = evaluateAll(set, input('u'))

  t.test('compares the dependency value as PostHog does', async (t) => {
    const enabled = (k: string) => flags[k].enabled
    t.same(
      ['wants-true', 'wants-false', 'wants-variant', 'wants-variant-case', 'variant-is-true', 'wants-inactive-false', 'wants-inactive-true', 'exact-operator', 'chain'].map(enabled),
      [true, true, true, false, true, true, false, false, true],
    )
    t.equal(errorsWhileComputingFlags, false)
    t.notOk('base-inactive' in flags, 'inactive dependencies still are not answered')
  })

  t.test('flagKeys brings the dependencies along', async (t) => {
    const keys = Object.keys(evaluateAll(set, input('u', {}, { flagKeys: ['chain'] })).flags).sort()
    t.same(keys, ['base-on', 'chain', 'wants-true'])
  })
})

t.test('missing dependencies', async (t) => {
  const set = compile([
    on(1, 'missing', dependsOn(404, true)),
    on(2, 'on-deleted', dependsOn(3, false)),
    on(3, 'deleted', always, { deleted: true }),
    on(4, 'downstream', dependsOn(1, false)),
    on(5, 'fine', always),
  ])

  t.test('evaluate to false with reason missing_dependency, transitively, without an error', async (t) => {
    const { flags, errorsWhileComputingFlags } = evaluateAll(set, input('u'))
    for (const k of ['missing', 'on-deleted', 'downstream']) {
      t.same([flags[k].enabled, flags[k].failed, flags[k].reason], [false, false, { code: 'missing_dependency', condition_index: null, description: 'Flag cannot be evaluated due to missing dependency' }], k)
    }
    t.equal(flags.fine.enabled, true)
    t.equal(errorsWhileComputingFlags, false)
  })
})

t.test('dependency cycles', async (t) => {
  const set = compile([on(1, 'a', dependsOn(2, true)), on(2, 'b', dependsOn(1, true)), on(3, 'behind', dependsOn(1, true)), on(4, 'fine', always)])

  t.test('leave the flags in or behind the cycle out and report errors, as PostHog', async (t) => {
    const { flags, errorsWhileComputingFlags } = evaluateAll(set, input('u'))
    t.same(Object.keys(flags), ['fine'])
    t.equal(errorsWhileComputingFlags, true)
    t.equal(evaluateAll(set, input('u', {}, { flagKeys: ['fine'] })).errorsWhileComputingFlags, true, 'the error is project-wide')
  })

  t.test('a single cycle member evaluates as missing dependency', async (t) => {
    t.equal(evaluateFlag(set, 'a', input('u'))?.reason.code, 'missing_dependency')
  })
})

t.test('a dependency that failed satisfies neither true nor false', async (t) => {
  const set = compile([
    on(1, 'broken', { groups: [{ properties: [{ key: 'x', type: 'nope' }] }] }),
    on(2, 'wants-true', dependsOn(1, true)),
    on(3, 'wants-false', dependsOn(1, false)),
  ])
  const { flags } = evaluateAll(set, input('u'))
  t.same([flags.broken.failed, flags['wants-true'].enabled, flags['wants-false'].enabled], [true, false, false])
})
