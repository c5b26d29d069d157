/**
 * Which of a project's flags a request leaves out, as PostHog's flag service filters them before evaluating
 * (handler/flags.rs): flags limited to another runtime than the caller's. A left-out flag stays in the
 * dependency plan and is `false` to its dependents (`CompiledFlagSet.without`).
 */
import type { CompiledFlagSet } from './flag-set.js'
import { runtimeOf, type EvaluationRuntime } from './request.js'
import type { FlagDefinition } from './types.js'

export interface RequestScope {
  /** The caller's runtime (null: nothing told it): flags limited to another one are left out. */
  runtime: EvaluationRuntime | null
}

export const EVERY_FLAG: RequestScope = { runtime: 'all' }

/**
 * `ProjectFlags.setFor`: `all` itself for a request that leaves nothing out (a project without runtime-limited
 * flags never pays more than that check), else a set made on first use per runtime.
 */
export function scopedSets(all: CompiledFlagSet, flags: readonly FlagDefinition[]): (scope: RequestScope) => CompiledFlagSet {
  const runtimes = flags.map((f) => runtimeOf(f.evaluation_runtime))
  if (runtimes.every((r) => r === 'all')) return () => all
  const sets = new Map<EvaluationRuntime | null, CompiledFlagSet>([['all', all]])
  return ({ runtime }) => {
    let set = sets.get(runtime)
    if (set === undefined) {
      const excluded = new Set<number>()
      runtimes.forEach((r, p) => {
        if (r !== 'all' && r !== runtime) excluded.add(p)
      })
      set = all.without(excluded)
      sets.set(runtime, set)
    }
    return set
  }
}
