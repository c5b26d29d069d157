import t from 'tap'
import { sha1Hash } from '../../../src/flags/hash.js'
import { ProjectFlagCache, type FlagSource, type GroupTypeSource } from '../../../src/flags/project-cache.js'
import type { RequestScope } from '../../../src/flags/scope.js'
import type { FlagDefinition } from '../../../src/flags/types.js'
import { flag, input } from './fixtures/vectors.js'

/** A project's definitions as a FlagSource sees them: a revision that moves with every change, and a load count. */
function source(flags: FlagDefinition[]) {
  const state = { flags, revision: 1, loads: 0 }
  const flagSource: FlagSource = {
    load: () => {
      state.loads++
      return { flags: state.flags, cohorts: [] }
    },
    // a new string each call, as a source reading its store would hand out
    revision: () => `${state.revision}.0.0`,
  }
  return { state, flagSource }
}

/** A request's scope (`RequestScope`): its runtime, survey-only, its evaluation environments. */
function scope(runtime: 'all' | 'client' | 'server' | null, surveyOnly = false, environments: string[] = []): RequestScope {
  return { runtime, surveyOnly, environments }
}

function groupTypes(mapping: Record<string, string>) {
  const state = { mapping, reads: 0 }
  const groupSource: GroupTypeSource = {
    groupTypeMapping: () => {
      state.reads++
      return { ...state.mapping }
    },
  }
  return { state, groupSource }
}

t.test('a project is compiled once while its flags and group types stay the same', async (t) => {
  const { state, flagSource } = source([flag('a', { groups: [{ properties: [], rollout_percentage: 100 }] })])
  const { groupSource } = groupTypes({ 0: 'company' })
  let now = 0
  const cache = new ProjectFlagCache(flagSource, groupSource, () => now)
  const first = cache.get(1)
  now = 500
  t.equal(cache.get(1), first, 'the same compiled set')
  t.equal(state.loads, 1)
  t.equal(first.revision, '1.0.0#{"0":"company"}', 'the revision names the flags and the mapping it was compiled with')
  t.equal(first.activeCount, 1)
})

t.test('a changed flag revision compiles the project again', async (t) => {
  const { state, flagSource } = source([flag('a', { groups: [{ properties: [], rollout_percentage: 100 }] })])
  const cache = new ProjectFlagCache(flagSource, groupTypes({}).groupSource, () => 0)
  const first = cache.get(1)
  state.flags = [...state.flags, flag('b', { groups: [{ properties: [], rollout_percentage: 100 }] })]
  state.revision = 2
  const second = cache.get(1)
  t.not(second, first)
  t.equal(second.activeCount, 2)
  t.equal(state.loads, 2)
  t.equal(cache.get(1), second, 'and keeps the new one')
})

t.test('a new group type is noticed once the mapping is due for a check', async (t) => {
  const { state: flags, flagSource } = source([flag('a', { groups: [{ properties: [], rollout_percentage: 100 }] })])
  const { state, groupSource } = groupTypes({ 0: 'company' })
  let now = 0
  const cache = new ProjectFlagCache(flagSource, groupSource, () => now)
  const first = cache.get(1)
  state.mapping = { 0: 'company', 1: 'team' }
  now = 999
  t.equal(cache.get(1), first, 'within the check interval the mapping is not read')
  now = 1000
  const second = cache.get(1)
  t.not(second, first)
  t.same(second.groupTypeMapping, { 0: 'company', 1: 'team' })
  t.equal(second.groupTypeIndexByName.get('team'), 1)
  t.equal(flags.loads, 2)
  now = 2500
  const reads = state.reads
  t.equal(cache.get(1), second, 'an unchanged mapping keeps the compiled set')
  t.equal(state.reads, reads + 1)
})

