/**
 * Experiment use-cases: list, read, create (linking or creating the flag), update (launch, end, archive,
 * soft delete, restore), the exposure cohort, results, and the flag-implementation check. Elsewhere: the
 * lifecycle actions (actions.ts), the checks against other rows (actions, events, shared metrics, holdout:
 * write-checks.ts), and what a create or update does to the flag (flag-on-write.ts). Every write runs in one
 * IMMEDIATE transaction on management.db that validates against the current rows, changes the flag
 * through the FeatureFlags service (its rules and its own activity entries apply; nested calls become
 * savepoints), stores the experiment and writes the experiment's activity entry.
 */
import { iso, type Clock } from '../common/clock.js'
import { AppError, ValidationError } from '../common/errors.js'
import { isPlainObject } from '../common/json.js'
import type { Page } from '../common/pagination.js'
import {
  changesBetween,
  userSummary,
  type Accounts,
  type ActivityLog,
  type CohortObject,
  type Cohorts,
  type FeatureFlagRecord,
  type FeatureFlags,
  type Project,
} from '../management/index.js'
import { experimentCreateSchema, experimentUpdateSchema, type ExperimentWrite } from '../schemas/experiment.js'
import { assertValid, lazyWriteValidators } from '../schemas/index.js'
import type { Db } from '../storage/index.js'
import type { EventStore } from '../storage/events/index.js'
import { activitySnapshot, type ExperimentRecord } from './record.js'
import { ExperimentRepository, parseExperimentListQuery } from './repository.js'
import { ExperimentResults, type ResultPackage } from './results.js'
import { toExperimentObject, type ExperimentObject } from './serialize.js'
import type { StatsRunner } from './stats-runner.js'
import { ExperimentActions } from './actions.js'
import { ExposureCohorts } from './exposure-cohort.js'
import { withoutFlagConfig } from './flag-config.js'
import { applyUpdateToFlag, linkOrCreateFlag, requestedFlagConfig } from './flag-on-write.js'
import { checkSettingFields, settingsOnCreate, settingsOnUpdate } from './settings.js'
import { idsNamingEvent, type ProjectActions } from './action-refs.js'
import type { KnownEvents } from './settings-validation.js'
import { WriteChecks } from './write-checks.js'
import { LinkedFlags } from './linked-flag.js'
import { ExperimentHoldouts, type HoldoutRecord } from './holdouts/index.js'
import { linkedOnCreate, SavedMetricLinks, type RequestedLink } from './saved-metrics/links.js'
import { checkDates, checkName, flagVariants, parseDateField } from './validation.js'

export const EXPERIMENT_SCOPE = 'Experiment'

/** Static cohort membership in persons.db (the persons module's StaticCohortWriter fulfils it). */
export interface CohortMembers {
  replaceMembers(teamId: number, cohortId: number, distinctIds: readonly string[]): number
}

export interface ExperimentDeps {
  db: Db
  clock: Clock
  accounts: Accounts
  featureFlags: FeatureFlags
  cohorts: Cohorts
  activity: ActivityLog
  /** Needed by results, exposure cohorts and the flag-implementation check. */
  events: EventStore | null
  stats: StatsRunner
  cohortMembers: CohortMembers | null
  /** The project's ingested event names, which metrics must name (null: not checked). */
  knownEvents: KnownEvents | null
  /** The project's actions, which ActionsNodes must name. */
  actions: ProjectActions
}

const compiled = lazyWriteValidators<ExperimentWrite>(experimentCreateSchema, experimentUpdateSchema)

export class Experiments {
  readonly #deps: ExperimentDeps
  readonly #repo: ExperimentRepository
  readonly #results: ExperimentResults | null
  readonly flags: LinkedFlags
  readonly holdouts: ExperimentHoldouts
  /** Links to shared metrics (`saved_metrics_ids`, `saved_metrics`). */
  readonly savedMetrics: SavedMetricLinks
  /** Launch, end, pause, resume, reset, archive, unarchive, ship a variant, duplicate. */
  readonly actions: ExperimentActions
  readonly #exposure: ExposureCohorts
  readonly #checks: WriteChecks

