/**
 * The checks an experiment write (service.ts: create and update) makes against other rows of the project, in
 * its transaction: the ActionsNodes of its metrics name live actions and its metrics name ingested events, its
 * `saved_metrics_ids` name the project's shared metrics, and a running experiment keeps its holdout (a draft's
 * flag takes the one sent). Each runs where the write's order of refusals puts it, as PostHog's serializer has them.
 */
import { pyTruthy } from '../common/drf-fields.js'
import { ValidationError } from '../common/errors.js'
import type { FeatureFlagRecord, Project } from '../management/index.js'
import type { ExperimentWrite } from '../schemas/experiment.js'
import { liveActionIds, type ProjectActions } from './action-refs.js'
import type { ExperimentHoldouts, HoldoutRecord } from './holdouts/index.js'
import type { ExperimentRecord } from './record.js'
import type { RequestedLink, SavedMetricLinks } from './saved-metrics/links.js'
import { checkMetricActions, checkMetricEvents, metricActionIds, type KnownEvents } from './settings-validation.js'

export interface WriteCheckDeps {
  /** The project's actions, which ActionsNodes must name. */
  actions: ProjectActions
  /** The project's ingested event names, which metrics must name (null: not checked). */
  knownEvents: KnownEvents | null
  savedMetrics: SavedMetricLinks
  holdouts: ExperimentHoldouts
  /** The experiment's flag as it is now (an update may have changed it already). */
  flagOf: (experiment: ExperimentRecord) => FeatureFlagRecord | null
}

export class WriteChecks {
  readonly #d: WriteCheckDeps

  constructor(deps: WriteCheckDeps) {
    this.#d = deps
  }

  /** The metric lists a write sends: their actions (checked first), then their events. */
  metrics(project: Project, body: ExperimentWrite, current: ExperimentRecord | null): void {
    this.#metricActions(project, body, current)
    this.#metricEvents(project, body)
  }

  /** The shared metrics a create links (`saved_metrics_ids`), null when it sends none. */
  linksOnCreate(project: Project, body: ExperimentWrite): RequestedLink[] | null {
    return this.#d.savedMetrics.resolve(project.id, body.saved_metrics_ids)
  }

  /** The shared metrics an update links instead of the current ones; undefined when it leaves them. */
  linksOnUpdate(project: Project, body: ExperimentWrite): RequestedLink[] | undefined {
    // As PostHog, `saved_metrics_ids: null` unlinks every shared metric.
    return body.saved_metrics_ids === undefined ? undefined : (this.#d.savedMetrics.resolve(project.id, body.saved_metrics_ids) ?? [])
  }

  /**
   * PostHog's holdout rules on update: a launched experiment keeps its holdout; a draft's flag takes the holdout
   * sent, and is written again from the experiment's holdout when flag config (`parameters`) is sent.
   */
  holdoutOnUpdate(project: Project, current: ExperimentRecord, holdout: HoldoutRecord | null | undefined, body: ExperimentWrite, userId: number): void {
    const draft = current.start_date === null
    if (!draft && holdout !== undefined && (holdout?.id ?? null) !== current.holdout_id) {
      throw new ValidationError('invalid', "Can't update holdout on running Experiment")
    }
    const flag = this.#d.flagOf(current)
    if (!draft || !flag || (holdout === undefined && !pyTruthy(body.parameters))) return
    const holdouts = this.#d.holdouts
    holdouts.setFlagHoldout(project, flag, holdout === undefined ? holdouts.byId(project.id, current.holdout_id) : holdout, userId)
  }

  /**
   * The ActionsNodes of the metric lists a write sends name live actions of the project; on an update, those
   * the experiment already stores are not checked again (PostHog's `known_action_ids`).
   */
  #metricActions(project: Project, body: ExperimentWrite, current: ExperimentRecord | null): void {
    const known = current ? metricActionIds([...(current.metrics ?? []), ...(current.metrics_secondary ?? [])]) : []
    const live = liveActionIds(this.#d.actions)
    // Both lists passed checkSettingFields: lists of metrics, or absent.
    checkMetricActions(body.metrics as unknown[] | undefined, project.id, live, known)
    checkMetricActions(body.metrics_secondary as unknown[] | undefined, project.id, live, known)
  }

  /** The metric lists a write sends name only ingested events, unless it sets `allow_unknown_events`. */
  #metricEvents(project: Project, body: ExperimentWrite): void {
    const known = this.#d.knownEvents
    if (known === null || body.allow_unknown_events === true) return
    checkMetricEvents(body.metrics, project.id, known)
    checkMetricEvents(body.metrics_secondary, project.id, known)
  }
}
