/**
 * Pool task: evaluate a large flag set. The main thread prepared the input (stored properties, GeoIP,
 * continuity overrides); the worker compiles the same revision from its own read-only connections and
 * keeps it cached, so only the input crosses the thread boundary.
 */
import { evaluateAll } from '../src/flags/index.js'
import type { RequestScope } from '../src/flags/scope.js'
import type { EvaluationInput, EvaluationResponse } from '../src/flags/types.js'
import { flagContext } from './context.js'

export interface EvaluateFlagsTask {
  teamId: number
  revision: string
  scope: RequestScope
  input: EvaluationInput
}

export function evaluateFlags(task: EvaluateFlagsTask): EvaluationResponse {
  const cache = flagContext().cache
  const project = cache.getAt(task.teamId, task.revision) ?? cache.get(task.teamId)
  return evaluateAll(project.setFor(task.scope), task.input)
}
