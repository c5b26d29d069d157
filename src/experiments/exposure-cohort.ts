/**
 * `create_exposure_cohort_for_experiment`: a static cohort of the persons exposed since launch (who sent
 * `$feature_flag_called` for the flag, whatever its response, as PostHog's cohort's event filter reads it; or
 * the event or action of the experiment's custom exposure filter, custom-exposure.ts), stored as the
 * experiment's `exposure_cohort`. PostHog's refusals: no start date, or a cohort already made.
 * Membership goes to persons.db, resolved through distinct ids. (PostHog makes a dynamic behavioural cohort,
 * which flags could not use; docs/architecture.md.)
 */
import { AppError, ValidationError } from '../common/errors.js'
import type { CohortObject, Cohorts, Project } from '../management/index.js'
import type { Db } from '../storage/index.js'
import type { EventStore } from '../storage/events/index.js'
import { customExposure } from './custom-exposure.js'
import type { ActionById } from './metrics.js'
import type { ExperimentRecord } from './record.js'
import { ExperimentRepository } from './repository.js'
import type { ExperimentObject } from './serialize.js'
import type { CohortMembers, Experiments } from './service.js'

export interface ExposureCohortDeps {
  experiments: Experiments
  db: Db
  cohorts: Cohorts
  events: EventStore | null
  cohortMembers: CohortMembers | null
  actionById: (teamId: number, id: number) => ReturnType<ActionById>
}

export class ExposureCohorts {
  readonly #deps: ExposureCohortDeps
  readonly #repo: ExperimentRepository

  constructor(deps: ExposureCohortDeps) {
    this.#deps = deps
    this.#repo = new ExperimentRepository(deps.db)
  }

  async create(project: Project, id: number, userId: number): Promise<{ experiment: ExperimentObject; cohort: CohortObject }> {
    const { experiments, events, cohortMembers } = this.#deps
    if (!events || !cohortMembers) throw new AppError('service_unavailable', { detail: 'Exposure cohorts need the event store and persons.db.' })
    const experiment = experiments.record(project, id)
    const flag = experiments.flagOf(experiment)
    if (!flag) throw new ValidationError('invalid', 'Experiment does not have a feature flag')
    checkAllowed(experiment)
    const custom = customExposure(experiment, (actionId) => this.#deps.actionById(project.id, actionId), true)
    const distinctIds = await events.distinctIds({
      teamId: project.id,
      after: Date.parse(experiment.start_date!),
      ...(custom
        ? { event: custom.step.event ?? undefined, properties: custom.step.properties }
        : { event: '$feature_flag_called', properties: [{ key: '$feature_flag', operator: 'exact', value: [flag.key] }] }),
    })
    return this.#deps.db
      .transaction(() => {
        // Read again: the experiment may have changed while the exposures were read.
        const current = experiments.record(project, id)
        checkAllowed(current)
        const cohorts = this.#deps.cohorts
        const cohort = cohorts.create(project.id, { name: `Users exposed to experiment "${current.name}"`, is_static: true }, userId)
        cohorts.setCount(project.id, cohort.id, cohortMembers.replaceMembers(project.id, cohort.id, distinctIds))
        // `exposure_cohort` is excluded from the activity log (PostHog's exclusions), so no entry is written.
        const next = { ...current, exposure_cohort_id: cohort.id }
        this.#repo.update(next)
        return { experiment: experiments.toObject(next), cohort: cohorts.get(project.id, cohort.id) }
      })
      .immediate()
  }
}

function checkAllowed(experiment: ExperimentRecord): void {
  if (experiment.start_date === null) throw new ValidationError('invalid', 'Experiment does not have a start date')
  if (experiment.exposure_cohort_id !== null) throw new ValidationError('invalid', 'Experiment already has an exposure cohort')
}
