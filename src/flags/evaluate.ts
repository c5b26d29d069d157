/**
 * The request loop: flags in dependency order, each one's value recorded for the flags that depend on it,
 * and every failure contained to its flag (`enabled: false`, `failed: true`, errors reported) — one broken
 * definition never fails the response.
 */
import { copyObject } from '../common/json.js'
import type { CompiledFlag, CompiledSetData } from './compile.js'
import { INITIAL_PROPERTY } from './compile.js'
import { matchFlag, matchResult, NOT_RUN, resultValue, type Request } from './match.js'
import { sha1Hash } from './hash.js'
import { FlagEvaluationError } from './reasons.js'
import type { Sha1Batch } from './sha1x4/batch.js'
import type { EvaluationInput, FlagResult, FlagValue, HashFn } from './types.js'

/** Fills `$initial_x` from `x` when only the latter is present (ingestion writes the twin later). */
function withInitialProperties(person: Record<string, unknown>, initialKeys: readonly string[]): Record<string, unknown> {
  let out = person
  for (const initial of initialKeys) {
    const source = INITIAL_PROPERTY.get(initial)!
    if (Object.hasOwn(person, initial) || !Object.hasOwn(person, source)) continue
    if (out === person) out = copyObject(person)
    out[initial] = person[source]
  }
  return out
}

/**
 * What a returning person's requests share. Their properties come back as the same object while nothing in
 * them changed, with a holder for this (`personState`; evaluator.ts). For the next request of the same flag
 * set the holder keeps the results of tests of person properties (functions of those alone: a regex, a
 * semver or a substring test then runs once per person, not once per request) and the answers of flags
 * that depend on nothing else (`personAlone` in compile.ts); once all of those are stored, a request over
 * the whole set evaluates only the other flags (`rerun`). Group-property and date tests (`volatileSlots`) are
 * cleared each time.
 */
interface Kept {
  data: CompiledSetData
  person: Record<string, unknown>
  memo: (boolean | undefined)[]
  /** Answers by flag position for `distinctId` (the hashed identifier); only `personAlone` flags are stored. */
  distinctId: string
  answers: (FlagResult | undefined)[]
  /**
   * The flag values after a run over every flag that left each active `personAlone` flag's answer stored: a
   * later such run starts from them and from `answers`, and evaluates only `data.rerun` (38 of the
   * benchmark's 350 flags).
   */
  values: (FlagValue | undefined)[] | null
}

function kept(data: CompiledSetData, input: EvaluationInput, person: Record<string, unknown>): Kept | null {
  const state = input.personState
  // a person given `$initial_*` twins is a copy made for this request
  if (state === undefined || person !== input.personProperties) return null
  let k = state.engine as Kept | undefined
  if (k === undefined || k.data !== data || k.person !== person) {
    k = { data, person, memo: new Array(data.testSlots), distinctId: input.distinctId, answers: new Array(data.flags.length), values: null }
    state.engine = k
    return k
  }
  for (const slot of data.volatileSlots) k.memo[slot] = undefined
  if (k.distinctId !== input.distinctId) {
    k.distinctId = input.distinctId
    k.answers = new Array(data.flags.length)
    k.values = null
  }
  return k
}

/**
 * A kept answer is a copy made here, not the object `matchResult` made: V8 pretenures an allocation site
 * whose objects survive scavenges. Kept answers all survive, so when they came from `matchResult`, the site
 * was pretenured after a few new users, and every answer made for a request afterwards (flags that are not
 * kept, every flag of a new user) was allocated in the old generation and died there: ≈0.5 KB of old-space
 * garbage per 50-flag request, a mark-compact every 1–3 s, each stalling /decide for up to ≈15 ms.
 */
function keptCopy(r: FlagResult): FlagResult {
  return { key: r.key, enabled: r.enabled, variant: r.variant, reason: r.reason, payload: r.payload, id: r.id, version: r.version, failed: r.failed, hasExperiment: r.hasExperiment }
}

function errorResult(flag: CompiledFlag, e: FlagEvaluationError): FlagResult {
  return {
    key: flag.key,
    enabled: false,
    variant: null,
    reason: { code: e.code, condition_index: null, description: e.description },
    payload: null,
    id: flag.id,
    version: flag.version,
    failed: true,
    hasExperiment: flag.hasExperiment,
  }
}

export function missingDependencyResult(flag: CompiledFlag): FlagResult {
  return matchResult(flag, false, null, 'missing_dependency', null, null)
}

export interface Run {
  /** Results by definition position (undefined: not evaluated). */
  results: (FlagResult | undefined)[]
  errors: boolean
}

/**
 * Evaluates the planned flags in order. `only` (plan indexes) restricts the run to requested flags and their
 * dependencies; `force` (a plan index) is evaluated even when inactive, for single-flag diagnostics. `batch`
 * (only when `hash` is SHA-1) computes the distinct id's hashes for the whole set in one call.
 */
export function run(data: CompiledSetData, input: EvaluationInput, hash: HashFn, batch: Sha1Batch | null, only: ReadonlySet<number> | null, force: number | null): Run {
  const person = withInitialProperties(input.personProperties, data.initialKeys)
  const keep = kept(data, input, person)
  // stored hash-key overrides can pick another identifier for any flag, and change without the person; a
  // caller's own hash function (tests) gives other answers than SHA-1
  const answers = keep !== null && input.hashKeyOverrides === undefined && hash === sha1Hash ? keep.answers : null
  const whole = answers !== null && only === null && force === null
  const settled = whole ? keep!.values : null
  const values: (FlagValue | undefined)[] = (settled ?? data.initialValues).slice()
  const req: Request = {
    input,
    hash,
    person,
    mapping: data.mapping,
    cohorts: data.cohorts,
    cohortScope: { person: input.personProperties, staticIds: input.staticCohortIds ?? new Set(), now: input.now, memo: new Map() },
    values,
    memo: keep?.memo ?? new Array(data.testSlots),
    batch,
    batched: [NOT_RUN, NOT_RUN],
  }
  req.cohortScope.person = req.person
  // stored answers are those of active flags, at their positions: what a whole run gives them
  const results: (FlagResult | undefined)[] = settled !== null ? answers!.slice() : new Array(data.flags.length)
  let errors = data.cycleError
  // whether every active personAlone flag's answer is now stored (none failed)
  let allStored = true
  const anyMissing = data.plan.missing.size > 0
  for (const { pi, flag, active } of settled !== null ? data.rerun : data.ordered) {
    if (only !== null && !only.has(pi)) continue
    if (!active && pi !== force) continue
    if (anyMissing && data.plan.missing.has(pi)) {
      values[flag.position] = false
      results[flag.position] = missingDependencyResult(flag)
      continue
    }
    try {
      if (flag.error !== null) throw flag.error
      // not for an inactive flag forced by a diagnostic: `answers` holds what a whole run answers
      const store = answers !== null && flag.personAlone && active ? answers : null
      let r = store?.[flag.position]
      if (r === undefined) {
        r = matchFlag(flag, req)
        if (store !== null) r = store[flag.position] = keptCopy(r)
      }
      values[flag.position] = resultValue(r)
      results[flag.position] = r
    } catch (e) {
      if (!(e instanceof FlagEvaluationError)) throw e
      errors = true
      if (flag.personAlone) allStored = false
      values[flag.position] = undefined
      results[flag.position] = errorResult(flag, e)
    }
  }
  if (whole && settled === null && allStored) keep!.values = values
  return { results, errors }
}
