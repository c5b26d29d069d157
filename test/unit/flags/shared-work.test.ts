/**
 * Work shared between the flags of one request must not change any answer: identical property tests share
 * one memo slot (each runs once per request, and once per reused person object across requests), reasons
 * are shared objects, `evaluateList` gives the flags of `evaluateAll` in `Object.values` order, and
 * `flagsJson` writes exactly `JSON.stringify(flagsBody(…))`, also when it reuses a person's last answer.
 */
import t from 'tap'
import { compileSetData } from '../../../src/flags/compile.js'
import { compileFlags, type EvaluationInput, type EvaluationList, type FlagDefinition, type FlagResult } from '../../../src/flags/index.js'
import { flagsJson, LargeHeads, type ResponseShape } from '../../../src/flags/response.js'
import type { PersonState } from '../../../src/flags/types.js'
import { flagsBody } from './fixtures/flags-body.js'
import { Rng, fuzzSeed } from '../fuzz/rng.js'
import { flag } from './fixtures/vectors.js'

const SEED = fuzzSeed()
const NOW = Date.parse('2024-06-01T12:00:00Z')

/** A small pool, so that flags of a set repeat the same tests (as real flag sets do). */
const FILTERS: Record<string, unknown>[] = [
  { key: 'email', type: 'person', operator: 'icontains', value: '@example.com' },
  { key: 'email', type: 'person', operator: 'regex', value: '^[a-z0-9._%+-]+@(example|test)\\.(com|org)$' },
  { key: 'email', type: 'person', operator: 'not_regex', value: '(?<=user)1' },
  { key: 'country', type: 'person', operator: 'exact', value: ['US', 'FR'] },
  { key: 'country', type: 'person', operator: 'is_not', value: 'US' },
  { key: 'plan', type: 'person', operator: 'exact', value: 'pro' },
  { key: 'plan', type: 'person', operator: 'is_set' },
  { key: 'plan', type: 'person', operator: 'is_not_set' },
  { key: 'age', type: 'person', operator: 'gt', value: '30' },
  { key: 'age', type: 'person', operator: 'between', value: [20, 40] },
  { key: 'version', type: 'person', operator: 'semver_gte', value: '2.3.0' },
  { key: 'signup', type: 'person', operator: 'is_date_after', value: '-30d' },
  { key: 'signup', type: 'person', operator: 'is_date_before', value: '2024-05-15' },
  { key: 'created_at', type: 'person_metadata', operator: 'is_date_after', value: '-7d' },
  { key: 'plan', type: 'group', group_type_index: 0, operator: 'exact', value: 'enterprise' },
  { key: 'plan', type: 'group', group_type_index: 1, operator: 'exact', value: 'enterprise' },
  { key: 'plan', type: 'group', operator: 'is_not_set' },
  { key: 'employees', type: 'group', group_type_index: 0, operator: 'gte', value: 100 },
]

function randomFlag(rng: Rng, i: number): FlagDefinition {
  // distinct filters within one flag: a flag compiled alone then shares no slot, which makes it the reference
  const pool = FILTERS.map((_, k) => k).sort(() => rng.next() - 0.5)
  const conditions = Array.from({ length: 1 + rng.int(3) }, () => ({
    properties: pool.splice(0, rng.int(3)).map((k) => FILTERS[k]),
    rollout_percentage: rng.pick([0, 30, 50, 100]),
    ...(rng.chance(0.2) ? { aggregation_group_type_index: rng.int(2) } : {}),
  }))
  const filters: Record<string, unknown> = { groups: conditions, payloads: { true: '{"on":true}', test: 7 } }
  if (rng.chance(0.2)) filters.multivariate = { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] }
  if (rng.chance(0.1)) filters.super_groups = [{ properties: pool.splice(0, 1).map((k) => FILTERS[k]), rollout_percentage: 100 }]
  else if (rng.chance(0.1)) filters.feature_enrollment = true
  if (rng.chance(0.1)) filters.aggregation_group_type_index = 0
  const extra = rng.chance(0.1) ? { ensure_experience_continuity: true } : rng.chance(0.1) ? { bucketing_identifier: 'device_id' } : {}
  return flag(`flag-${i}`, filters, extra)
}

