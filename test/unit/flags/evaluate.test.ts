import t from 'tap'
import { compileFlags, evaluateAll, evaluateFlag, type FlagDefinition } from '../../../src/flags/index.js'
import { flag, input, pinnedHash } from './fixtures/vectors.js'

const compile = (flags: FlagDefinition[], mapping: Record<string, string> = {}) => compileFlags(flags, { groupTypeMapping: mapping, cohorts: [] })
const prop = (key: string, value: unknown, operator = 'exact', type = 'person') => ({ key, value, operator, type })

t.test('release conditions', async (t) => {
  t.test('are evaluated in stored order, first match wins, even when a later one overrides the variant', async (t) => {
    const variants = [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }]
    const set = compile([
      flag('f', {
        groups: [{ properties: [prop('email', 'a@x.com')], rollout_percentage: 100 }, { properties: [], rollout_percentage: 100, variant: 'test' }],
        multivariate: { variants },
      }),
    ])
    const hash = pinnedHash({ 'f.u1variant': 0.1 })
    const first = evaluateAll(set, input('u1', { email: 'a@x.com' }), { hash }).flags.f
    t.same([first.variant, first.reason.condition_index, first.reason.description], ['control', 0, 'Matched condition set 1'])
    const second = evaluateAll(set, input('u1', { email: 'b@x.com' }), { hash }).flags.f
    t.same([second.variant, second.reason.condition_index, second.reason.description], ['test', 1, 'Matched condition set 2'])
  })

  t.test('with early_exit, stop at a condition the user meets but whose rollout leaves them out', async (t) => {
    const groups = [{ properties: [prop('plan', 'pro')], rollout_percentage: 0 }, { properties: [], rollout_percentage: 100 }]
    const set = compile([flag('exit', { groups, early_exit: true }), flag('plain', { groups })])
    const pro = evaluateAll(set, input('u', { plan: 'pro' }), { hash: () => 0.5 }).flags
    t.same([pro.exit.enabled, pro.exit.reason.code, pro.exit.reason.condition_index], [false, 'out_of_rollout_bound', 0], 'the later catch-all is not tried')
    t.same([pro.plain.enabled, pro.plain.reason.condition_index], [true, 1], 'without early_exit it is')
    const free = evaluateAll(set, input('u', { plan: 'free' }), { hash: () => 0.5 }).flags
    t.same([free.exit.enabled, free.exit.reason.condition_index], [true, 1], 'a condition the user does not meet does not stop it')
  })

  t.test('ignore a variant override that names no variant', async (t) => {
    const set = compile([flag('f', { groups: [{ properties: [], variant: 'ghost' }], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] } })])
    t.equal(evaluateAll(set, input('u')).flags.f.variant, 'a')
  })

  t.test('report the best reason of the conditions that did not match, ties going to the later one', async (t) => {
    const set = compile([
      flag('f', {
        groups: [
          { properties: [prop('plan', 'pro')], rollout_percentage: 100 },
          { properties: [], rollout_percentage: 10 },
          { properties: [prop('plan', 'team')], rollout_percentage: 100 },
        ],
      }),
      flag('g', { groups: [{ properties: [prop('plan', 'pro')] }, { properties: [prop('plan', 'team')] }] }),
    ])
    const { flags } = evaluateAll(set, input('u', { plan: 'free' }), { hash: () => 0.5 })
    t.same(flags.f.reason, { code: 'out_of_rollout_bound', condition_index: 1, description: 'Out of rollout bound' })
    t.same(flags.g.reason, { code: 'no_condition_match', condition_index: 1, description: 'No matching condition set' })
    t.same([flags.f.enabled, flags.f.variant, flags.f.payload], [false, null, null])
  })

  t.test('a flag without conditions never matches', async (t) => {
    const r = evaluateAll(compile([flag('f', { groups: [] })]), input('u')).flags.f
    t.same(r.reason, { code: 'no_group_type', condition_index: null, description: 'No group type' })
  })

  t.test('an empty distinct id hashes to 0 and passes every rollout, as in PostHog', async (t) => {
    const set = compile([flag('f', { groups: [{ rollout_percentage: 1 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] } })])
    t.same([evaluateAll(set, input('')).flags.f.enabled, evaluateAll(set, input('')).flags.f.variant], [true, 'a'])
  })
})

