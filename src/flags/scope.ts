/**
 * Which of a project's flags a request leaves out, as PostHog's flag service filters them before evaluating
 * (handler/flags.rs): flags limited to another runtime than the caller's, and with
 * `only_evaluate_survey_feature_flags` every flag but the surveys' targeting flags, and with
 * `evaluation_environments` the flags with evaluation tags that name none of them. A left-out flag stays in
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
  /** The request's `evaluation_environments`; none: evaluation tags leave nothing out. */
  environments: readonly string[]
}

export const EVERY_FLAG: RequestScope = { runtime: 'all', surveyOnly: false, environments: [] }

/**
 * Sets kept per project: environments are the caller's own words, so the subsets of tagged flags they leave
 * out are few in practice but unbounded; past this many the kept sets are dropped and made again.
 */
const MAX_SETS = 16
const NONE: readonly number[] = []

const SURVEY_FLAG_PREFIX = 'survey-targeting-'

/**
 * `ProjectFlags.setFor`: `all` itself for a request that leaves nothing out (a project without runtime-limited
 * flags, asked for every flag, never pays more than that check), else a set made on first use per scope.
 */
export function scopedSets(all: CompiledFlagSet, flags: readonly FlagDefinition[]): (scope: RequestScope) => CompiledFlagSet {
  const runtimes = flags.map((f) => runtimeOf(f.evaluation_runtime))
  const limited = runtimes.some((r) => r !== 'all')
  const tagged: number[] = []
  flags.forEach((f, p) => {
    if ((f.evaluation_tags?.length ?? 0) > 0) tagged.push(p)
  })
  const sets = new Map<string, CompiledFlagSet>()
  return (scope) => {
    const runtime = limited ? scope.runtime : 'all'
    const outByTags = scope.environments.length === 0 || tagged.length === 0 ? NONE : tagged.filter((p) => !flags[p].evaluation_tags!.some((t) => scope.environments.includes(t)))
    if (runtime === 'all' && !scope.surveyOnly && outByTags.length === 0) return all
    const name = `${runtime} ${scope.surveyOnly} ${outByTags.join(',')}`
    let set = sets.get(name)
    if (set === undefined) {
      const excluded = new Set<number>(outByTags)
      flags.forEach((f, p) => {
        const otherRuntime = runtime !== 'all' && runtimes[p] !== 'all' && runtimes[p] !== runtime
        if (otherRuntime || (scope.surveyOnly && !f.key.startsWith(SURVEY_FLAG_PREFIX))) excluded.add(p)
      })
      set = all.without(excluded)
      if (sets.size >= MAX_SETS) sets.clear()
      sets.set(name, set)
    }
    return set
  }
}
