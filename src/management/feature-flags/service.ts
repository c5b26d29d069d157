/**
 * Feature flag use-cases: list, read, create, update (including soft delete) and their activity. Every
 * write runs in one IMMEDIATE transaction that validates against the current rows, stores the change and
 * writes its activity entry, so concurrent writers can't both pass the key or version checks.
 */
import { iso, type Clock } from '../../common/clock.js'
import { AppError, ValidationError } from '../../common/errors.js'
import type { Page } from '../../common/pagination.js'
import { featureFlagCreateSchema, featureFlagUpdateSchema, type FeatureFlagWrite } from '../../schemas/feature-flag.js'
import { assertValid, createAjv, type ValidateFunction } from '../../schemas/index.js'
import type { Db } from '../../storage/sqlite/database.js'
import { MembershipLevel, type Accounts, type Project } from '../accounts.js'
import { changesBetween, jsonEqual, type ActivityLog, type ActivityPage, type ActivityPageRequest } from '../activity-log.js'
import { hasBehaviouralLeaf, type Cohorts } from '../cohorts/index.js'
import type { Dashboards } from '../dashboards.js'
import type { Roles } from '../roles.js'
import { describeFlags, recordFromCreate, recordFromUpdate, type ApplyContext } from './apply.js'
import { bodyIds, bulkDeleteRequest, parseFlagIds } from './bulk.js'
import { filtersAsQuery, parseFlagListQuery, type FlagListFilter } from './list-query.js'
import { pyStr } from '../../common/python-format.js'
import { conflictingFields } from './conflicts.js'
import { activitySnapshot, flagDependencyRefs, safeInt, type FeatureFlagRecord } from './record.js'
import { FlagRepository } from './repository.js'
import { EarlyAccessRepository } from '../early-access/repository.js'
import { canEditFlag, serializeContext, toFeatureFlagObject, type FeatureFlagObject, type Viewer } from './serialize.js'
import { flagStatus, flagStatusReason, rolloutInfo, type RolloutInfo } from './status.js'

export const FLAG_SCOPE = 'FeatureFlag'
export const EDIT_DENIED = "You don't have edit permissions for this feature flag."

export type BulkDeleted = { id: number; key: string } & RolloutInfo
export type BulkError = { id: unknown; key?: string; reason: string }

interface Validators {
  create: ValidateFunction<FeatureFlagWrite & { key: string }>
  update: ValidateFunction<FeatureFlagWrite>
}
let validators: Validators | undefined
/** Compiled on first use, once per process. */
function compiled(): Validators {
  if (!validators) {
    const ajv = createAjv()
    validators = {
      create: ajv.compile<FeatureFlagWrite & { key: string }>(featureFlagCreateSchema),
      update: ajv.compile<FeatureFlagWrite>(featureFlagUpdateSchema),
    }
  }
  return validators
}

export interface FeatureFlagDeps {
  db: Db
  clock: Clock
  accounts: Accounts
  roles: Roles
  cohorts: Cohorts
  activity: ActivityLog
  dashboards: Dashboards
}

export class FeatureFlags {
  readonly #deps: FeatureFlagDeps
  readonly #repo: FlagRepository
  readonly #features: EarlyAccessRepository
  readonly #listeners = new Set<(teamId: number) => void>()

  constructor(deps: FeatureFlagDeps) {
    this.#deps = deps
    this.#repo = new FlagRepository(deps.db)
    this.#features = new EarlyAccessRepository(deps.db)
  }

  get repository(): FlagRepository {
    return this.#repo
  }