t.test('payloads', async (t) => {
  const set = compile([
    flag('bool', { groups: [{ rollout_percentage: 100 }], payloads: { true: '{"color":"red"}' } }),
    flag('multi', { groups: [{ rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] }, payloads: { a: '[1,2]', true: 'unused' } }),
    flag('object', { groups: [{ rollout_percentage: 100 }], payloads: { true: { nested: 1 } } }),
    flag('none', { groups: [{ rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] }, payloads: { true: 'x' } }),
    flag('off', { groups: [{ rollout_percentage: 0 }], payloads: { true: 'x' } }),
  ])
  const { flags } = evaluateAll(set, input('u'))

  t.test('use payloads[variant], else payloads["true"], exactly as stored', async (t) => {
    t.equal(flags.bool.payload, '{"color":"red"}')
    t.equal(flags.multi.payload, '[1,2]')
    t.same(flags.object.payload, { nested: 1 })
    t.equal(flags.none.payload, null, 'a variant without a payload has none')
  })

  t.test('are null when the flag is off', async (t) => t.equal(flags.off.payload, null))
})

t.test('group flags', async (t) => {
  const set = compile(
    [
      flag('group-flag', {
        aggregation_group_type_index: 0,
        groups: [{ properties: [{ key: 'name', value: ['Project Name 1'], operator: 'exact', type: 'group', group_type_index: 0 }], rollout_percentage: 35 }],
      }),
    ],
    { '0': 'company' },
  )
  const groupProperties = { company: { name: 'Project Name 1' } }

  t.test('match the posthog-python group vectors', async (t) => {
    const none = evaluateAll(set, input('u', {}, { groupProperties })).flags['group-flag']
    t.same([none.enabled, none.reason.code, none.reason.condition_index], [false, 'no_group_type', 0])
    const hit = evaluateAll(set, input('u', {}, { groups: { company: 'amazon_without_rollout' }, groupProperties })).flags['group-flag']
    t.same([hit.enabled, hit.reason.code], [true, 'condition_match'])
    const miss = evaluateAll(set, input('u', {}, { groups: { company: 'amazon' }, groupProperties })).flags['group-flag']
    t.same([miss.enabled, miss.reason.code], [false, 'out_of_rollout_bound'])
  })

  t.test('read group properties, not person properties', async (t) => {
    const r = evaluateAll(set, input('u', { name: 'Project Name 1' }, { groups: { company: 'amazon_without_rollout' }, groupProperties: { company: { name: 'other' } } })).flags['group-flag']
    t.same([r.enabled, r.reason.code], [false, 'no_condition_match'])
  })

  t.test('treat an unmapped group type like a missing group', async (t) => {
    const unmapped = compile([flag('g', { aggregation_group_type_index: 3, groups: [{ rollout_percentage: 100 }] })], { '0': 'company' })
    t.equal(evaluateAll(unmapped, input('u', {}, { groups: { company: 'acme' } })).flags.g.reason.code, 'no_group_type')
  })

  t.test('mix person and group conditions per condition', async (t) => {
    const mixed = compile(
      [
        flag('m', {
          groups: [
            { aggregation_group_type_index: 0, properties: [{ key: 'plan', value: 'enterprise', type: 'group', group_type_index: 0 }], rollout_percentage: 100 },
            { aggregation_group_type_index: null, properties: [prop('email', 'a@x.com')], rollout_percentage: 100 },
          ],
        }),
      ],
      { '0': 'company' },
    )
    const skipped = evaluateAll(mixed, input('u', { email: 'b@x.com' })).flags.m
    t.same(skipped.reason, {
      code: 'no_condition_match',
      condition_index: 1,
      description: 'No matching condition set (group conditions were not evaluated because no group type was provided)',
    })
    t.equal(evaluateAll(mixed, input('u', { email: 'a@x.com' })).flags.m.reason.condition_index, 1)
    const group = evaluateAll(mixed, input('u', {}, { groups: { company: 'acme' }, groupProperties: { company: { plan: 'enterprise' } } })).flags.m
    t.same([group.enabled, group.reason.condition_index], [true, 0])
  })
})

t.test('early access', async (t) => {
  t.test('super groups decide when the person has one of their properties', async (t) => {
    const set = compile([
      flag('ea', {
        super_groups: [{ properties: [prop('$feature_enrollment/ea', ['true'])], rollout_percentage: 100 }],
        groups: [{ properties: [prop('plan', 'pro')], rollout_percentage: 100 }],
        payloads: { true: '"p"' },
      }),
    ])
    const enrolled = evaluateAll(set, input('u', { '$feature_enrollment/ea': true })).flags.ea
    t.same([enrolled.enabled, enrolled.reason.code, enrolled.reason.condition_index, enrolled.payload], [true, 'super_condition_value', 0, '"p"'])
    const optedOut = evaluateAll(set, input('u', { '$feature_enrollment/ea': false, plan: 'pro' })).flags.ea
    t.same([optedOut.enabled, optedOut.reason.code, optedOut.payload], [false, 'super_condition_value', '"p"'], 'the result is final, payload included')
    const unknown = evaluateAll(set, input('u', { plan: 'pro' })).flags.ea
    t.same([unknown.enabled, unknown.reason.code], [true, 'condition_match'])
  })

  t.test('feature_enrollment reads $feature_enrollment/<key> and takes precedence', async (t) => {
    const set = compile([flag('ea', { feature_enrollment: true, groups: [{ rollout_percentage: 0 }] })])
    t.same([evaluateAll(set, input('u', { '$feature_enrollment/ea': 'true' })).flags.ea.enabled, evaluateAll(set, input('u', { '$feature_enrollment/ea': 'TRUE' })).flags.ea.enabled], [true, false])
    t.equal(evaluateAll(set, input('u')).flags.ea.reason.code, 'out_of_rollout_bound')
  })
})

