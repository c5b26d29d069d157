/**
 * Holdout use-cases, as PostHog's ExperimentHoldoutViewSet: list, read, create, change and delete, each in one
 * IMMEDIATE transaction. A holdout's groups always carry `variant: "holdout-<id>"`. Changing its filters
 * rewrites the `holdout` of the flag of every experiment naming it (running ones too: PostHog does), and
 * deleting it removes that `holdout` from those flags and leaves the experiments without one. Flags change
 * through the FeatureFlags service (its rules, version, activity entry and the caches' notice apply).
 */
import { iso, type Clock } from '../../common/clock.js'
import { AppError } from '../../common/errors.js'
import { jsonEqual, userSummary, type Accounts, type FeatureFlagRecord, type FeatureFlags, type Project } from '../../management/index.js'
import type { Page } from '../../common/pagination.js'
import type { Db } from '../../storage/index.js'
import { holdoutNotFound, readHoldoutCreate, readHoldoutRef, readHoldoutUpdate } from './input.js'
import { holdoutFiltersForFlag, toHoldoutObject, withHoldoutVariant, type HoldoutObject, type HoldoutRecord } from './record.js'
import { HoldoutRepository } from './repository.js'

export interface HoldoutDeps {
  db: Db
  clock: Clock
  accounts: Accounts
  featureFlags: FeatureFlags
}

export class ExperimentHoldouts {
  readonly #deps: HoldoutDeps
  readonly #repo: HoldoutRepository

  constructor(deps: HoldoutDeps) {
    this.#deps = deps
    this.#repo = new HoldoutRepository(deps.db)
  }

  record(project: Project, id: number): HoldoutRecord {
    const holdout = this.#repo.get(project.id, id)
    if (!holdout) throw new AppError('not_found')
    return holdout
  }

  /** The holdout of the project an experiment names, or null (none, or gone). */
  byId(teamId: number, id: number | null): HoldoutRecord | null {
    return id === null ? null : this.#repo.get(teamId, id)
  }

  toObject(holdout: HoldoutRecord): HoldoutObject {
    const creator = holdout.created_by_id === null ? null : this.#deps.accounts.userById(holdout.created_by_id)
    return toHoldoutObject(holdout, creator ? userSummary(creator) : null)
  }

  list(project: Project, page: Page): { count: number; results: HoldoutObject[] } {
    const { count, records } = this.#repo.list(project.id, page.limit, page.offset)
    return { count, results: records.map((h) => this.toObject(h)) }
  }

  get(project: Project, id: number): HoldoutObject {
    return this.toObject(this.record(project, id))
  }

  create(project: Project, body: unknown, userId: number): HoldoutObject {
    return this.#deps.db
      .transaction(() => {
        const fields = readHoldoutCreate(body)
        const now = iso(this.#deps.clock.now())
        const record: Omit<HoldoutRecord, 'id'> = {
          team_id: project.id,
          name: fields.name,
          description: fields.description ?? null,
          filters: fields.filters,
          created_by_id: userId,
          created_at: now,
          updated_at: now,
        }
        const id = this.#repo.insert(record)
        // The variant names the id, so it is set once the row has one.
        const stored = { ...record, id, filters: withHoldoutVariant(id, record.filters) }
        this.#repo.update(stored)
        return this.toObject(stored)
      })
      .immediate()
  }

  update(project: Project, id: number, body: unknown, userId: number): HoldoutObject {
    return this.#deps.db
      .transaction(() => {
        const current = this.record(project, id)
        const fields = readHoldoutUpdate(body)
        const next: HoldoutRecord = {
          ...current,
          name: fields.name ?? current.name,
          description: fields.description === undefined ? current.description : fields.description,
          updated_at: iso(this.#deps.clock.now()),
        }
        // As PostHog, filters that differ from the stored ones (variants included) are stored with the
        // holdout's variant and moved into every flag of its experiments.
        if (fields.filters && !jsonEqual(fields.filters, current.filters)) {
          next.filters = withHoldoutVariant(id, fields.filters)
          for (const flag of this.#flagsOf(project, id)) this.setFlagHoldout(project, flag, next, userId)
        }
        this.#repo.update(next)
        return this.toObject(next)
      })
      .immediate()
  }

  /** Deletes the holdout, taking it out of its experiments' flags first (PostHog refuses nothing here). */
  delete(project: Project, id: number, userId: number): void {
    this.#deps.db
      .transaction(() => {
        this.record(project, id)
        for (const flag of this.#flagsOf(project, id)) this.setFlagHoldout(project, flag, null, userId)
        this.#repo.delete(project.id, id)
      })
      .immediate()
  }

  /**
   * An experiment's `holdout_id` as sent: undefined when absent, null to remove, else the project's holdout
   * (one of another project does not exist, as in PostHog).
   */
  resolve(project: Project, raw: unknown): HoldoutRecord | null | undefined {
    const id = readHoldoutRef(raw)
    if (id === undefined || id === null) return id
    const holdout = Number.isSafeInteger(id) ? this.#repo.get(project.id, id) : null
    if (!holdout) throw holdoutNotFound(raw)
    return holdout
  }

  /** Writes the flag's `holdout` for this holdout (or none); a flag that has it already is left alone. */
  setFlagHoldout(project: Project, flag: FeatureFlagRecord, holdout: Pick<HoldoutRecord, 'id' | 'filters'> | null, userId: number): void {
    const value = holdoutFiltersForFlag(holdout)
    if (jsonEqual(flag.filters.holdout ?? null, value.holdout)) return
    // The flag service applies `filters` only with `groups` in them; none is what such a flag evaluated.
    const filters = { groups: [], ...flag.filters, ...value }
    this.#deps.featureFlags.update(project, flag.id, { filters }, userId)
  }

  #flagsOf(project: Project, id: number): FeatureFlagRecord[] {
    return this.#repo.experimentFlagIds(project.id, id).flatMap((flagId) => this.#deps.featureFlags.repository.get(project.id, flagId) ?? [])
  }
}