function randomInput(rng: Rng, i: number): EvaluationInput {
  const props: Record<string, unknown> = {}
  if (rng.chance(0.8)) props.email = rng.pick([`user${i}@example.com`, `user1${i}@test.org`, `élodie@example.com`, 'x'])
  if (rng.chance(0.8)) props.country = rng.pick(['US', 'FR', 'DE', null])
  if (rng.chance(0.7)) props.plan = rng.pick(['pro', 'free', true, 3])
  if (rng.chance(0.7)) props.age = rng.pick([18, 35, '41', 'old'])
  if (rng.chance(0.7)) props.version = rng.pick(['2.4.0', '2.2.9', 'v3'])
  if (rng.chance(0.7)) props.signup = rng.pick(['2024-05-20T10:00:00Z', '2024-01-01', 1717000000])
  if (rng.chance(0.5)) props.__posthog_person_metadata__created_at = '2024-05-30T00:00:00Z'
  if (rng.chance(0.3)) props.$feature_enrollment = true
  const groups: Record<string, string> = {}
  const groupProperties: Record<string, Record<string, unknown>> = {}
  if (rng.chance(0.6)) {
    groups.company = `c${rng.int(5)}`
    groupProperties.company = { plan: rng.pick(['enterprise', 'free']), employees: rng.int(300) }
  }
  if (rng.chance(0.3)) groups.project = `p${rng.int(5)}`
  return { distinctId: `user-${i}`, personProperties: props, groups, groupProperties, now: NOW + rng.int(60) * 86_400_000 }
}

/**
 * Requests of `count` persons, each one object for all its requests (as the evaluator hands them out) with
 * its holder, under its own distinct id with probability `ownId`.
 */
function* returningRequests(rng: Rng, count: number, requests: number, ownId: number) {
  const persons = Array.from({ length: count }, (_, i) => randomInput(rng, i).personProperties)
  const states: PersonState[] = persons.map(() => ({}))
  for (let i = 0; i < requests; i++) {
    const k = i % count
    const input: EvaluationInput = { ...randomInput(rng, i), personProperties: persons[k], distinctId: rng.chance(ownId) ? `person-${k}` : `other-${i}` }
    yield { i, input, state: states[k] }
  }
}

t.test(`identical tests share a slot and answer as if run separately (FUZZ_SEED=${SEED})`, async (t) => {
  const mapping = { '0': 'company', '1': 'project' }
  for (let s = 0; s < 20; s++) {
    const rng = new Rng(SEED, s)
    const defs = Array.from({ length: 40 }, (_, i) => randomFlag(rng, i))
    const data = compileSetData(defs, { groupTypeMapping: mapping, cohorts: [] })
    const tests = data.flags.flatMap((f) => [...f.conditions, ...(f.superCondition ? [f.superCondition.condition] : [])]).flatMap((c) => c.tests)
    t.ok(data.testSlots < tests.length, `set ${s}: ${tests.length} tests in ${data.testSlots} slots`)
    const set = compileFlags(defs, { groupTypeMapping: mapping, cohorts: [] })
    const alone = defs.map((d) => compileFlags([d], { groupTypeMapping: mapping, cohorts: [] }))
    for (let i = 0; i < 50; i++) {
      const input = randomInput(rng, i)
      const all = set.evaluateAll(input)
      const separately = Object.fromEntries(alone.map((a, k) => [defs[k].key, a.evaluateAll(input).flags[defs[k].key]]))
      if (!t.same(all.flags, separately, `set ${s}, input ${i}`)) return
      t.same(set.evaluateList(input).results, Object.values(all.flags))
    }
  }
})

t.test(`a reused person's kept test results answer as a fresh evaluation, whatever each request's groups and now (FUZZ_SEED=${SEED})`, async (t) => {
  const mapping = { '0': 'company', '1': 'project' }
  for (let s = 0; s < 20; s++) {
    const rng = new Rng(SEED, 200 + s)
    const defs = Array.from({ length: 40 }, (_, i) => randomFlag(rng, i))
    const set = compileFlags(defs, { groupTypeMapping: mapping, cohorts: [] })
    // a few persons, mostly under their own distinct id, some requests with what can change without them
    for (const { i, input, state } of returningRequests(rng, 4, 50, 0.8)) {
      if (rng.chance(0.2)) input.hashKeyOverrides = { [`flag-${rng.int(40)}`]: `override-${rng.int(3)}` }
      if (rng.chance(0.3)) input.deviceId = `device-${rng.int(3)}`
      if (rng.chance(0.3)) input.anonDistinctId = `anon-${rng.int(3)}`
      const kept = set.evaluateAll({ ...input, personState: state })
      const fresh = set.evaluateAll({ ...input, personProperties: { ...input.personProperties } })
      if (!t.same(kept, fresh, `set ${s}, request ${i}`)) return
    }
  }
})