t.test('remote config flags with encrypted payloads are kept for /remote_config but never evaluated, as in PostHog', async (t) => {
  const all = { groups: [{ properties: [], rollout_percentage: 100 }] }
  const { flagSource } = source([
    flag('plain', all),
    flag('config', all, { is_remote_configuration: true, has_encrypted_payloads: false }),
    flag('secret', all, { is_remote_configuration: true, has_encrypted_payloads: true }),
    flag('encrypted-flag', all, { is_remote_configuration: false, has_encrypted_payloads: true }),
  ])
  const project = new ProjectFlagCache(flagSource, groupTypes({}).groupSource, () => 0).get(1)
  t.same(['plain', 'config', 'secret', 'encrypted-flag'].map((k) => project.set.hasFlag(k)), [true, true, false, true])
  t.equal(project.activeCount, 3)
  t.ok(project.definitions.some((f) => f.key === 'secret'), 'the definition stays for /remote_config')
})

t.test('a caller gets the flags for all runtimes and for its own, as PostHog filters them', async (t) => {
  const all = { groups: [{ properties: [], rollout_percentage: 100 }] }
  const { flagSource } = source([
    flag('anywhere', all, { evaluation_runtime: 'all' }),
    flag('legacy', all),
    flag('browser', all, { evaluation_runtime: 'client' }),
    flag('backend', all, { evaluation_runtime: 'server' }),
  ])
  const project = new ProjectFlagCache(flagSource, groupTypes({}).groupSource, () => 0).get(1)
  const keys = (runtime: 'all' | 'client' | 'server' | null) => ['anywhere', 'legacy', 'browser', 'backend'].filter((k) => project.setFor(scope(runtime)).hasFlag(k))
  t.same(keys('all'), ['anywhere', 'legacy', 'browser', 'backend'])
  t.equal(project.setFor(scope('all')), project.set)
  t.same(keys('client'), ['anywhere', 'legacy', 'browser'])
  t.same(keys('server'), ['anywhere', 'legacy', 'backend'])
  t.same(keys(null), ['anywhere', 'legacy'], 'a caller whose runtime is unknown gets only the unrestricted ones')
  t.equal(project.setFor(scope('client')), project.setFor(scope('client')), 'each made once')
  const answer = project.setFor(scope('server')).evaluateList(input('u')).results.map((r) => r.key)
  t.same(answer, ['anywhere', 'legacy', 'backend'], 'a left-out flag is not answered')
})

t.test("a flag of another runtime is false to its dependents, not a missing dependency, as in PostHog's service", async (t) => {
  const on = (value: boolean) => ({ groups: [{ properties: [{ key: '1', type: 'flag', operator: 'flag_evaluates_to', value }] }] })
  const { flagSource } = source([
    flag('base-client', { groups: [{ properties: [], rollout_percentage: 100 }] }, { id: 1, evaluation_runtime: 'client' }),
    flag('dep-true', on(true), { id: 2 }),
    flag('dep-false', on(false), { id: 3 }),
  ])
  const project = new ProjectFlagCache(flagSource, groupTypes({}).groupSource, () => 0).get(1)
  const { flags } = project.setFor(scope('server')).evaluateAll(input('u'))
  t.same(Object.keys(flags), ['dep-true', 'dep-false'], 'base-client is neither evaluated nor answered')
  t.same([flags['dep-false'].enabled, flags['dep-false'].reason.code, flags['dep-false'].reason.condition_index], [true, 'condition_match', 0])
  t.same([flags['dep-true'].enabled, flags['dep-true'].reason.code, flags['dep-true'].reason.condition_index], [false, 'no_condition_match', 0])
  const client = project.setFor(scope('client')).evaluateAll(input('u')).flags
  t.same([client['base-client'].enabled, client['dep-true'].enabled, client['dep-false'].enabled], [true, true, false], 'the client gets it evaluated')
})

t.test('a project without runtime-limited flags answers every runtime with one set', async (t) => {
  const { flagSource } = source([flag('a', { groups: [{ properties: [], rollout_percentage: 100 }] })])
  const project = new ProjectFlagCache(flagSource, groupTypes({}).groupSource, () => 0).get(1)
  for (const runtime of ['all', 'client', 'server', null] as const) t.equal(project.setFor(scope(runtime)), project.set)
})

