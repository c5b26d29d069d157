/**
 * PostHog's experiment lifecycle actions (products/experiments/backend/experiment_service.py): launch, end,
 * pause, resume, reset, archive, unarchive, ship a variant, duplicate. Each runs in one IMMEDIATE
 * transaction, refuses with PostHog's messages when the experiment is in the wrong state, changes the
 * flag through the FeatureFlags service and stores the experiment through `Experiments.commit` (its
 * activity entry). `end` and `ship_variant` store the conclusion they are sent.
 */
import { iso, type Clock } from '../common/clock.js'
import { ValidationError } from '../common/errors.js'
import type { JsonObject } from '../common/json.js'
import type { Project } from '../management/index.js'
import {
  EXPERIMENT_CONCLUSIONS,
  experimentArchiveSchema,
  experimentDuplicateSchema,
  experimentEndSchema,
  experimentShipVariantSchema,
  type ExperimentActionWrite,
} from '../schemas/experiment.js'
import { assertValid, createAjv, type ValidateFunction } from '../schemas/index.js'
import type { Db } from '../storage/index.js'
import { checkVariants, storedVariants, withoutFlagConfig } from './flag-config.js'
import { fingerprintContext, withFingerprints } from './metric-list.js'
import type { ExperimentRecord } from './record.js'
import { linkedOnCreate } from './saved-metrics/links.js'
import { clonedSettings, settingsOnCreate } from './settings.js'
import { ExperimentRepository } from './repository.js'
import type { ExperimentObject } from './serialize.js'
import type { Experiments } from './service.js'
import { checkEligibleFlag, drfBoolean } from './validation.js'

type ActionBody = 'end' | 'ship' | 'archive' | 'duplicate'
const SCHEMAS: Record<ActionBody, object> = {
  end: experimentEndSchema,
  ship: experimentShipVariantSchema,
  archive: experimentArchiveSchema,
  duplicate: experimentDuplicateSchema,
}
let validators: Map<ActionBody, ValidateFunction<ExperimentActionWrite>> | undefined

/** Compiled on first use, once per process. */
function validator(name: ActionBody): ValidateFunction<ExperimentActionWrite> {
  if (!validators) {
    const ajv = createAjv()
    validators = new Map(Object.entries(SCHEMAS).map(([key, schema]) => [key as ActionBody, ajv.compile<ExperimentActionWrite>(schema)]))
  }
  return validators.get(name)!
}

/** The body of an action; PostHog's action serializers read an absent body as `{}`. */
function parseBody(name: ActionBody, body: unknown): ExperimentActionWrite {
  const value = body === undefined || body === null ? {} : body
  assertValid(validator(name), value)
  return value
}

const fail = (detail: string, attr: string | null = null, code = 'invalid') => new ValidationError(code, detail, attr)

function checkConclusion(body: ExperimentActionWrite): void {
  const conclusion = body.conclusion
  if (typeof conclusion === 'string' && !(EXPERIMENT_CONCLUSIONS as readonly string[]).includes(conclusion)) {
    throw fail(`"${conclusion}" is not a valid choice.`, 'conclusion', 'invalid_choice')
  }
}

export interface ActionDeps {
  experiments: Experiments
  db: Db
  clock: Clock
}

export class ExperimentActions {
  readonly #deps: ActionDeps
  readonly #experiments: Experiments
  readonly #repo: ExperimentRepository

  constructor(deps: ActionDeps) {
    this.#deps = deps
    this.#experiments = deps.experiments
    this.#repo = new ExperimentRepository(deps.db)
  }

  #now(): string {
    return iso(this.#deps.clock.now())
  }

