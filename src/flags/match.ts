/**
 * One flag for one request, following the current PostHog `get_match`: early-access enrollment (or legacy
 * super groups), then the holdout, then the release conditions in stored order — first match wins, and
 * without a match the highest-ranked reason seen is reported. Pure: everything comes in through `Request`.
 */
import { membershipMatches, type CohortScope, type CohortSet } from './cohorts.js'
import type { CompiledCondition, CompiledFlag, ResolvedPropertyTest } from './compile.js'
import type { FlagTest } from './filters.js'
import { holdoutHashInput } from './hash.js'
import { EVALUATION_ERRORS, REASON_SCORE, type MatchReason } from './reasons.js'
import type { EvaluationInput, FlagValue, HashFn } from './types.js'
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
}

export interface Match {
  matches: boolean
  variant: string | null
  reason: MatchReason
  conditionIndex: number | null
  payload: unknown
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
  if (flag.definition.ensure_experience_continuity && input.anonDistinctId !== undefined) return input.anonDistinctId
  return input.distinctId
}

/** An empty identifier hashes to 0, which passes every rollout — PostHog's behaviour, kept. */
function flagHash(flag: CompiledFlag, aggregation: number | null, salt: '' | 'variant', req: Request): number {
  const id = identifier(flag, aggregation, req, true)
  if (id === '') return 0
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
  else if (t.groupName === null || superMode) props = EMPTY
  else props = (lookup(req.input.groupProperties, t.groupName) as Record<string, unknown> | undefined) ?? EMPTY
  return t.test(lookup(props, t.lookupKey), req.input.now)
}

const enum Outcome {
  NoMatch,
  OutOfRollout,
  Match,
}

const OUTCOME_REASON: readonly MatchReason[] = ['no_condition_match', 'out_of_rollout_bound', 'condition_match']

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

function holdoutMatch(flag: CompiledFlag, req: Request): Match | null {
  const h = flag.holdout!
  const inHoldout = h.percentage >= 100 || req.hash(holdoutHashInput(identifier(flag, flag.aggregation, req, false))) <= h.percentage / 100
  if (!inHoldout) return null
  const variant = h.legacy ? (h.variant ?? variantFor(flag, flag.aggregation, req) ?? 'holdout') : h.variant
  return { matches: true, variant, reason: 'holdout_condition_value', conditionIndex: null, payload: payloadFor(flag, variant) }
}

export function matchFlag(flag: CompiledFlag, req: Request): Match {
  const person = req.person
  if (flag.enrollmentKey !== null) {
    const v = lookup(person, flag.enrollmentKey)
    if (v !== undefined) return { matches: v === true || v === 'true', variant: null, reason: 'super_condition_value', conditionIndex: 0, payload: payloadFor(flag, null) }
  } else if (flag.superCondition !== null && flag.superCondition.keys.some((k) => Object.hasOwn(person, k))) {
    const matches = conditionMatches(flag, flag.superCondition.condition, req, true) === Outcome.Match
    return { matches, variant: null, reason: 'super_condition_value', conditionIndex: 0, payload: payloadFor(flag, null) }
  }
  if (flag.holdout !== null) {
    const held = holdoutMatch(flag, req)
    if (held !== null) return held
  }
  // the best reason so far; a later condition wins ties
  let best: MatchReason = 'no_group_type'
  let bestIndex: number | null = null
  let skippedGroups = false
  const conditions = flag.conditions
  for (let i = 0; i < conditions.length; i++) {
    const c = conditions[i]
    let reason: MatchReason
    let outcome = Outcome.NoMatch
    if (c.aggregation === null && flag.deviceBucketing && !req.input.deviceId) reason = 'out_of_rollout_bound'
    else if (c.aggregation !== null && (c.groupName === null || !lookup(req.input.groups, c.groupName))) {
      skippedGroups = true
      reason = 'no_group_type'
    } else {
      outcome = conditionMatches(flag, c, req)
      reason = OUTCOME_REASON[outcome]
    }
    if (REASON_SCORE[best] <= REASON_SCORE[reason]) {
      best = reason
      bestIndex = c.index
    }
    if (outcome === Outcome.Match) {
      const variant = c.variant ?? variantFor(flag, c.aggregation, req)
      return { matches: true, variant, reason: best, conditionIndex: bestIndex, payload: payloadFor(flag, variant) }
    }
  }
  return { matches: false, variant: null, reason: best === 'no_condition_match' && skippedGroups ? 'no_condition_match_groups_not_evaluated' : best, conditionIndex: bestIndex, payload: null }
}

export function matchValue(m: Match): FlagValue {
  return m.matches ? (m.variant ?? true) : false
}
