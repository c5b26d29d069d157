/**
 * One flag for one request, following the current PostHog `get_match`: early-access enrollment (or legacy
 * super groups), then the holdout, then the release conditions in stored order — first match wins, and
 * without a match the highest-ranked reason seen is reported. Pure: everything comes in through `Request`.
 */
import { membershipMatches, type CohortScope, type CohortSet } from './cohorts.js'
import type { CompiledCondition, CompiledFlag, ResolvedPropertyTest } from './compile.js'
import type { FlagTest } from './filters.js'
import { holdoutHashInput } from './hash.js'
import type { Sha1Batch } from './sha1x4/batch.js'
import { EVALUATION_ERRORS, REASON_SCORE, wireReason, type MatchReason } from './reasons.js'
import type { EvaluationInput, FlagResult, FlagValue, HashFn } from './types.js'
import { lookup } from './values.js'

/** Per-request state shared by every flag of one evaluation. */
export interface Request {
  input: EvaluationInput
  hash: HashFn
  /** Person properties with missing `$initial_*` twins filled in. */
  person: Record<string, unknown>
  mapping: Record<string, string>
  cohorts: CohortSet
  cohortScope: CohortScope
  /** Evaluated values by flag position; inactive flags start as false so `flag_evaluates_to: false` can match. */
  values: (FlagValue | undefined)[]
  /** Property test results by slot (undefined: not computed yet). */
  memo: (boolean | undefined)[]
  /** The set's batch hasher (null with a caller's own hash function): every flag's hash of the distinct id at once. */
  batch: Sha1Batch | null
  /** Where its results for this request start in `batch.hashes`, by table (`HASH_TABLE`): NOT_RUN until first needed, -1 when the id can't be batched. */
  batched: number[]
}

/** The batch tables of a flag set: rollout hashes (no salt) and variant hashes, both by flag position. */
export const HASH_TABLE = { rollout: 0, variant: 1 } as const
export const NOT_RUN = -2

/** The flag's answer, built directly (no intermediate match object: a request builds hundreds). */
export function matchResult(flag: CompiledFlag, enabled: boolean, variant: string | null, reason: MatchReason, conditionIndex: number | null, payload: unknown): FlagResult {
  return { key: flag.key, enabled, variant, reason: wireReason(reason, conditionIndex), payload, id: flag.id, version: flag.version, failed: false, hasExperiment: flag.hasExperiment }
}

const EMPTY: Record<string, unknown> = Object.freeze({})

function payloadFor(flag: CompiledFlag, variant: string | null): unknown {
  return flag.payloads === null ? null : (lookup(flag.payloads, variant ?? 'true') ?? null)
}

/**
 * The identifier hashed for a condition: the group key for group aggregation; otherwise `$device_id` for
 * device bucketing, then a stored hash-key override, then (continuity flags) the request's anonymous id,
 * then the distinct id. Holdouts skip stored overrides, as PostHog does.
 */
function identifier(flag: CompiledFlag, aggregation: number | null, req: Request, storedOverrides: boolean): string {
  const input = req.input
  if (aggregation !== null) {
    const name = req.mapping[String(aggregation)]
    return (name === undefined ? undefined : lookup(input.groups, name) as string | undefined) ?? ''
  }
  if (flag.deviceBucketing && input.deviceId) return input.deviceId
  if (storedOverrides && input.hashKeyOverrides !== undefined) {
    const o = lookup(input.hashKeyOverrides, flag.key)
    if (typeof o === 'string') return o
  }
  // the request is checked first: it is at hand, the definition is one more object to fetch per hash
  if (input.anonDistinctId !== undefined && flag.definition.ensure_experience_continuity) return input.anonDistinctId
  return input.distinctId
}

/** An empty identifier hashes to 0, which passes every rollout — PostHog's behaviour, kept. */
function flagHash(flag: CompiledFlag, aggregation: number | null, salt: '' | 'variant', req: Request): number {
  const id = identifier(flag, aggregation, req, true)
  if (id === '') return 0
  if (req.batch !== null && id === req.input.distinctId) {
    const table = salt === '' ? HASH_TABLE.rollout : HASH_TABLE.variant
    let at = req.batched[table]
    if (at === NOT_RUN) at = req.batched[table] = req.batch.run(table, id)
    const h = at < 0 ? Number.NaN : req.batch.hashes[at + flag.position]
    if (h === h) return h // NaN: the flag is not in the table
  }
  return req.hash(salt === '' ? flag.hashPrefix + id : flag.hashPrefix + id + salt)
}

function variantFor(flag: CompiledFlag, aggregation: number | null, req: Request): string | null {
  if (flag.variants.length === 0) return null
  const h = flagHash(flag, aggregation, 'variant', req)
  for (const v of flag.variants) if (h < v.upper) return v.key
  return null
}

function dependencyMatches(t: FlagTest, req: Request): boolean {
  if (t.operator !== 'flag_evaluates_to' || t.position < 0) return false
  const value = req.values[t.position]
  if (value === undefined) return false
  if (t.value === true) return value !== false
  if (t.value === false) return value === false
  return typeof t.value === 'string' && value === t.value
}