  #run(fn: () => ExperimentObject): ExperimentObject {
    return this.#deps.db.transaction(fn).immediate()
  }

  #save(project: Project, userId: number, current: ExperimentRecord, change: Partial<ExperimentRecord>): ExperimentObject {
    return this.#experiments.commit(project, userId, current, { ...current, ...change })
  }

  #flag(experiment: ExperimentRecord) {
    const flag = this.#experiments.flagOf(experiment)
    if (!flag) throw fail('Experiment does not have a feature flag linked.')
    return flag
  }

  /** A draft goes live now: its flag must be live and eligible, and is switched on. */
  launch(project: Project, id: number, userId: number): ExperimentObject {
    return this.#run(() => {
      const current = this.#experiments.record(project, id)
      if (current.start_date !== null) throw fail('Experiment has already been launched.')
      const flag = this.#flag(current)
      if (flag.deleted) throw fail('Experiment cannot be launched because its feature flag has been deleted.')
      checkEligibleFlag(flag)
      this.#experiments.flags.setActive(project, flag, true, userId)
      const start = this.#now()
      // PostHog's launch refingerprints without `only_count_matured_users` (it passes the default, false).
      const ctx = { ...fingerprintContext(current, start), onlyMatured: false }
      const refingerprint = (list: JsonObject[] | null) => (list && list.length > 0 ? withFingerprints(list, ctx) : list)
      return this.#save(project, userId, current, { start_date: start, metrics: refingerprint(current.metrics), metrics_secondary: refingerprint(current.metrics_secondary) })
    })
  }

  /** Freezes the results window at now; the flag keeps serving its variants. */
  end(project: Project, id: number, body: unknown, userId: number): ExperimentObject {
    const parsed = parseBody('end', body)
    checkConclusion(parsed)
    return this.#run(() => {
      const current = this.#experiments.record(project, id)
      this.#checkRunning(current)
      // As PostHog, ending sets the conclusion to what was sent, null included.
      return this.#save(project, userId, current, { end_date: this.#now(), conclusion: parsed.conclusion ?? null, conclusion_comment: parsed.conclusion_comment ?? null })
    })
  }

  #checkRunning(experiment: ExperimentRecord): void {
    if (experiment.start_date === null) throw fail('Experiment has not been launched yet.')
    if (experiment.end_date !== null) throw fail('Experiment has already ended.')
  }

  /** Pause and resume switch the flag off and on; the experiment itself does not change. */
  setPaused(project: Project, id: number, paused: boolean, userId: number): ExperimentObject {
    return this.#run(() => {
      const current = this.#experiments.record(project, id)
      this.#checkRunning(current)
      const flag = this.#flag(current)
      if (paused && !flag.active) throw fail('Experiment is already paused.')
      if (!paused && flag.active) throw fail('Experiment is not paused.')
      this.#experiments.flags.setActive(project, flag, !paused, userId)
      return this.#experiments.toObject(current)
    })
  }

  /** Back to draft: no dates, no conclusion, not archived. The flag is left as it is, so users keep their variants. */
  reset(project: Project, id: number, userId: number): ExperimentObject {
    return this.#run(() => {
      const current = this.#experiments.record(project, id)
      if (current.start_date === null) throw fail('Experiment is already in draft state.')
      return this.#save(project, userId, current, { start_date: null, end_date: null, archived: false, conclusion: null, conclusion_comment: null })
    })
  }

  /**
   * Archives an ended experiment. With `disable_feature_flag` its flag is also switched off, unless another
   * live, unarchived experiment uses it (PostHog also archives the flag; skylark's flags have no archive).
   */
  archive(project: Project, id: number, body: unknown, userId: number): ExperimentObject {
    const disable = drfBoolean(parseBody('archive', body).disable_feature_flag, 'disable_feature_flag')
    return this.#run(() => {
      const current = this.#experiments.record(project, id)
      if (current.archived) throw fail('Experiment is already archived.')
      if (current.start_date === null || current.end_date === null) throw fail('Experiment must be ended before it can be archived.')
      const archived = this.#save(project, userId, current, { archived: true })
      const flag = this.#experiments.flagOf(current)
      if (disable && flag && !flag.deleted && flag.active && !this.#repo.othersUsingFlag(project.id, flag.id, current.id)) {
        this.#experiments.flags.setActive(project, flag, false, userId)
        return this.#experiments.get(project, id)
      }
      return archived
    })
  }

  unarchive(project: Project, id: number, userId: number): ExperimentObject {
    return this.#run(() => {
      const current = this.#experiments.record(project, id)
      if (!current.archived) throw fail('Experiment is not archived.')
      return this.#save(project, userId, current, { archived: false })
    })
  }

  /**
   * Rolls one variant out to 100% of the split (see LinkedFlags.ship) and ends the experiment if it is
   * still running; an ended one only has its flag rewritten ("end first, ship later").
   */
  shipVariant(project: Project, id: number, body: unknown, userId: number): ExperimentObject {
    const parsed = parseBody('ship', body)
    const variantKey = parsed.variant_key!
    if (variantKey.trim() === '') throw fail('This field may not be blank.', 'variant_key', 'blank')
    const everyone = drfBoolean(parsed.release_to_everyone, 'release_to_everyone')
    checkConclusion(parsed)
    return this.#run(() => {
      const current = this.#experiments.record(project, id)
      if (current.start_date === null) throw fail('Experiment has not been launched yet.')
      const flag = this.#experiments.flagOf(current)
      if (!flag) throw fail('Experiment does not have a linked feature flag.')
      if (!storedVariants(flag.filters).some((v) => v.key === variantKey)) throw fail(`Variant '${variantKey}' not found on feature flag.`)
      this.#experiments.flags.ship(project, flag, variantKey, everyone, userId)
      // A conclusion left out (or null) keeps the one stored, as PostHog's ship_variant does.
      const change: Partial<ExperimentRecord> = {}
      if (current.end_date === null) change.end_date = this.#now()
      if (parsed.conclusion !== undefined && parsed.conclusion !== null) change.conclusion = parsed.conclusion
      if (parsed.conclusion_comment !== undefined && parsed.conclusion_comment !== null) change.conclusion_comment = parsed.conclusion_comment
      return this.#save(project, userId, current, change)
    })
  }

  /**
   * A new draft copying what PostHog's clone copies: the name (`<name> (Copy)`, numbered while taken),
   * description, type, parameters, metric filters, metrics (with new uuids, the orderings following), the
   * shared metric links, stats, exposure, scheduling and running-time settings and `only_count_matured_users`; not the
   * secondary metrics, excluded variants or conclusion. By default it shares the source's flag; a new key
   * gets a flag with the source flag's variants, an existing one is linked if eligible.
   */
  duplicate(project: Project, id: number, body: unknown, userId: number): ExperimentObject {
    const parsed = parseBody('duplicate', body)
    return this.#run(() => {
      const source = this.#experiments.record(project, id)
      const sourceFlag = this.#flag(source)
      const key = parsed.feature_flag_key ?? sourceFlag.key
      let name = parsed.name || `${source.name} (Copy)`
      if (!parsed.name) for (let n = 1; this.#repo.nameTaken(project.id, name); n++) name = `${source.name} (Copy) ${n}`
      const parameters = withoutFlagConfig(source.parameters) ?? {}
      const existing = this.#experiments.flags.liveByKey(project.id, key)
      const variants = storedVariants((existing ?? sourceFlag).filters)
      checkVariants(variants)
      if (existing) checkEligibleFlag(existing)
      const flagId = existing?.id ?? this.#experiments.flags.create(project, key, name, { ...parameters, feature_flag_variants: variants }, false, userId)
      const variantKeys = variants.map((v) => v.key as string)
      const links = this.#experiments.savedMetrics.current(project.id, source.id)
      const now = this.#now()
      return this.#experiments.insert(project, userId, {
        team_id: project.id,
        name,
        description: source.description,
        feature_flag_id: flagId,
        exposure_cohort_id: null,
        // As PostHog's clone_experiment, the copy has no holdout.
        holdout_id: null,
        start_date: null,
        end_date: null,
        parameters,
        secondary_metrics: [],
        filters: source.filters,
        archived: false,
        deleted: false,
        type: source.type,
        created_by_id: userId,
        created_at: now,
        updated_at: now,
        ...settingsOnCreate(clonedSettings(source), variantKeys, null, linkedOnCreate(links)),
      }, links)
    })
  }
}
