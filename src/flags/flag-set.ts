/**
 * `CompiledFlagSet`: a project's flags compiled once, plus what a caller needs to know before evaluating —
 * which stored data to load (person row, static cohorts, groups, hash-key overrides) — and the two entry
 * points that evaluate it.
 */
import { collectUsage, compileSetData, type CompiledFlag, type CompiledSetData } from './compile.js'
import { missingDependencyResult, run } from './evaluate.js'
import { sha1Hash } from './hash.js'
import type { CompileOptions, EvaluateOptions, EvaluationInput, EvaluationResponse, FlagDefinition, FlagResult } from './types.js'

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

  constructor(flags: readonly FlagDefinition[], options: CompileOptions) {
    const data = compileSetData(flags, options)
    this.#data = data
    for (const p of data.planFlags) this.#byKey.set(data.flags[p].key, p)
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
      .map((p) => this.#data.flags[p])
      .filter((f) => f.definition.active)
  }

  /**
   * Whether stored person (and group) properties are needed, by PostHog's rule: some condition rolled out
   * above 0% has a cohort filter or a property filter whose key the request's overrides lack. When false,
   * evaluate with the overrides alone and no static cohort membership — exactly what PostHog does.
   */
  needsStoredProperties(personOverrides: Record<string, unknown>, flagKeys?: readonly string[]): boolean {
    return this.#active(flagKeys).some((f) =>
      f.conditions.some((c) => c.rollout > 0 && (c.cohorts.length > 0 || c.tests.some((t) => t.kind === 'property' && !Object.hasOwn(personOverrides, t.key)))),
    )
  }

  /** Whether any continuity flag's value depends on its hash (partial rollout, variants, holdout): load overrides then. */
  needsHashKeyOverrides(flagKeys?: readonly string[]): boolean {
    const continuity = new Set(this.continuityFlagKeys)
    return this.#active(flagKeys).some((f) => continuity.has(f.key) && (f.variants.length > 0 || f.holdout !== null || f.conditions.some((c) => c.rollout !== 100)))
  }

  evaluateAll(input: EvaluationInput, options?: EvaluateOptions): EvaluationResponse {
    const { results, errors } = run(this.#data, input, options?.hash ?? sha1Hash, this.#needed(input.flagKeys), null)
    const flags: Record<string, FlagResult> = {}
    for (const r of results) if (r !== undefined) flags[r.key] = r
    return { flags, errorsWhileComputingFlags: errors }
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
    return run(this.#data, input, options?.hash ?? sha1Hash, only, pi).results[p]
  }
}
