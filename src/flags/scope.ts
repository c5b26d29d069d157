/**
 * Which of a project's flags a request leaves out, as PostHog's flag service filters them before evaluating
 * (handler/flags.rs): flags limited to another runtime than the caller's, and with
 * `only_evaluate_survey_feature_flags` every flag but the surveys' targeting flags. A left-out flag stays in
 * the dependency plan and is `false` to its dependents (`CompiledFlagSet.without`).
 */
import type { CompiledFlagSet } from './flag-set.js'
import { runtimeOf, type EvaluationRuntime } from './request.js'
import type { FlagDefinition } from './types.js'

export interface RequestScope {
  /** The caller's runtime (null: nothing told it): flags limited to another one are left out. */
  runtime: EvaluationRuntime | null
  /** Only flags whose key starts with `survey-targeting-` (the flags surveys create) are evaluated. */
  surveyOnly: boolean
}

export const EVERY_FLAG: RequestScope = { runtime: 'all', surveyOnly: false }

const SURVEY_FLAG_PREFIX = 'survey-targeting-'

/**
 * `ProjectFlags.setFor`: `all` itself for a request that leaves nothing out (a project without runtime-limited
 * flags, asked for every flag, never pays more than that check), else a set made on first use per scope.
 */
export function scopedSets(all: CompiledFlagSet, flags: readonly FlagDefinition[]): (scope: RequestScope) => CompiledFlagSet {
  const runtimes = flags.map((f) => runtimeOf(f.evaluation_runtime))
  const limited = runtimes.some((r) => r !== 'all')
  const sets = new Map<string, CompiledFlagSet>()
  return (scope) => {
    const runtime = limited ? scope.runtime : 'all'
    if (runtime === 'all' && !scope.surveyOnly) return all
    const name = `${runtime} ${scope.surveyOnly}`
    let set = sets.get(name)
    if (set === undefined) {
      const excluded = new Set<number>()
      flags.forEach((f, p) => {
        const otherRuntime = runtime !== 'all' && runtimes[p] !== 'all' && runtimes[p] !== runtime
        if (otherRuntime || (scope.surveyOnly && !f.key.startsWith(SURVEY_FLAG_PREFIX))) excluded.add(p)
      })
      set = all.without(excluded)
      sets.set(name, set)
    }
    return set
  }
}