  constructor(deps: ExperimentDeps) {
    this.#deps = deps
    this.flags = new LinkedFlags(deps.featureFlags)
    this.holdouts = new ExperimentHoldouts(deps)
    this.savedMetrics = new SavedMetricLinks(deps.db, deps.clock)
    this.actions = new ExperimentActions({ experiments: this, db: deps.db, clock: deps.clock })
    const actionById = (teamId: number, id: number) => deps.actions.byId(teamId, id)
    this.#exposure = new ExposureCohorts({ experiments: this, db: deps.db, cohorts: deps.cohorts, events: deps.events, cohortMembers: deps.cohortMembers, actionById })
    this.#checks = new WriteChecks({
      actions: deps.actions,
      knownEvents: deps.knownEvents,
      savedMetrics: this.savedMetrics,
      holdouts: this.holdouts,
      flagOf: (e) => this.flagOf(e),
    })
    this.#repo = new ExperimentRepository(deps.db)
    this.#results = deps.events ? new ExperimentResults(deps.events, deps.stats, actionById) : null
  }

  /** The live experiment of the project, or 404 (deleted experiments are gone from the API). */
  record(project: Project, id: number): ExperimentRecord {
    const experiment = this.#repo.get(project.id, id)
    if (!experiment) throw new AppError('not_found')
    return experiment
  }

  /** The experiment's flag (deleted flags included: the experiment still names them). */
  holdoutOf(experiment: ExperimentRecord): HoldoutRecord | null {
    return this.holdouts.byId(experiment.team_id, experiment.holdout_id)
  }

  flagOf(experiment: ExperimentRecord): FeatureFlagRecord | null {
    return this.flags.get(experiment.team_id, experiment.feature_flag_id)
  }

  toObject(experiment: ExperimentRecord): ExperimentObject {
    const creator = experiment.created_by_id === null ? null : this.#deps.accounts.userById(experiment.created_by_id)
    const holdout = this.holdouts.byId(experiment.team_id, experiment.holdout_id)
    const object = toExperimentObject(experiment, this.flagOf(experiment), creator ? userSummary(creator) : null, holdout && this.holdouts.toObject(holdout))
    return { ...object, saved_metrics: this.savedMetrics.answer(experiment) }
  }

  get(project: Project, id: number): ExperimentObject {
    return this.toObject(this.record(project, id))
  }

  list(project: Project, query: URLSearchParams, page: Page): { count: number; results: ExperimentObject[] } {
    const filter = parseExperimentListQuery(query)
    if (filter.event !== undefined) filter.ids = idsNamingEvent(this.#deps.actions, project.id, this.#repo.metricQueries(project.id), filter.event)
    const { count, records } = this.#repo.list(project.id, filter, page.limit, page.offset)
    return { count, results: records.map((e) => this.toObject(e)) }
  }

  create(project: Project, body: unknown, userId: number): ExperimentObject {
    return this.#deps.db
      .transaction(() => {
        assertValid(compiled().create, body)
        checkName(body.name)
        checkSettingFields(body)
        this.#checks.metrics(project, body, null)
        const links = this.#checks.linksOnCreate(project, body)
        const start = parseDateField(body.start_date, 'start_date') ?? null
        const end = parseDateField(body.end_date, 'end_date') ?? null
        const holdout = this.holdouts.resolve(project, body.holdout_id) ?? null
        checkDates(start, end)
        const flagId = linkOrCreateFlag(this.flags, project, body, start !== null, userId, holdout)
        const variantKeys = flagVariants(this.flags.get(project.id, flagId)!.filters).map((v) => v.key)
        const now = iso(this.#deps.clock.now())
        return this.insert(project, userId, {
          team_id: project.id,
          name: body.name!,
          description: body.description ?? '',
          feature_flag_id: flagId,
          exposure_cohort_id: null,
          holdout_id: holdout?.id ?? null,
          start_date: start,
          end_date: end,
          parameters: body.parameters === undefined ? {} : withoutFlagConfig(body.parameters)!,
          secondary_metrics: body.secondary_metrics ?? [],
          filters: body.filters ?? {},
          archived: body.archived ?? false,
          deleted: body.deleted ?? false,
          type: body.type ?? 'product',
          created_by_id: userId,
          created_at: now,
          updated_at: now,
          ...settingsOnCreate(body, variantKeys, start, linkedOnCreate(links)),
        }, links)
      })
      .immediate()
  }

  /** Stores a new experiment (its flag already linked) with its shared metric links and logs its creation. */
  insert(project: Project, userId: number, record: Omit<ExperimentRecord, 'id'>, links: readonly RequestedLink[] | null = null): ExperimentObject {
    const id = this.#repo.insert(record)
    if (links) this.savedMetrics.create(id, links)
    this.#log(project, userId, id, 'created', record.name, [])
    this.#deps.featureFlags.changedElsewhere(project.id)
    return this.toObject({ ...record, id })
  }

  update(project: Project, id: number, body: unknown, userId: number): ExperimentObject {
    return this.#deps.db
      .transaction(() => {
        // As PostHog, a PATCH that sets `deleted: false` reaches a deleted experiment: it restores it.
        const restoring = isPlainObject(body) && body.deleted === false
        const current = restoring ? this.#repo.getAny(project.id, id) : this.#repo.get(project.id, id)
        if (!current) throw new AppError('not_found')
        const flag = this.flagOf(current)
        assertValid(compiled().update, body)
        checkName(body.name)
        checkSettingFields(body)
        this.#checks.metrics(project, body, current)
        const links = this.#checks.linksOnUpdate(project, body)
        const start = parseDateField(body.start_date, 'start_date')
        const end = parseDateField(body.end_date, 'end_date')
        const holdout = this.holdouts.resolve(project, body.holdout_id)
        const next: ExperimentRecord = {
          ...current,
          name: body.name ?? current.name,
          description: body.description === undefined ? current.description : (body.description ?? ''),
          start_date: start === undefined ? current.start_date : start,
          end_date: end === undefined ? current.end_date : end,
          parameters: body.parameters === undefined ? current.parameters : withoutFlagConfig(body.parameters)!,
          secondary_metrics: body.secondary_metrics === undefined ? current.secondary_metrics : (body.secondary_metrics ?? []),
          filters: body.filters ?? current.filters,
          archived: body.archived ?? current.archived,
          deleted: body.deleted ?? current.deleted,
          holdout_id: holdout === undefined ? current.holdout_id : (holdout?.id ?? null),
        }
        checkDates(next.start_date, next.end_date)
        const config = requestedFlagConfig(body)
        if (flag) applyUpdateToFlag(this.flags, project, current, body, config, flag, userId)
        this.#checks.holdoutOnUpdate(project, current, holdout, body, userId)
        const variantKeys = flag ? flagVariants(this.flagOf(current)!.filters).map((v) => v.key) : []
        const variantsSent = config.parameters?.feature_flag_variants !== undefined
        Object.assign(next, settingsOnUpdate(body, current, variantKeys, variantsSent, next.start_date, this.savedMetrics.onUpdate(project.id, current.id, links)))
        if (links !== undefined) this.savedMetrics.sync(current.id, links)
        return this.commit(project, userId, current, next)
      })
      .immediate()
  }

  /** Soft delete (DELETE answers 204): the experiment disappears from the API; its flag is left alone. */
  delete(project: Project, id: number, userId: number): void {
    this.#deps.db
      .transaction(() => {
        const current = this.record(project, id)
        this.commit(project, userId, current, { ...current, deleted: true })
      })
      .immediate()
  }

  /** Stores the experiment's new state with its activity entry; a change that changes nothing writes nothing. */
  commit(project: Project, userId: number, current: ExperimentRecord, next: ExperimentRecord): ExperimentObject {
    const changes = changesBetween(EXPERIMENT_SCOPE, activitySnapshot(current), activitySnapshot(next))
    // The holdout is left out of the activity log (PostHog's exclusions), yet changing it is a change.
    if (changes.length === 0 && next.holdout_id === current.holdout_id) return this.toObject(current)
    next.updated_at = iso(this.#deps.clock.now())
    this.#repo.update(next)
    const activity = current.deleted === next.deleted ? 'updated' : next.deleted ? 'deleted' : 'restored'
    this.#log(project, userId, next.id, activity, next.name, changes)
    // The flag's has_experiment follows its live experiments.
    if (activity !== 'updated') this.#deps.featureFlags.changedElsewhere(project.id)
    return this.toObject(next)
  }

  /** PostHog's `create_exposure_cohort_for_experiment` (exposure-cohort.ts). */
  createExposureCohort(project: Project, id: number, userId: number): Promise<{ experiment: ExperimentObject; cohort: CohortObject }> {
    return this.#exposure.create(project, id, userId)
  }

  async results(project: Project, id: number): Promise<ResultPackage> {
    const experiment = this.record(project, id)
    return this.#requireResults().primary(experiment, this.#requireFlag(experiment), this.#deps.clock.now())
  }

  async secondaryResults(project: Project, id: number, metricId: string | null): Promise<ResultPackage> {
    const experiment = this.record(project, id)
    return this.#requireResults().secondary(experiment, this.#requireFlag(experiment), metricId, this.#deps.clock.now())
  }

  #requireResults(): ExperimentResults {
    if (!this.#results) throw new AppError('service_unavailable', { detail: 'Experiment results need the event store.' })
    return this.#results
  }

  #requireFlag(experiment: ExperimentRecord): FeatureFlagRecord {
    const flag = this.flagOf(experiment)
    if (!flag) throw new ValidationError('invalid', 'Experiment does not have a feature flag')
    return flag
  }

  /** Running experiments (launched, not ended, not archived) whose flag no `$feature_flag_called` event ever named. */
  async requiringFlagImplementation(project: Project): Promise<ExperimentObject[]> {
    const events = this.#deps.events
    const running = this.#repo.running(project.id).map((e) => ({ experiment: e, flag: this.flagOf(e) }))
    if (running.length === 0) return []
    const keys = [...new Set(running.flatMap((r) => (r.flag ? [r.flag.key] : [])))]
    const seen = new Set<string>()
    if (events && keys.length > 0) {
      const rows = await events.breakdown({
        teamId: project.id,
        event: '$feature_flag_called',
        properties: [{ key: '$feature_flag', operator: 'exact', value: keys }],
        breakdown: '$feature_flag',
        math: 'events',
      })
      for (const row of rows) if (row.value !== null) seen.add(row.value)
    }
    return running.filter((r) => !r.flag || !seen.has(r.flag.key)).map((r) => this.toObject(r.experiment))
  }

  #log(project: Project, userId: number, id: number, activity: string, name: string, changes: ReturnType<typeof changesBetween>): void {
    this.#deps.activity.log({
      teamId: project.id,
      organizationId: project.organization_id,
      userId,
      scope: EXPERIMENT_SCOPE,
      itemId: id,
      activity,
      name,
      changes,
    })
  }
}