t.test(`a returning person's whole runs, which evaluate again only the flags that are not personAlone, answer as a fresh evaluation (FUZZ_SEED=${SEED})`, async (t) => {
  const mapping = { '0': 'company', '1': 'project' }
  for (let s = 0; s < 20; s++) {
    const rng = new Rng(SEED, 400 + s)
    const defs = Array.from({ length: 30 }, (_, i) => randomFlag(rng, i))
    for (const d of defs) if (rng.chance(0.15)) d.active = false
    // flags that read other flags' values (kept ones among them), and one whose definition does not parse
    for (let i = 0; i < 6; i++) {
      const on = rng.pick(defs)
      const condition = { properties: [{ key: String(on.id), type: 'flag', operator: 'flag_evaluates_to', value: rng.pick([true, false, 'test']) }], rollout_percentage: 100 }
      defs.push(flag(`after-${i}`, { groups: [condition] }, rng.chance(0.2) ? { active: false } : {}))
    }
    defs.push(flag('broken', { groups: 'not a list' as unknown as [] }))
    const set = compileFlags(defs, { groupTypeMapping: mapping, cohorts: [] })
    for (const { i, input, state } of returningRequests(rng, 3, 60, 0.9)) {
      const fresh = { ...input, personProperties: { ...input.personProperties } }
      const step = rng.int(5)
      if (step === 0) {
        // a diagnostic forcing one flag, inactive ones included, with the same holder
        const key = rng.pick(defs).key
        if (!t.same(set.evaluateFlag(key, { ...input, personState: state }), set.evaluateFlag(key, fresh), `set ${s}, request ${i}: ${key} alone`)) return
      } else if (step === 1) {
        const flagKeys = defs.filter(() => rng.chance(0.3)).map((d) => d.key)
        if (!t.same(set.evaluateAll({ ...input, flagKeys, personState: state }), set.evaluateAll({ ...fresh, flagKeys }), `set ${s}, request ${i}: some keys`)) return
      } else if (!t.same(set.evaluateList({ ...input, personState: state }), set.evaluateList(fresh), `set ${s}, request ${i}`)) return
    }
  }
})

t.test('a reused person object with its holder has its person-property tests run once, not once per request', async (t) => {
  const set = compileFlags([flag('by-email', { groups: [{ properties: [{ key: 'email', type: 'person', operator: 'regex', value: '@example\\.com$' }] }] })], {
    groupTypeMapping: {},
    cohorts: [],
  })
  let reads = 0
  const person = Object.defineProperty({}, 'email', { enumerable: true, get: () => (reads++, 'ann@example.com') })
  const input = { distinctId: 'ann', personProperties: person, groups: {}, groupProperties: {}, now: NOW }
  const personState = {}
  for (let i = 0; i < 3; i++) t.equal(set.evaluateAll({ ...input, personState }).flags['by-email'].enabled, true)
  t.equal(reads, 1, 'kept in the holder')
  for (let i = 0; i < 3; i++) set.evaluateAll(input)
  t.equal(reads, 4, 'without a holder every request reads it')
  set.evaluateAll({ ...input, personProperties: { ...person }, personState })
  t.equal(reads, 5, 'another object with the same holder starts afresh')
})