t.test('holdouts', async (t) => {
  const variants = [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }]
  const set = compile([
    flag('exp', { holdout: { id: 7, exclusion_percentage: 10 }, groups: [{ rollout_percentage: 100 }], multivariate: { variants }, payloads: { 'holdout-7': '"h"' } }),
    flag('legacy', { holdout_groups: [{ properties: [], rollout_percentage: 10, variant: 'holdout-3' }], groups: [{ rollout_percentage: 100 }], multivariate: { variants } }),
  ])

  t.test('hold out people whose holdout- hash is within the exclusion percentage', async (t) => {
    const inside = evaluateAll(set, input('u'), { hash: pinnedHash({ 'holdout-u': 0.05, 'exp.uvariant': 0.1, 'legacy.uvariant': 0.1 }) }).flags
    t.same(
      [inside.exp.enabled, inside.exp.variant, inside.exp.reason, inside.exp.payload],
      [true, 'holdout-7', { code: 'holdout_condition_value', condition_index: null, description: 'Holdout condition value' }, '"h"'],
    )
    t.same([inside.legacy.variant, inside.legacy.reason.code], ['control', 'condition_match'], 'holdout_groups is no holdout, as in PostHog\'s current service')
    const outside = evaluateAll(set, input('u'), { hash: pinnedHash({ 'holdout-u': 0.5, 'exp.uvariant': 0.1 }) }).flags
    t.same([outside.exp.variant, outside.exp.reason.code], ['control', 'condition_match'])
  })

  t.test('use the same hash for every flag of a person (the real SHA-1)', async (t) => {
    // holdout hash of "example_id" is 0.94 and of "test-identifier" 0.449 (Rust vectors)
    const h = compile([flag('x', { holdout: { id: 1, exclusion_percentage: 45 }, groups: [{ rollout_percentage: 0 }] })])
    t.equal(evaluateAll(h, input('test-identifier')).flags.x.variant, 'holdout-1')
    t.equal(evaluateAll(h, input('example_id')).flags.x.enabled, false)
  })
})

t.test('identifiers', async (t) => {
  t.test('device_id bucketing hashes the device and skips person conditions without one', async (t) => {
    const set = compile([flag('d', { groups: [{ rollout_percentage: 50 }] }, { bucketing_identifier: 'device_id' })])
    const seen: string[] = []
    const r = evaluateAll(set, input('u', {}, { deviceId: 'dev-1' }), { hash: (s) => (seen.push(s), 0.1) }).flags.d
    t.same([r.enabled, seen], [true, ['d.dev-1']])
    t.same(evaluateAll(set, input('u')).flags.d.reason, { code: 'out_of_rollout_bound', condition_index: 0, description: 'Out of rollout bound' })
  })

  t.test('experience continuity: stored override, then the anonymous id, then the distinct id', async (t) => {
    const set = compile([flag('c', { groups: [{ rollout_percentage: 50 }] }, { ensure_experience_continuity: true }), flag('n', { groups: [{ rollout_percentage: 50 }] })])
    const run = (extra: object) => {
      const seen: string[] = []
      evaluateAll(set, input('user', {}, extra), { hash: (s) => (seen.push(s), 0.1) })
      return seen
    }
    t.same(run({ hashKeyOverrides: { c: 'anon-1' }, anonDistinctId: 'anon-2' }), ['c.anon-1', 'n.user'])
    t.same(run({ anonDistinctId: 'anon-2' }), ['c.anon-2', 'n.user'])
    t.same(run({}), ['c.user', 'n.user'])
  })
})

t.test('person properties', async (t) => {
  t.test('fill a missing $initial_ property from its source', async (t) => {
    const set = compile([flag('i', { groups: [{ properties: [prop('$initial_utm_source', 'google')] }] })])
    t.equal(evaluateAll(set, input('u', { utm_source: 'google' })).flags.i.enabled, true)
    t.equal(evaluateAll(set, input('u', { utm_source: 'google', $initial_utm_source: 'bing' })).flags.i.enabled, false, 'stored values win')
  })

  t.test('never read Object.prototype for a missing key', async (t) => {
    const set = compile([flag('p', { groups: [{ properties: [prop('constructor', null, 'is_not_set'), prop('__proto__', null, 'is_not_set')] }] })])
    t.equal(evaluateAll(set, input('u')).flags.p.enabled, true)
  })
})

