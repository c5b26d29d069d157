/**
 * `CompiledFlagSet`: a project's flags compiled once, plus what a caller needs to know before evaluating —
 * which stored data to load (person row, static cohorts, groups, hash-key overrides) — and the two entry
 * points that evaluate it.
 */
import { collectUsage, excludeFlags, type CompiledFlag, type CompiledSetData } from './compile.js'
import { missingDependencyResult, run } from './evaluate.js'
import { sha1Hash } from './hash.js'
import { HASH_TABLE } from './match.js'
import { Sha1Batch, type BatchTable } from './sha1x4/batch.js'
import type { EvaluateOptions, EvaluationInput, EvaluationList, EvaluationResponse, FlagResult, HashFn } from './types.js'

/** Results by key; a later flag with the same key replaces an earlier one (in its place). */
function byKey(results: readonly (FlagResult | undefined)[]): Record<string, FlagResult> {
  const flags: Record<string, FlagResult> = {}
  for (const r of results) if (r !== undefined) flags[r.key] = r
  return flags
}

/**
 * PostHog's rule for loading stored properties (`FlagFilters::requires_db_properties`), split into its
 * request-independent part. Always: a flag aggregated by a group (at the flag or a condition), or a
 * condition rolled out above 0% with a cohort filter. When the request's overrides lack the key: an
 * early-access flag's enrollment property, and the property filters of conditions (the legacy super
 * condition included) rolled out above 0%.
 */
interface StoredNeed {
  always: boolean
  keys: string[]
}

function storedNeed(flags: readonly CompiledFlag[]): StoredNeed {
  const keys = new Set<string>()
  let always = false
  for (const f of flags) {
    if (f.aggregation !== null || f.conditions.some((c) => c.aggregation !== null)) always = true
    if (f.enrollmentKey !== null) keys.add(f.enrollmentKey)
    for (const c of f.superCondition === null ? f.conditions : [...f.conditions, f.superCondition.condition]) {
      if (c.rollout <= 0) continue
      if (c.cohorts.length > 0) always = true
      for (const t of c.tests) if (t.kind === 'property') keys.add(t.key)
    }
  }
  return { always, keys: [...keys] }
}

/**
 * The batch tables (`HASH_TABLE` order) over the flags that can hash the distinct id: active, readable, not
 * bucketed by device, not left out of the set; rollout for a person condition below 100%, variant for
 * multivariate flags.
 */
function hashBatch(flags: readonly CompiledFlag[], excluded: ReadonlySet<number>): Sha1Batch | null {
  const hashesId = (f: CompiledFlag): boolean => f.definition.active && f.error === null && !f.deviceBucketing && !excluded.has(f.position)
  const tables: BatchTable[] = []
  tables[HASH_TABLE.rollout] = { salt: '', prefixes: flags.map((f) => (hashesId(f) && f.conditions.some((c) => c.aggregation === null && c.rollout < 100) ? f.hashPrefix : null)) }
  tables[HASH_TABLE.variant] = { salt: 'variant', prefixes: flags.map((f) => (hashesId(f) && f.variants.length > 0 ? f.hashPrefix : null)) }
  return Sha1Batch.create(tables)
}

export class CompiledFlagSet {
  readonly #data: CompiledSetData
  readonly #byKey = new Map<string, number>()
  /** Active, non-deleted flags: what `evaluateAll` answers for. */
  readonly flagCount: number
  /** Person property keys any active flag (or a cohort it uses) reads. */
  readonly personPropertyKeys: ReadonlySet<string>
  /** Group type indexes any active flag aggregates by or filters on. */
  readonly groupTypeIndexes: ReadonlySet<number>
  /** Static cohorts the active flags use, directly or through other cohorts: load the person's membership of these. */
  readonly staticCohortIds: ReadonlySet<number>
  /** Active flags whose buckets follow a person across distinct ids (`ensure_experience_continuity`). */
  readonly continuityFlagKeys: readonly string[]
  /** Definitions PostHog could not read (they evaluate as failed) and configuration fallbacks. */
  readonly warnings: readonly { key: string; message: string }[]
  /** The zone naive and relative dates are read in (the project's, or UTC). */
  readonly timezone: string

  /** Keys are unique and an object keeps them in insertion order (no array-index keys, no `__proto__`). */
  readonly #keysInOrder: boolean
  readonly #storedNeed: StoredNeed
  readonly #overridesNeeded: boolean
  /**
   * Made on the first SHA-1 evaluation (a set compiled only for local evaluation or listing never needs it).
   * A set made by `without` has its own, over the flags it evaluates: sharing one would hash the left-out
   * flags too (≈90 ns each, a request).
   */
  #batch: Sha1Batch | null | undefined

  constructor(data: CompiledSetData) {
    this.#data = data
    const planned = data.planFlags.filter((p) => !data.excluded.has(p))
    for (const p of planned) this.#byKey.set(data.flags[p].key, p)
    this.#keysInOrder = this.#byKey.size === planned.length && ![...this.#byKey.keys()].some((k) => k === '__proto__' || /^(0|[1-9][0-9]*)$/.test(k))
    const active = this.#active(undefined)
    this.flagCount = active.length
    const usage = collectUsage(active, data.cohorts)
    this.personPropertyKeys = usage.personKeys
    this.groupTypeIndexes = usage.groupIndexes
    const statics = new Set(data.cohorts.staticIds)
    this.staticCohortIds = new Set([...usage.cohortIds].filter((id) => statics.has(id)))
    this.continuityFlagKeys = active.filter((f) => f.definition.ensure_experience_continuity && f.aggregation === null && !f.deviceBucketing).map((f) => f.key)
    this.warnings = data.warnings
    this.timezone = data.timezone
    // what every request without `flag_keys` asks, answered once
    this.#storedNeed = storedNeed(active)
    this.#overridesNeeded = this.#needsOverrides(active)
  }