t.test('a reused person keeps no answer that static cohorts or another flag decide', async (t) => {
  const cohorts = [{ id: 1, is_static: true, filters: null }]
  const recent = flag('recent', { groups: [{ properties: [{ key: 'signup', type: 'person', operator: 'is_date_after', value: '-30d' }] }] })
  const defs = [
    flag('in-cohort', { groups: [{ properties: [{ key: 'id', value: 1, type: 'cohort' }] }] }),
    recent,
    flag('after-recent', { groups: [{ properties: [{ key: String(recent.id), type: 'flag', operator: 'flag_evaluates_to', value: true }] }] }),
  ]
  const set = compileFlags(defs, { groupTypeMapping: {}, cohorts })
  const person = { signup: '2024-05-20T00:00:00Z' }
  const personState = {}
  const answers = (member: boolean, now: number) => {
    const flags = set.evaluateAll({ distinctId: 'ann', personProperties: person, personState, groups: {}, groupProperties: {}, now, staticCohortIds: new Set(member ? [1] : []) }).flags
    return [flags['in-cohort'].enabled, flags['after-recent'].enabled]
  }
  t.same(answers(true, NOW), [true, true])
  t.same(answers(false, NOW + 60 * 86_400_000), [false, false], 'left the cohort, and "recent" no longer holds')
  t.same(answers(true, NOW), [true, true])
})

/** PostHog's rule read off the definitions: a condition above 0% with a cohort, or a property key the overrides lack. */
/** Rust's `FlagFilters::requires_db_properties`, over any of the flags. */
function postHogNeedsStored(defs: FlagDefinition[], overrides: Record<string, unknown>): boolean {
  type Group = { properties?: { key: string; type: string }[]; rollout_percentage?: number; aggregation_group_type_index?: number | null }
  const needs = (g: Group) =>
    (g.rollout_percentage ?? 100) > 0 && (g.properties ?? []).some((p) => p.type === 'cohort' || (p.type !== 'flag' && !Object.hasOwn(overrides, p.key)))
  return defs.some((d) => {
    const groups = d.filters.groups as Group[]
    return (
      d.filters.aggregation_group_type_index != null ||
      (d.filters.feature_enrollment === true && !Object.hasOwn(overrides, `$feature_enrollment/${d.key}`)) ||
      groups.some((g) => g.aggregation_group_type_index != null) ||
      ((d.filters.super_groups as Group[] | undefined) ?? []).some(needs) ||
      groups.some(needs)
    )
  })
}

t.test(`the load decisions for all flags, answered once, match asking for every key (FUZZ_SEED=${SEED})`, async (t) => {
  const cohorts = [{ id: 1, is_static: true, filters: null }]
  const overrideKeys = ['email', 'country', 'plan', 'age', 'version', 'signup', 'created_at', 'employees', '$feature_enrollment/flag-0', '$feature_enrollment/flag-1']
  for (let s = 0; s < 30; s++) {
    const rng = new Rng(SEED, 500 + s)
    const defs = Array.from({ length: 1 + rng.int(6) }, (_, i) => randomFlag(rng, i))
    if (s % 3 === 0) defs.push(flag('in-cohort', { groups: [{ properties: [{ key: 'id', value: 1, type: 'cohort' }], rollout_percentage: rng.pick([0, 50]) }] }))
    if (rng.chance(0.5)) defs.push(flag('sticky', { groups: [{ rollout_percentage: rng.pick([40, 100]) }] }, { ensure_experience_continuity: true }))
    const set = compileFlags(defs, { groupTypeMapping: { '0': 'company' }, cohorts })
    const keys = defs.map((d) => d.key)
    t.equal(set.needsHashKeyOverrides(), set.needsHashKeyOverrides(keys), `set ${s}: hash key overrides`)
    for (let i = 0; i < 20; i++) {
      const overrides = Object.fromEntries(overrideKeys.filter(() => rng.chance(0.9)).map((k) => [k, 1]))
      const label = `set ${s}: stored properties with ${Object.keys(overrides)}`
      t.equal(set.needsStoredProperties(overrides), set.needsStoredProperties(overrides, keys), label)
      t.equal(set.needsStoredProperties(overrides), postHogNeedsStored(defs, overrides), label)
    }
  }
})