function propertyMatches(t: ResolvedPropertyTest, req: Request, superMode: boolean): boolean {
  let props: Record<string, unknown>
  if (t.scope === 'person') props = req.person
  else if (superMode) return t.test(undefined, req.input.now) // super conditions read no group, so no shared slot
  else if (t.groupName === null) props = EMPTY
  else props = (lookup(req.input.groupProperties, t.groupName) as Record<string, unknown> | undefined) ?? EMPTY
  const known = req.memo[t.slot]
  if (known !== undefined) return known
  return (req.memo[t.slot] = t.test(lookup(props, t.lookupKey), req.input.now))
}

const enum Outcome {
  NoMatch,
  OutOfRollout,
  Match,
}

const OUTCOME_REASON: readonly MatchReason[] = ['no_condition_match', 'out_of_rollout_bound', 'condition_match']
// scores as numbers for the per-condition comparison (a lookup by reason name costs more than the rest of it)
const OUTCOME_SCORE: readonly number[] = OUTCOME_REASON.map((r) => REASON_SCORE[r])
const NO_GROUP_TYPE_SCORE = REASON_SCORE.no_group_type
const OUT_OF_ROLLOUT_SCORE = REASON_SCORE.out_of_rollout_bound

/** PostHog's `is_condition_match`: filters in order, cohorts after them, then the rollout. */
function conditionMatches(flag: CompiledFlag, c: CompiledCondition, req: Request, superMode = false): Outcome {
  const tests = c.tests
  for (let i = 0; i < tests.length; i++) {
    const t = tests[i]
    const ok = t.kind === 'flag' ? dependencyMatches(t, req) : propertyMatches(t, req, superMode)
    if (!ok) return Outcome.NoMatch
  }
  if (c.cohorts.length > 0) {
    // every referenced cohort is resolved first, so a broken one is an error even after a non-member
    const members = c.cohorts.map((f) => {
      if (f.cohortId === null) throw EVALUATION_ERRORS.cohortFilters()
      return req.cohorts.member(f.cohortId, req.cohortScope)
    })
    for (let i = 0; i < c.cohorts.length; i++) if (!membershipMatches(c.cohorts[i], members[i])) return Outcome.NoMatch
  }
  if (c.rollout === 100) return Outcome.Match
  return flagHash(flag, c.aggregation, '', req) <= c.threshold ? Outcome.Match : Outcome.OutOfRollout
}

function holdoutMatch(flag: CompiledFlag, req: Request): FlagResult | null {
  const h = flag.holdout!
  const inHoldout = h.percentage >= 100 || req.hash(holdoutHashInput(identifier(flag, flag.aggregation, req, false))) <= h.percentage / 100
  if (!inHoldout) return null
  return matchResult(flag, true, h.variant, 'holdout_condition_value', null, payloadFor(flag, h.variant))
}

export function matchFlag(flag: CompiledFlag, req: Request): FlagResult {
  const person = req.person
  if (flag.enrollmentKey !== null) {
    const v = lookup(person, flag.enrollmentKey)
    if (v !== undefined) return matchResult(flag, v === true || v === 'true', null, 'super_condition_value', 0, payloadFor(flag, null))
  } else if (flag.superCondition !== null && flag.superCondition.keys.some((k) => Object.hasOwn(person, k))) {
    const matches = conditionMatches(flag, flag.superCondition.condition, req, true) === Outcome.Match
    return matchResult(flag, matches, null, 'super_condition_value', 0, payloadFor(flag, null))
  }
  if (flag.holdout !== null) {
    const held = holdoutMatch(flag, req)
    if (held !== null) return held
  }
  // the best reason so far; a later condition wins ties
  let best: MatchReason = 'no_group_type'
  let bestScore = NO_GROUP_TYPE_SCORE
  let bestIndex: number | null = null
  let skippedGroups = false
  const conditions = flag.conditions
  for (let i = 0; i < conditions.length; i++) {
    const c = conditions[i]
    let reason: MatchReason
    let score: number
    let outcome = Outcome.NoMatch
    if (c.aggregation === null && flag.deviceBucketing && !req.input.deviceId) {
      reason = 'out_of_rollout_bound'
      score = OUT_OF_ROLLOUT_SCORE
    } else if (c.aggregation !== null && (c.groupName === null || !lookup(req.input.groups, c.groupName))) {
      skippedGroups = true
      reason = 'no_group_type'
      score = NO_GROUP_TYPE_SCORE
    } else {
      outcome = conditionMatches(flag, c, req)
      reason = OUTCOME_REASON[outcome]
      score = OUTCOME_SCORE[outcome]
    }
    if (bestScore <= score) {
      best = reason
      bestScore = score
      bestIndex = c.index
    }
    if (outcome === Outcome.Match) {
      const variant = c.variant ?? variantFor(flag, c.aggregation, req)
      return matchResult(flag, true, variant, best, bestIndex, payloadFor(flag, variant))
    }
    // early_exit: the user met this condition and only its rollout left them out; later ones are not tried.
    if (outcome === Outcome.OutOfRollout && flag.earlyExit) break
  }
  return matchResult(flag, false, null, best === 'no_condition_match' && skippedGroups ? 'no_condition_match_groups_not_evaluated' : best, bestIndex, null)
}

/** What dependent flags see. */
export function resultValue(r: FlagResult): FlagValue {
  return r.enabled ? (r.variant ?? true) : false
}