  /**
   * Calls `listener(teamId)` after a write changed a flag of the project, for evaluation caches: writes go
   * through this process's own connection, which `PRAGMA data_version` does not report. Returns an
   * unsubscribe function.
   */
  onChange(listener: (teamId: number) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** Tells the listeners that what evaluation reads of the project's flags changed elsewhere (an experiment linked or let go). */
  changedElsewhere(teamId: number): void {
    this.#changed(teamId)
  }

  #changed(teamId: number): void {
    for (const listener of this.#listeners) listener(teamId)
  }

  viewer(project: Project, userId: number): Viewer {
    const level = this.#deps.accounts.membershipLevel(project.organization_id, userId) ?? 0
    return { userId, isAdmin: level >= MembershipLevel.admin, roles: this.#deps.roles.flagAccessOf(userId) }
  }

  /** Whether the user may change the flag and its role access. */
  canEdit(project: Project, flag: FeatureFlagRecord, userId: number): boolean {
    return canEditFlag(flag, this.viewer(project, userId), this.#repo.roleAccessRoleIds([flag.id]).get(flag.id) ?? [])
  }

  /** The flag of the project (deleted ones included), or 404. */
  record(project: Project, id: number, detail?: string): FeatureFlagRecord {
    const flag = this.#repo.get(project.id, id)
    if (!flag) throw new AppError('not_found', detail ? { detail } : {})
    return flag
  }

  toObjects(project: Project, flags: readonly FeatureFlagRecord[], userId: number): FeatureFlagObject[] {
    const ctx = serializeContext(this.#repo, this.#features, this.#deps.accounts, project.id, flags, this.viewer(project, userId), this.#deps.clock.now())
    return flags.map((f) => toFeatureFlagObject(f, ctx))
  }

  get(project: Project, id: number, userId: number): FeatureFlagObject {
    return this.toObjects(project, [this.record(project, id)], userId)[0]
  }

  /** Live flags, filtered and ordered by the query (see list-query.ts). */
  list(project: Project, query: URLSearchParams, page: Page, userId: number): { count: number; results: FeatureFlagObject[] } {
    const filter = parseFlagListQuery(query)
    let count: number
    let records: FeatureFlagRecord[]
    if (filter.stale) {
      const stale = this.#matching(project, filter)
      count = stale.length
      records = stale.slice(page.offset, page.offset + page.limit)
    } else {
      ;({ count, records } = this.#repo.list(project.id, filter, page.limit, page.offset))
    }
    return { count, results: this.toObjects(project, records, userId) }
  }

  /** Every live flag the filter matches (stale ones by their filters), in the list's order. */
  #matching(project: Project, filter: FlagListFilter): FeatureFlagRecord[] {
    const records = this.#repo.list(project.id, filter).records
    if (!filter.stale) return records
    const now = this.#deps.clock.now()
    return records.filter((f) => flagStatus(f, now) === 'STALE')
  }

  /** The ones of `flags` the user may change. */
  #editable(project: Project, flags: FeatureFlagRecord[], userId: number): FeatureFlagRecord[] {
    const viewer = this.viewer(project, userId)
    const roleIds = this.#repo.roleAccessRoleIds(flags.map((f) => f.id))
    return flags.filter((f) => canEditFlag(f, viewer, roleIds.get(f.id) ?? []))
  }

  /** PostHog's `matching_ids`: the ids of the live flags the list query matches that the user may change. */
  matchingIds(project: Project, query: URLSearchParams, userId: number): { ids: number[]; total: number } {
    const ids = this.#editable(project, this.#matching(project, parseFlagListQuery(query)), userId).map((f) => f.id)
    return { ids, total: ids.length }
  }

  /**
   * PostHog's `status` action (lower-case, with its reason). No such flag is the contract's 404 envelope with
   * PostHog's sentence, not PostHog's `{"status": "unknown"}` body: every error here has one shape.
   */
  status(project: Project, id: number): { status: string; reason: string } {
    const { status, reason } = flagStatusReason(this.record(project, id, 'Flag could not be found'), this.#deps.clock.now())
    return { status: status.toLowerCase(), reason }
  }

  /** PostHog's `dependent_flags`: the active live flags with a condition on this one, by key. */
  dependentFlags(project: Project, id: number): Array<{ id: number; key: string; name: string }> {
    this.record(project, id)
    return this.#repo.dependents(project.id, id).map((f) => ({ id: f.id, key: f.key, name: f.name || f.key }))
  }

  /** PostHog's `bulk_keys`: id → key of the live flags among `ids`, and a warning naming the unreadable ids. */
  bulkKeys(project: Project, body: unknown): { keys: Record<string, string>; warning?: string } {
    const ids = bodyIds(body)
    if (ids.length === 0) return { keys: {} }
    const { valid, invalid } = parseFlagIds(ids)
    if (valid.length === 0) throw new ValidationError('invalid_input', 'Invalid flag IDs provided', 'ids')
    const keys: Record<string, string> = {}
    for (const flag of this.#repo.liveByIds(project.id, valid)) keys[String(flag.id)] = flag.key
    return invalid.length > 0 ? { keys, warning: `Invalid flag IDs ignored: ${pyStr(invalid)}` } : { keys }
  }

  /**
   * PostHog's `bulk_delete`: soft-deletes the live flags that the filters (or ids) name and the user may
   * change, but not those an experiment or another active flag outside the batch still needs, which are
   * reported in `errors` with ids that are malformed or name no such flag. One activity entry per deletion;
   * as PostHog's, the version stays.
   */
  bulkDelete(project: Project, body: unknown, userId: number): { deleted: BulkDeleted[]; errors: BulkError[] } {
    const request = bulkDeleteRequest(body)
    const result = this.#deps.db
      .transaction(() => {
        const errors: BulkError[] = []
        let candidates: FeatureFlagRecord[]
        if ('filters' in request) {
          candidates = this.#matching(project, parseFlagListQuery(filtersAsQuery(request.filters)))
        } else {
          candidates = this.#repo.liveByIds(project.id, parseFlagIds(request.ids).valid)
        }
        const flags = this.#editable(project, candidates, userId)
        if ('ids' in request) {
          const found = new Set(flags.map((f) => f.id))
          for (const raw of request.ids) {
            const [id] = parseFlagIds([raw]).valid
            if (id === undefined) errors.push({ id: raw, reason: 'Invalid flag ID format' })
            else if (!found.has(id)) errors.push({ id, reason: 'Flag not found' })
          }
        }
        const batch = new Set(flags.map((f) => f.id))
        const experiments = this.#repo.experimentIds([...batch])
        const deleted: BulkDeleted[] = []
        const now = iso(this.#deps.clock.now())
        for (const flag of flags) {
          if (this.#features.flagHasFeature(flag.id)) {
            errors.push({ id: flag.id, key: flag.key, reason: 'Cannot delete a feature flag that is in use with early access features' })
            continue
          }
          const linked = experiments.get(flag.id) ?? []
          if (linked.length > 0) {
            errors.push({ id: flag.id, key: flag.key, reason: `Cannot delete a feature flag linked to active experiment(s): ${linked.join(', ')}` })
            continue
          }
          const dependents = this.#repo.dependents(project.id, flag.id).filter((d) => !batch.has(d.id))
          if (dependents.length > 0) {
            errors.push({ id: flag.id, key: flag.key, reason: `Cannot delete because other flags depend on it: ${describeFlags(dependents, 3)}` })
            continue
          }
          const next: FeatureFlagRecord = { ...flag, deleted: true, last_modified_by_id: userId, updated_at: now }
          this.#repo.update(next)
          this.#log(project, userId, flag.id, 'deleted', flag.key, changesBetween(FLAG_SCOPE, activitySnapshot(flag), activitySnapshot(next)))
          deleted.push({ id: flag.id, key: flag.key, ...rolloutInfo(flag.filters) })
        }
        return { deleted, errors }
      })
      .immediate()
    if (result.deleted.length > 0) this.#changed(project.id)
    return result
  }

  create(project: Project, body: unknown, userId: number): FeatureFlagObject {
    const created = this.#deps.db
      .transaction(() => {
        assertValid(compiled().create, body)
        const fields = recordFromCreate(body, this.#applyContext(project))
        const now = iso(this.#deps.clock.now())
        const record: Omit<FeatureFlagRecord, 'id'> = {
          ...fields,
          team_id: project.id,
          version: 1,
          created_by_id: userId,
          last_modified_by_id: userId,
          created_at: fields.created_at ?? now,
          updated_at: now,
        }
        const id = this.#repo.insert(record)
        this.#log(project, userId, id, 'created', record.key, [])
        // PostHog gives every new flag its usage dashboard unless asked not to; enriched tiles come later,
        // from the `dashboard` action.
        if (body._should_create_usage_dashboard !== false) {
          this.#deps.dashboards.createUsageDashboard(project.id, { id, key: record.key, usage_dashboard_id: null, has_enriched_analytics: false }, userId)
        }
        return this.get(project, id, userId)
      })
      .immediate()
    this.#changed(project.id)
    return created
  }

  update(project: Project, id: number, body: unknown, userId: number): FeatureFlagObject {
    let changed = false
    const updated = this.#deps.db
      .transaction(() => {
        const current = this.record(project, id)
        if (!this.canEdit(project, current, userId)) throw new AppError('permission_denied', { detail: EDIT_DENIED })
        assertValid(compiled().update, body)
        const next = recordFromUpdate(current, body, this.#applyContext(project))
        this.#checkStateChange(project, current, body)
        if (body.version !== undefined && body.version !== current.version && conflictingFields(current, next, body, userId).length > 0) {
          throw this.#conflict(project, current, userId)
        }
        const unchanged =
          changesBetween(FLAG_SCOPE, activitySnapshot(current), activitySnapshot(next)).length === 0 &&
          next.created_at === current.created_at &&
          jsonEqual(next.analytics_dashboards, current.analytics_dashboards)
        if (unchanged) return this.get(project, id, userId)
        next.version = current.version + 1
        next.last_modified_by_id = userId
        next.updated_at = iso(this.#deps.clock.now())
        this.#repo.update(next)
        const changes = changesBetween(FLAG_SCOPE, activitySnapshot(current), activitySnapshot(next))
        const activity = current.deleted === next.deleted ? 'updated' : next.deleted ? 'deleted' : 'restored'
        this.#log(project, userId, id, activity, next.key, changes)
        changed = true
        return this.get(project, id, userId)
      })
      .immediate()
    if (changed) this.#changed(project.id)
    return updated
  }

  /** Activity of every flag of the project, or of one (404 when the flag is not the project's). */
  activity(project: Project, flagId: number | null, request: ActivityPageRequest): ActivityPage {
    if (flagId !== null) this.record(project, flagId)
    return this.#deps.activity.page(project.id, FLAG_SCOPE, request, flagId === null ? undefined : [String(flagId)])
  }

  #log(project: Project, userId: number, id: number, activity: string, name: string, changes: ReturnType<typeof changesBetween>) {
    this.#deps.activity.log({
      teamId: project.id,
      organizationId: project.organization_id,
      userId,
      scope: FLAG_SCOPE,
      itemId: id,
      activity,
      name,
      changes,
    })
  }

  #conflict(project: Project, current: FeatureFlagRecord, userId: number): AppError {
    const by = current.last_modified_by_id === null ? null : this.#deps.accounts.userById(current.last_modified_by_id)
    return new AppError('conflict', {
      detail: `The feature flag was updated by ${by?.email ?? 'another user'} since you started editing it. Please refresh and try again.`,
      extra: { original_flag: this.toObjects(project, [current], userId)[0] },
    })
  }

  /** Refusals PostHog makes when deleting, disabling or enabling a flag. */
  #checkStateChange(project: Project, current: FeatureFlagRecord, body: FeatureFlagWrite): void {
    if (body.deleted === true) {
      if (this.#features.flagHasFeature(current.id)) {
        throw new ValidationError('invalid', 'Cannot delete a feature flag that is in use with early access features. Please delete the early access feature before deleting the flag.')
      }
      const experiments = this.#repo.experimentIds([current.id]).get(current.id) ?? []
      if (experiments.length > 0) {
        throw new ValidationError(
          'invalid',
          `Cannot delete a feature flag that is linked to active experiment(s) with ID(s): ${experiments.join(', ')}. Please delete the experiment(s) before deleting the flag.`,
        )
      }
      const dependents = this.#repo.dependents(project.id, current.id)
      if (dependents.length > 0) {
        throw new ValidationError(
          'invalid',
          `Cannot delete this feature flag because other flags depend on it: ${describeFlags(dependents)}. Please update or delete the dependent flags first.`,
        )
      }
    }
    if (body.active === false && current.active) {
      const dependents = this.#repo.dependents(project.id, current.id)
      if (dependents.length > 0) {
        throw new ValidationError(
          'invalid',
          `Cannot disable this feature flag because other flags depend on it: ${describeFlags(dependents)}. Please update or disable the dependent flags first.`,
        )
      }
    }
    if (body.active === true && !current.active) {
      const disabled = flagDependencyRefs(current.filters)
        .map((ref) => safeInt(ref))
        .flatMap((depId) => (depId === null ? [] : [this.#repo.get(project.id, depId)]))
        .filter((f): f is FeatureFlagRecord => f !== null && !f.deleted && !f.active)
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      if (disabled.length > 0) {
        throw new ValidationError(
          'invalid',
          `Cannot enable this feature flag because it depends on disabled flags: ${describeFlags(disabled)}. Please enable the dependency flags first.`,
        )
      }
    }
  }

  #applyContext(project: Project): ApplyContext {
    const cohorts = this.#deps.cohorts
    return {
      lookups: {
        liveFlagByKey: (key) => this.#repo.liveByKey(project.id, key),
        liveFlag: (id) => {
          const flag = this.#repo.get(project.id, id)
          return flag && !flag.deleted ? flag : null
        },
        cohortWithDependencies: (id) => cohorts.withDependencies(project.id, id),
        isBehaviouralCohort: (cohort) => !cohort.is_static && hasBehaviouralLeaf(cohort.filters),
      },
      dashboards: (ids) => this.#repo.dashboardIds(project.id, ids),
    }
  }
}