t.test('tests that read different places never share a slot', async (t) => {
  const data = compileSetData(
    [
      flag('a', { groups: [{ properties: [{ key: 'plan', type: 'person', value: 'pro' }, { key: 'plan', type: 'group', group_type_index: 0, value: 'pro' }] }] }),
      flag('b', { groups: [{ properties: [{ key: 'plan', type: 'group', group_type_index: 1, value: 'pro' }, { key: 'plan', type: 'person_metadata', value: 'pro' }] }] }),
      flag('c', { groups: [{ properties: [{ key: 'plan', type: 'person', value: 'pro', operator: 'exact' }, { key: 'plan', type: 'person', value: 'Pro' }] }] }),
    ],
    { groupTypeMapping: { '0': 'company', '1': 'project' }, cohorts: [] },
  )
  t.same(data.flags.map((f) => f.conditions[0].tests.map((x) => (x.kind === 'property' ? x.slot : -1))), [[0, 1], [2, 3], [0, 4]])
})

t.test('evaluateList keeps the order and replacement rules of a keyed object', async (t) => {
  const defs = [flag('b', { groups: [] }), flag('10', { groups: [] }), flag('a', { groups: [] }), flag('2', { groups: [] }), flag('b', { groups: [{ rollout_percentage: 0 }] }), flag('__proto__', { groups: [] })]
  const set = compileFlags(defs, { groupTypeMapping: {}, cohorts: [] })
  const input = { distinctId: 'u', personProperties: {}, groups: {}, groupProperties: {}, now: NOW }
  const list = set.evaluateList(input).results
  t.same(list, Object.values(set.evaluateAll(input).flags))
  t.same(list.map((r) => r.key), ['2', '10', 'b', 'a'])
  t.same(list.find((r) => r.key === 'b')?.reason.code, 'out_of_rollout_bound')
})

