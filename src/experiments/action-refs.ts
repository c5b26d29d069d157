/**
 * What experiments read of the project's actions (src/management/actions/): which ids name a live action,
 * for PostHog's `validate_metric_action_ids`, each live action's step events, for the `event` filters of the
 * experiments and shared metrics lists (PostHog's `filter_metric_group_ids_by_event`), and an action by id for
 * legacy results.
 */
import { isPlainObject } from '../common/json.js'
import { stepEvents, type Actions } from '../management/index.js'
import type { LiveActionIds } from './settings-validation.js'

export type ProjectActions = Pick<Actions, 'live' | 'byId'>

export const liveActionIds =
  (actions: ProjectActions): LiveActionIds =>
  (projectId, ids) =>
    new Set(actions.live(projectId, ids).map((a) => a.id))

/** The step events of the project's live actions among these ids, by id. */
export function actionStepEvents(actions: ProjectActions, projectId: number, ids: Iterable<number>): Map<number, string[]> {
  return new Map(actions.live(projectId, [...ids]).map((a) => [a.id, stepEvents(a)]))
}

/**
 * An ActionsNode's action id as PostHog's `int()` reads it, else null: a boolean is 0 or 1, a number is cut
 * to its whole part, text is digits (underscores between them allowed) with an optional sign and spaces.
 */
function actionId(node: Record<string, unknown>): number | null {
  const { id } = node
  const whole =
    typeof id === 'boolean' ? Number(id)
    : typeof id === 'number' ? Math.trunc(id)
    : typeof id === 'string' && /^\s*[+-]?\d+(_\d+)*\s*$/.test(id) ? Number(id.replaceAll('_', ''))
    : NaN
  // `+ 0` turns -0 into 0, as int() has no negative zero.
  return Number.isSafeInteger(whole) ? whole + 0 : null
}

/** The ids of the ActionsNodes anywhere in a query (what isn't one is skipped). */
export function queryActionIds(value: unknown, into: Set<number> = new Set()): Set<number> {
  if (Array.isArray(value)) for (const item of value) queryActionIds(item, into)
  else if (isPlainObject(value)) {
    const id = value.kind === 'ActionsNode' ? actionId(value) : null
    if (id !== null) into.add(id)
    for (const item of Object.values(value)) queryActionIds(item, into)
  }
  return into
}

/**
 * Whether a query names the event anywhere (PostHog walks the whole metric): in an EventsNode, or through an
 * ActionsNode whose action has a step on it (`actionEvents`: the step events of each live action, by id).
 */
export function queryNamesEvent(value: unknown, event: string, actionEvents: ReadonlyMap<number, readonly string[]> = new Map()): boolean {
  if (Array.isArray(value)) return value.some((item) => queryNamesEvent(item, event, actionEvents))
  if (!isPlainObject(value)) return false
  if (value.kind === 'EventsNode' && value.event === event) return true
  if (value.kind === 'ActionsNode' && actionEvents.get(actionId(value) ?? NaN)?.includes(event)) return true
  return Object.values(value).some((item) => queryNamesEvent(item, event, actionEvents))
}

/**
 * The ids of the groups whose queries name the event (an experiment's inline, secondary and linked shared
 * metrics, or one shared metric), with every action they name resolved to its step events at once.
 */
export function idsNamingEvent(actions: ProjectActions, projectId: number, groups: ReadonlyArray<{ id: number; queries: unknown }>, event: string): Set<number> {
  const actionEvents = actionStepEvents(actions, projectId, queryActionIds(groups.map((g) => g.queries)))
  return new Set(groups.filter((g) => queryNamesEvent(g.queries, event, actionEvents)).map((g) => g.id))
}
