/**
 * Flags: PostHog-exact feature flag evaluation as pure functions — no I/O, no clock (`now` is an input), no
 * randomness. Imports nothing outside this folder (Node's `crypto` and `v8` aside), so workers can load it.
 *
 * Usage:
 *
 * ```ts
 * const set = compileFlags(flagRows, { groupTypeMapping: { '0': 'company' }, cohorts, timezone: 'Europe/Paris' })
 * // decide what to load for this request
 * if (set.needsStoredProperties(overrides, flagKeys)) { person row, set.staticCohortIds membership, group rows }
 * if (set.needsHashKeyOverrides(flagKeys) && anonDistinctId) { write/read hash-key overrides for the project's continuity flags }
 * const { flags, errorsWhileComputingFlags } = evaluateAll(set, {
 *   distinctId, personProperties: { ...stored, ...overrides, distinct_id: distinctId },
 *   groups, groupProperties, hashKeyOverrides, anonDistinctId, staticCohortIds, deviceId, now: clock.now(), flagKeys,
 * })
 * ```
 *
 * - `compileFlags(definitions, { groupTypeMapping, cohorts, timezone? }) → CompiledFlagSet` — compile once per
 *   change of the project's flags, cohorts or group types. Pass every flag of the project, inactive ones too
 *   (dependencies on them evaluate them as false); deleted ones are ignored.
 * - `evaluateAll(set, input, { hash? }) → { flags, errorsWhileComputingFlags }` — every active flag (or
 *   `input.flagKeys` and their dependencies). Inactive and deleted flags are absent, as are flags caught in a
 *   dependency cycle (which sets `errorsWhileComputingFlags`, as PostHog does).
 * - `evaluateFlag(set, key, input, { hash? }) → FlagResult | undefined` — one flag even when inactive.
 * - `set.without(positions) → CompiledFlagSet` — the flags at those definition positions left out of every
 *   request (not evaluated nor answered, `false` to their dependents), as PostHog's runtime, survey and
 *   evaluation-tag filters leave them; nothing is compiled again (`scope.ts` picks them per request).
 * - `FlagResult` is PostHog's v4 `flags[key]` content: `{key, enabled, variant, reason: {code, condition_index,
 *   description}, payload, id, version, failed, hasExperiment}`; the HTTP layer wraps `payload`/`id`/`version`/
 *   `has_experiment` in `metadata`.
 * - A flag that cannot be evaluated (unreadable definition, missing or cyclic cohort) is `enabled: false`,
 *   `failed: true`, `reason.code` = PostHog's error label, and `errorsWhileComputingFlags` is true. Nothing
 *   throws out of `evaluateAll`.
 * - `hash` pins bucketing in tests: it maps the hash input (`"<key>.<id><salt>"`, `"holdout-<id>"`) to [0, 1).
 *
 * Semantics follow PostHog's current Rust flag service (see the file comments, and the test vectors under
 * test/unit/flags/). Regexes never run on V8's backtracking engine: see `regex/index.ts`.
 */
import { compileSetData } from './compile.js'
import { CompiledFlagSet } from './flag-set.js'
import type { CompileOptions, EvaluateOptions, EvaluationInput, EvaluationResponse, FlagDefinition, FlagResult } from './types.js'

export function compileFlags(flags: readonly FlagDefinition[], options: CompileOptions): CompiledFlagSet {
  return new CompiledFlagSet(compileSetData(flags, options))
}

export function evaluateAll(set: CompiledFlagSet, input: EvaluationInput, options?: EvaluateOptions): EvaluationResponse {
  return set.evaluateAll(input, options)
}

export function evaluateFlag(set: CompiledFlagSet, key: string, input: EvaluationInput, options?: EvaluateOptions): FlagResult | undefined {
  return set.evaluateFlag(key, input, options)
}

export { CompiledFlagSet } from './flag-set.js'
export { isConfigFormatOne } from './compile.js'
export { sha1Hash } from './hash.js'
export { enableLinearRegex, compileRegex, compileSearchRegex, type SafeRegex } from './regex/index.js'
export { relativeDate, parseDateString, type Instant } from './dates.js'
export type {
  CohortDefinition,
  CompileOptions,
  EvaluateOptions,
  EvaluationInput,
  EvaluationList,
  EvaluationResponse,
  FlagDefinition,
  FlagReason,
  FlagResult,
  FlagValue,
  HashFn,
} from './types.js'