t.test(`flagsJson writes JSON.stringify(flagsBody(…)) for every shape (FUZZ_SEED=${SEED})`, async (t) => {
  const keys = ['a', 'b"quote', 'back\\slash', 'ünï', '\u2028', 'lone\ud800', 'emoji😀', 'k-1', 'k-2', 'k-3', 'long'.repeat(100)]
  const payloads: unknown[] = [null, undefined, '{"enabled":true}', 'plain', 12, 1.5, true, false, [1, 'x'], { a: { b: null } }, 'x'.repeat(300)]
  const reasons: FlagResult['reason'][] = [
    { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
    { code: 'flag_data_parsing_error', condition_index: null, description: 'Failed to parse flag data: x' },
    { code: 'no_condition_match', condition_index: null },
  ]
  for (let s = 0; s < 300; s++) {
    const rng = new Rng(SEED, 1000 + s)
    const chosen = keys.filter(() => rng.chance(0.6))
    const results: FlagResult[] = chosen.map((key, i) => ({
      key,
      enabled: rng.chance(0.5),
      variant: rng.chance(0.3) ? rng.pick(['control', 'tëst"', '']) : null,
      reason: rng.pick(reasons),
      payload: rng.pick(payloads),
      id: i + 1,
      version: rng.pick([0, 3, 12]),
      failed: rng.chance(0.1),
      hasExperiment: rng.chance(0.3),
    }))
    const list: EvaluationList = { results, errorsWhileComputingFlags: rng.chance(0.3) }
    for (const shape of ['v1', 'v2', 'v3', 'v4', 'typed'] as ResponseShape[]) {
      for (const withConfig of [true, false]) {
        const options = { shape, withConfig, supportedCompression: ['gzip', 'lz64'], requestId: 'req-1', evaluatedAt: 1_700_000_000_123 }
        if (!t.equal(flagsJson(list, options), JSON.stringify(flagsBody(list, options)), `${shape} config=${withConfig} case ${s}`)) return
      }
    }
  }
})

t.test(`a person's kept answer text is reused only for results that write the same text (FUZZ_SEED=${SEED})`, async (t) => {
  const reasons: FlagResult['reason'][] = [
    { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
    { code: 'no_condition_match', condition_index: null },
  ]
  const make = (rng: Rng, i: number): FlagResult => ({
    key: `k-${i}`,
    enabled: rng.chance(0.5),
    variant: rng.chance(0.3) ? rng.pick(['control', 'test']) : null,
    reason: rng.pick(reasons),
    payload: rng.pick([null, '{"enabled":true}', 'x', { a: 1 }]),
    id: i + 1,
    version: rng.pick([0, 3]),
    failed: rng.chance(0.1),
    hasExperiment: rng.chance(0.2),
  })
  /** One field changed each: what `changed` applies to a copy. */
  const changes: ((r: FlagResult) => void)[] = [
    (r) => (r.key += '-x'),
    (r) => (r.enabled = !r.enabled),
    (r) => (r.variant = r.variant === 'test' ? 'control' : 'test'),
    (r) => (r.reason = r.reason === reasons[0] ? reasons[1] : reasons[0]),
    (r) => (r.payload = r.payload === 'x' ? 'y' : 'x'),
    (r) => (r.id += 100),
    (r) => (r.version += 1),
    (r) => (r.failed = !r.failed),
    (r) => (r.hasExperiment = !r.hasExperiment),
  ]
  /** A copy of `r` with one field changed, or an equal copy. */
  const changed = (rng: Rng, r: FlagResult): FlagResult => {
    const copy = { ...r }
    if (rng.chance(0.9)) rng.pick(changes)(copy)
    return copy
  }
  const shapes: ResponseShape[] = ['v1', 'v2', 'v3', 'v4', 'typed']
  const compressions = [['gzip', 'lz64'], ['gzip', 'gzip-js']]
  const personState: PersonState = {}
  const rng = new Rng(SEED, 2000)
  let results = Array.from({ length: 8 }, (_, i) => make(rng, i))
  let options = { shape: 'v3' as ResponseShape, withConfig: true, supportedCompression: compressions[0], requestId: 'req-0', evaluatedAt: 1_700_000_000_000 }
  let errors = false
  for (let s = 0; s < 2000; s++) {
    const step = rng.int(6)
    if (step === 1) results = results.map((r) => (rng.chance(0.3) ? changed(rng, r) : r))
    if (step === 2) results = rng.chance(0.5) ? results.slice(1) : [...results, make(rng, results.length + s)]
    if (step === 3) options = { ...options, shape: rng.pick(shapes), withConfig: rng.chance(0.5), supportedCompression: rng.pick(compressions) }
    if (step === 4) errors = !errors
    options = { ...options, requestId: `req-${s}` }
    const list: EvaluationList = { results, errorsWhileComputingFlags: errors, personState }
    const before = personState.answer
    if (!t.equal(flagsJson(list, options), JSON.stringify(flagsBody(list, options)), `step ${s}`)) return
    if (step === 0 && s > 0 && personState.answer !== before) return t.fail(`step ${s}: the same results wrote a new text`)
  }
  const long: EvaluationList = { results: Array.from({ length: 300 }, (_, i) => make(rng, i)), errorsWhileComputingFlags: false, personState: {} }
  t.equal(flagsJson(long, options), JSON.stringify(flagsBody(long, options)))
  const longKept = long.personState!.answer
  t.ok(longKept, 'an answer of 300 flags is kept too')
  const again: EvaluationList = { ...long, results: [...long.results] }
  t.equal(flagsJson(again, { ...options, requestId: 'again' }), JSON.stringify(flagsBody(again, { ...options, requestId: 'again' })))
  t.equal(long.personState!.answer, longKept, 'and reused for the same results')
})

t.test('long kept answers stay within their budget, the least recently used given up first', async (t) => {
  const heads = new LargeHeads(10_000)
  const head = (chars: number) => ({ results: [], errors: false, shape: 'v3' as const, withConfig: false, supportedCompression: [], head: 'x'.repeat(chars) })
  const holders: PersonState[] = [{}, {}, {}, {}]
  for (const h of holders.slice(0, 3)) heads.replace(h, (h.answer = head(3_000)))
  t.equal(heads.chars, 9_000)
  heads.used(holders[0], holders[0].answer as ReturnType<typeof head>)
  heads.replace(holders[3], (holders[3].answer = head(3_000)))
  t.equal(heads.chars, 9_000, 'one was given up for the fourth')
  t.equal(holders[1].answer, undefined, 'the least recently used one')
  t.ok(holders[0].answer && holders[2].answer && holders[3].answer)
  heads.replace(holders[0], null)
  t.equal(heads.chars, 6_000, 'a holder whose new answer is short no longer counts its long one')
  t.ok(holders[0].answer, 'and keeps its own answer (the caller replaces it)')
  heads.replace(holders[2], (holders[2].answer = head(20_000)))
  t.equal(heads.chars, 0, 'a head over the whole budget is not kept, and pushes out the others on its way')
  t.same([holders[2].answer, holders[3].answer], [undefined, undefined])
})