  /**
   * This set with the flags at `excluded` (definition positions) left out of every request, as PostHog's
   * filters by runtime, survey and evaluation tags leave them: absent from answers, `false` to their
   * dependents (`excludeFlags`). Nothing is compiled again.
   */
  without(excluded: ReadonlySet<number>): CompiledFlagSet {
    return new CompiledFlagSet(excludeFlags(this.#data, excluded))
  }

  get usesGroups(): boolean {
    return this.groupTypeIndexes.size > 0
  }

  /** Group type names (through the mapping) the active flags use. */
  get groupTypeNames(): string[] {
    return [...this.groupTypeIndexes].map((i) => this.#data.mapping[String(i)]).filter((n): n is string => n !== undefined)
  }

  hasFlag(key: string): boolean {
    return this.#byKey.has(key)
  }

  /** Plan indexes of `keys` and everything they depend on; null means all. */
  #needed(keys: readonly string[] | undefined): Set<number> | null {
    if (keys === undefined) return null
    const out = new Set<number>()
    for (const k of keys) {
      const p = this.#byKey.get(k)
      if (p === undefined) continue
      const pi = this.#data.planIndex.get(p)!
      out.add(pi)
      for (const d of this.#data.plan.transitive.get(pi) ?? []) out.add(d)
    }
    return out
  }

  #active(keys: readonly string[] | undefined): CompiledFlag[] {
    const needed = this.#needed(keys)
    return this.#data.planFlags
      .filter((_, pi) => needed === null || needed.has(pi))
      .filter((p) => !this.#data.excluded.has(p))
      .map((p) => this.#data.flags[p])
      .filter((f) => f.definition.active)
  }

  /**
   * Whether stored person (and group) properties are needed, by PostHog's rule: some condition rolled out
   * above 0% has a cohort filter or a property filter whose key the request's overrides lack. When false,
   * evaluate with the overrides alone and no static cohort membership — exactly what PostHog does.
   */
  needsStoredProperties(personOverrides: Record<string, unknown>, flagKeys?: readonly string[]): boolean {
    const need = flagKeys === undefined ? this.#storedNeed : storedNeed(this.#active(flagKeys))
    return need.always || need.keys.some((k) => !Object.hasOwn(personOverrides, k))
  }

  /** Whether any continuity flag's value depends on its hash (partial rollout, variants, holdout): load overrides then. */
  needsHashKeyOverrides(flagKeys?: readonly string[]): boolean {
    return flagKeys === undefined ? this.#overridesNeeded : this.#needsOverrides(this.#active(flagKeys))
  }

  #needsOverrides(flags: readonly CompiledFlag[]): boolean {
    const continuity = new Set(this.continuityFlagKeys)
    return flags.some((f) => continuity.has(f.key) && (f.variants.length > 0 || f.holdout !== null || f.conditions.some((c) => c.rollout !== 100)))
  }

  /** The hash and, for SHA-1, the batch that goes with it. */
  #hashing(options: EvaluateOptions | undefined): [HashFn, Sha1Batch | null] {
    if (options?.hash !== undefined && options.hash !== sha1Hash) return [options.hash, null]
    if (this.#batch === undefined) this.#batch = hashBatch(this.#data.flags, this.#data.excluded)
    return [sha1Hash, this.#batch]
  }

  evaluateAll(input: EvaluationInput, options?: EvaluateOptions): EvaluationResponse {
    const { results, errors } = run(this.#data, input, ...this.#hashing(options), this.#needed(input.flagKeys), null)
    return { flags: byKey(results), errorsWhileComputingFlags: errors }
  }

  /**
   * `evaluateAll` as a list in the order of `Object.values(flags)`, without building the keyed object (a
   * dictionary-mode object of hundreds of keys costs more than the rest of a small request): what the
   * /decide answers are made from.
   */
  evaluateList(input: EvaluationInput, options?: EvaluateOptions): EvaluationList {
    const { results, errors } = run(this.#data, input, ...this.#hashing(options), this.#needed(input.flagKeys), null)
    if (!this.#keysInOrder) return { results: Object.values(byKey(results)), errorsWhileComputingFlags: errors }
    const list: FlagResult[] = []
    for (let i = 0; i < results.length; i++) if (results[i] !== undefined) list.push(results[i]!)
    return { results: list, errorsWhileComputingFlags: errors }
  }

  /**
   * One flag whether or not it is active (for diagnostics such as evaluation reasons); its dependencies
   * follow the normal rules. Undefined for an unknown or deleted key.
   */
  evaluateFlag(key: string, input: EvaluationInput, options?: EvaluateOptions): FlagResult | undefined {
    const p = this.#byKey.get(key)
    if (p === undefined) return undefined
    const pi = this.#data.planIndex.get(p)!
    if (this.#data.plan.cyclic.has(pi)) return missingDependencyResult(this.#data.flags[p])
    const only = new Set([pi, ...(this.#data.plan.transitive.get(pi) ?? [])])
    // one flag (and its dependencies) needs a few hashes: a whole-set batch per call would be the n² of
    // evaluation_reasons, which calls this for every flag
    return run(this.#data, input, options?.hash ?? sha1Hash, null, only, pi).results[p]
  }
}