t.test('which flags are answered', async (t) => {
  const set = compile([
    flag('on', { groups: [{ rollout_percentage: 100 }] }),
    flag('inactive', { groups: [{ rollout_percentage: 100 }] }, { active: false }),
    flag('gone', { groups: [{ rollout_percentage: 100 }] }, { deleted: true }),
    flag('versionless', { groups: [{ rollout_percentage: 100 }] }, { version: null }),
  ])

  t.test('evaluateAll leaves out inactive and deleted flags', async (t) => {
    t.same(Object.keys(evaluateAll(set, input('u')).flags), ['on', 'versionless'])
  })

  t.test('flagKeys restricts the answer', async (t) => {
    t.same(Object.keys(evaluateAll(set, input('u', {}, { flagKeys: ['versionless', 'nope'] })).flags), ['versionless'])
    t.same(evaluateAll(set, input('u', {}, { flagKeys: [] })).flags, {})
  })

  t.test('evaluateFlag answers for an inactive flag, not for a deleted or unknown one', async (t) => {
    t.equal(evaluateFlag(set, 'inactive', input('u'))?.enabled, true)
    t.equal(evaluateFlag(set, 'gone', input('u')), undefined)
    t.equal(evaluateFlag(set, 'nope', input('u')), undefined)
  })

  t.test('reports id and version, version 0 when absent', async (t) => {
    const { flags } = evaluateAll(set, input('u'))
    t.same([flags.on.version, flags.versionless.version, typeof flags.on.id], [1, 0, 'number'])
  })
})

t.test('error isolation', async (t) => {
  const set = compile([
    flag('ok', { groups: [{ rollout_percentage: 100 }] }),
    flag('bad-operator', { groups: [{ properties: [{ key: 'x', value: 1, operator: 'contains', type: 'person' }] }] }),
    flag('bad-rollout', { groups: [{ rollout_percentage: '50' }] }),
    flag('bad-type', { groups: [{ properties: [{ key: 'x', value: 1, type: 'event' }] }] }),
    flag('no-key', { groups: [{ properties: [{ value: 1 }] }] }),
    flag('cohort-gone', { groups: [{ properties: [{ key: 'id', value: 404, type: 'cohort', operator: 'in' }] }] }),
  ])

  t.test('a broken flag is off and failed; the others are unaffected', async (t) => {
    const { flags, errorsWhileComputingFlags } = evaluateAll(set, input('u'))
    t.equal(errorsWhileComputingFlags, true)
    t.same([flags.ok.enabled, flags.ok.failed], [true, false])
    for (const key of ['bad-operator', 'bad-rollout', 'bad-type', 'no-key']) {
      t.same([flags[key].enabled, flags[key].failed, flags[key].reason.code, flags[key].payload], [false, true, 'flag_data_parsing_error', null], key)
    }
    t.same(flags['cohort-gone'].reason, { code: 'dependency_not_found_cohort', condition_index: null, description: 'Cohort dependency not found' })
  })

  t.test('the set reports the unreadable definitions', async (t) => {
    t.same(set.warnings.map((w) => w.key), ['bad-operator', 'bad-rollout', 'bad-type', 'no-key'])
  })

  t.test('without a broken flag in the answer there is no error', async (t) => {
    t.equal(evaluateAll(set, input('u', {}, { flagKeys: ['ok'] })).errorsWhileComputingFlags, false)
  })
})

t.test("PostHog's config formats: only format 1 evaluates, anything else fails as PostHog's flag service fails it", async (t) => {
  const set = compile([
    flag('implicit', { groups: [{ rollout_percentage: 100 }] }),
    flag('explicit-1', { version: 1, groups: [{ rollout_percentage: 100 }] }),
    flag('format-2', { version: 2, return_type: 'boolean', default_value: true, rules: [] }),
    flag('boolean-version', { version: true, groups: [{ rollout_percentage: 100 }] }),
    flag('text-version', { version: '1', groups: [{ rollout_percentage: 100 }] }),
  ])
  const { flags, errorsWhileComputingFlags } = evaluateAll(set, input('u'))
  t.same([flags.implicit.enabled, flags['explicit-1'].enabled], [true, true])
  for (const key of ['format-2', 'boolean-version', 'text-version']) {
    t.same(
      [flags[key].enabled, flags[key].failed, flags[key].reason],
      [false, true, { code: 'flag_data_parsing_error', condition_index: null, description: 'Failed to parse flag data: unsupported feature flag configuration format' }],
      key,
    )
  }
  t.equal(errorsWhileComputingFlags, true)
})