t.test('only_evaluate_survey_feature_flags leaves every flag but the surveys\' out, false to their dependents', async (t) => {
  const { flagSource } = source([
    flag('plain', { groups: [{ properties: [], rollout_percentage: 100 }] }, { id: 11 }),
    flag('survey-targeting-nps', { groups: [{ properties: [{ key: '11', type: 'flag', operator: 'flag_evaluates_to', value: false }] }] }, { id: 12 }),
    flag('survey-targeting-csat', { groups: [{ properties: [{ key: 'plan', value: ['pro'], type: 'person' }] }] }, { id: 13 }),
  ])
  const project = new ProjectFlagCache(flagSource, groupTypes({}).groupSource, () => 0).get(1)
  const surveys = project.setFor(scope('all', true))
  const { flags } = surveys.evaluateAll(input('u', { plan: 'pro' }))
  t.same(Object.keys(flags), ['survey-targeting-nps', 'survey-targeting-csat'])
  t.same([flags['survey-targeting-nps'].enabled, flags['survey-targeting-nps'].reason.code], [true, 'condition_match'], 'the left-out flag reads as false')
  t.equal(surveys, project.setFor(scope('all', true)), 'made once')
  t.same(Object.keys(project.set.evaluateAll(input('u')).flags), ['plain', 'survey-targeting-nps', 'survey-targeting-csat'], 'without it every flag is evaluated')
})

t.test('evaluation_environments leave out the flags whose evaluation tags name none of them, false to their dependents', async (t) => {
  const all = { groups: [{ properties: [], rollout_percentage: 100 }] }
  const { flagSource } = source([
    flag('untagged', all),
    flag('web-only', all, { id: 21, evaluation_tags: ['web'] }),
    flag('web-or-app', all, { evaluation_tags: ['web', 'app'] }),
    flag('not-web', { groups: [{ properties: [{ key: '21', type: 'flag', operator: 'flag_evaluates_to', value: false }] }] }),
  ])
  const project = new ProjectFlagCache(flagSource, groupTypes({}).groupSource, () => 0).get(1)
  const answer = (environments: string[]) => project.setFor(scope('all', false, environments)).evaluateAll(input('u')).flags
  const app = answer(['app'])
  t.same(Object.keys(app), ['untagged', 'web-or-app', 'not-web'])
  t.equal(app['not-web'].enabled, true, 'the left-out flag reads as false')
  t.same(Object.keys(answer(['web'])), ['untagged', 'web-only', 'web-or-app', 'not-web'])
  t.equal(answer(['web'])['not-web'].enabled, false)
  t.equal(project.setFor(scope('all', false, [])), project.set, 'no environments: every flag')
  t.equal(project.setFor(scope('all', false, ['web', 'other'])), project.set, 'nothing left out: the compiled set')
  t.same(Object.keys(answer(['ios'])), ['untagged', 'not-web'])
})

t.test("a runtime's set hashes with its own batch what SHA-1 alone answers", async (t) => {
  const flags = Array.from({ length: 40 }, (_, i) =>
    flag(`f${i}`, { groups: [{ properties: [], rollout_percentage: 10 + i * 2 }], ...(i % 3 === 0 ? { multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } } : {}) }, i % 2 ? { evaluation_runtime: 'client' } : {}),
  )
  const project = new ProjectFlagCache(source(flags).flagSource, groupTypes({}).groupSource, () => 0).get(1)
  const server = project.setFor(scope('server'))
  for (let i = 0; i < 200; i++) {
    const batched = server.evaluateAll(input(`user-${i}`)).flags
    if (!t.same(batched, server.evaluateAll(input(`user-${i}`), { hash: (s) => sha1Hash(s) }).flags, `user-${i}`)) return
  }
})
