/**
 * What experiments read of the project's actions (src/management/actions/): which ids name a live action,
 * for PostHog's `validate_metric_action_ids`, each live action's step events, for the `event` filters
 * (PostHog's `resolve_action_events`), and an action by id for legacy results.
 */
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
