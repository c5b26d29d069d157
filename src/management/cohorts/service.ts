/**
 * Cohorts, the part flags need: named property-group trees (`filters.properties`), static or dynamic,
 * soft-deleted. Static members live in persons.db (src/persons writes them); `count` here is what the
 * last write of them reported, or for a dynamic cohort its last calculation's (null until the first: a write
 * marks it calculating and tells the calculator, calculator.ts). Behavioural (event-based) filters are allowed
 * in a cohort but refused while an active flag uses it.
 */
import { iso, type Clock } from '../../common/clock.js'
import { AppError, ValidationError } from '../../common/errors.js'
import type { JsonObject } from '../../common/json.js'
import { assertValid, lazyWriteValidators } from '../../schemas/index.js'
import { cohortCreateSchema, cohortUpdateSchema, type CohortWrite } from '../../schemas/cohort.js'
import { prepared, type Db } from '../../storage/sqlite/database.js'
import { userSummary, type Accounts, type UserSummary } from '../accounts.js'
import { changesBetween, type ActivityLog, type ActivityPage, type ActivityPageRequest, type Change } from '../activity-log.js'
import { activeFlagDefinitions, liveFlagDefinitions } from '../feature-flags/definitions.js'
import { CohortCalculations, type CalculationObject } from './calculations.js'
import { behaviouralIds, cohortRefs, hasBehaviouralLeaf, hasCriteria, parseCohortFilters } from './filters.js'
import { block, flagsUsing, namesList, type CohortUsedIn } from './usage.js'

export interface CohortRecord {
  id: number
  team_id: number
  name: string
  description: string
  filters: JsonObject
  is_static: boolean
  deleted: boolean
  count: number | null
  version: number
  is_calculating: boolean
  last_calculation: string | null
  errors_calculating: number
  created_by_id: number | null
  created_at: string
  updated_at: string
}

export interface CohortObject {
  id: number
  name: string
  description: string
  filters: JsonObject
  is_static: boolean
  deleted: boolean
  is_calculating: boolean
  errors_calculating: number
  last_calculation: string | null
  /** The newest failed calculation's error while the last ones failed. */
  last_error_message: string | null
  count: number | null
  version: number
  created_by: UserSummary | null
  created_at: string
}

/**
 * Who changed a cohort through the cohort API. PostHog logs its cohort viewset's writes (create, update, the
 * static members' add and remove), not the cohorts other features make (a flag's or experiment's static cohort).
 */
export interface CohortActor {
  organizationId: string
  userId: number
}

const SCOPE = 'Cohort'

/** What the activity log compares: the fields a write can change. */
const snapshot = (c: CohortRecord) => ({ name: c.name, description: c.description, filters: c.filters, is_static: c.is_static, deleted: c.deleted })

interface CohortRow extends Omit<CohortRecord, 'filters' | 'is_static' | 'deleted' | 'is_calculating'> {
  filters: string
  is_static: number
  deleted: number
  is_calculating: number
}

const toRecord = (row: CohortRow): CohortRecord => ({
  ...row,
  filters: JSON.parse(row.filters) as JsonObject,
  is_static: row.is_static === 1,
  deleted: row.deleted === 1,
  is_calculating: row.is_calculating === 1,
})

/** A live dynamic cohort is counted after each write, as PostHog's serializer enqueues a calculation. */
const counted = (c: { is_static: boolean; deleted: boolean }) => !c.is_static && !c.deleted

const compiled = lazyWriteValidators<CohortWrite>(cohortCreateSchema, cohortUpdateSchema)

export class Cohorts {
  readonly #db: Db
  readonly #accounts: Accounts
  readonly #clock: Clock
  readonly #activity: ActivityLog
  readonly #listeners = new Set<(teamId: number) => void>()
  readonly #staleListeners = new Set<(teamId: number, id: number) => void>()
  readonly calculations: CohortCalculations

  constructor(db: Db, accounts: Accounts, clock: Clock, activity: ActivityLog) {
    this.#db = db
    this.#accounts = accounts
    this.#clock = clock
    this.#activity = activity
    this.calculations = new CohortCalculations(db)
  }

  /** Calls `listener(teamId)` after a cohort of the project changed (for evaluation caches). */
  onChange(listener: (teamId: number) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** Calls `listener(teamId, id)` after a write marked a dynamic cohort calculating (for the calculator). */
  onStale(listener: (teamId: number, id: number) => void): () => void {
    this.#staleListeners.add(listener)
    return () => this.#staleListeners.delete(listener)
  }

  #changed(teamId: number, cohort: { id: number; is_static: boolean; deleted: boolean }): void {
    for (const listener of this.#listeners) listener(teamId)
    if (counted(cohort)) for (const listener of this.#staleListeners) listener(teamId, cohort.id)
  }

  /** The cohort of the project, deleted or not; null when there is none. */
  record(teamId: number, id: number): CohortRecord | null {
    const row = prepared(this.#db, 'SELECT * FROM cohorts WHERE id = ? AND team_id = ?').get(id, teamId) as CohortRow | undefined
    return row ? toRecord(row) : null
  }

  /** The ids of the project's live cohorts of that name (HogQL's `IN COHORT 'name'`), oldest first. */
  idsNamed(teamId: number, name: string): number[] {
    const rows = prepared(this.#db, 'SELECT id FROM cohorts WHERE team_id = ? AND deleted = 0 AND name = ? ORDER BY id').all(teamId, name) as Array<{ id: number }>
    return rows.map((row) => row.id)
  }

  /**
   * The cohort and every live cohort it references, transitively, each once, the cohort first. Static
   * cohorts end the walk: their members are stored, so what their filters name is never evaluated.
   */
  withDependencies(teamId: number, id: number): CohortRecord[] {
    const seen = new Map<number, CohortRecord>()
    const visit = (cohortId: number): void => {
      if (seen.has(cohortId)) return
      const cohort = this.record(teamId, cohortId)
      if (!cohort || cohort.deleted) return
      seen.set(cohortId, cohort)
      if (!cohort.is_static) cohortRefs(cohort.filters).forEach(visit)
    }
    visit(id)
    return [...seen.values()]
  }

  /** Live cohorts, newest first, narrowed as PostHog's list is (`type`, `search`, `hide_behavioral_cohorts`). */
  list(teamId: number, query: CohortListQuery, limit: number, offset: number): { count: number; results: CohortObject[] } {
    const rows = prepared(this.#db, 'SELECT * FROM cohorts WHERE team_id = ? AND deleted = 0 ORDER BY created_at DESC, id DESC')
      .all(teamId) as CohortRow[]
    let live = rows.map(toRecord)
    if (query.hideBehavioural) {
      const hidden = behaviouralIds(live)
      live = live.filter((c) => !hidden.has(c.id))
    }
    if (query.type !== null) live = live.filter((c) => c.is_static === (query.type === 'static'))
    if (query.search !== null) {
      const needle = query.search.toLowerCase()
      live = live.filter((c) => c.name.toLowerCase().includes(needle))
    }
    return { count: live.length, results: live.slice(offset, offset + limit).map((c) => this.#toObject(c)) }
  }

  get(teamId: number, id: number): CohortObject {
    const cohort = this.record(teamId, id)
    if (!cohort) throw new AppError('not_found')
    return this.#toObject(cohort)
  }

  /** `actor`: made through the cohort API, and logged. */
  create(teamId: number, body: unknown, userId: number | null, actor?: CohortActor): CohortObject {
    assertValid(compiled().create, body)
    const isStatic = body.is_static ?? false
    const filters = body.filters === undefined ? {} : this.#parseFilters(teamId, null, body.filters, isStatic)
    const now = iso(this.#clock.now())
    const name = body.name ?? ''
    const deleted = body.deleted ?? false
    const calculating = counted({ is_static: isStatic, deleted })
    const id = this.#db.transaction(() => {
      const info = prepared(this.#db,
          `INSERT INTO cohorts (team_id, name, description, filters, is_static, deleted, is_calculating, created_by_id, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(teamId, name, body.description ?? '', JSON.stringify(filters), isStatic ? 1 : 0, deleted ? 1 : 0, calculating ? 1 : 0, userId, now, now)
      const id = Number(info.lastInsertRowid)
      if (actor) this.#log(teamId, actor, id, 'created', name, null)
      return id
    })()
    this.#changed(teamId, { id, is_static: isStatic, deleted })
    return this.get(teamId, id)
  }

  /** `actor`: changed through the cohort API, and logged (`updated`, or `deleted` and `restored` as PostHog names them). */
  update(teamId: number, id: number, body: unknown, actor?: CohortActor): CohortObject {
    assertValid(compiled().update, body)
    const updated = this.#db.transaction(() => {
      const current = this.record(teamId, id)
      if (!current) throw new AppError('not_found')
      const isStatic = body.is_static ?? current.is_static
      const filters = body.filters === undefined ? current.filters : this.#parseFilters(teamId, id, body.filters, isStatic)
      // PostHog checks the new tree, or on a static → dynamic flip the kept one, which starts to be evaluated.
      if (!(current.is_static && isStatic) && (body.filters !== undefined || current.is_static)) {
        this.#checkFlagsAllow(teamId, id, filters)
      }
      const filtersChanged = JSON.stringify(filters) !== JSON.stringify(current.filters)
      if (isStatic && filtersChanged && (hasCriteria(current.filters) || hasCriteria(filters))) {
        throw new ValidationError('invalid', 'Editing the criteria of a static cohort is not supported yet. Create a new static cohort instead.')
      }
      if (body.deleted === true && !current.deleted) this.#checkUnused(teamId, current)
      const next: CohortRecord = {
        ...current,
        name: body.name === undefined ? current.name : (body.name ?? ''),
        description: body.description ?? current.description,
        filters,
        is_static: isStatic,
        deleted: body.deleted ?? current.deleted,
        version: filtersChanged ? current.version + 1 : current.version,
        updated_at: iso(this.#clock.now()),
      }
      next.is_calculating = current.is_calculating || counted(next)
      prepared(this.#db,
          `UPDATE cohorts SET name = @name, description = @description, filters = @filters, is_static = @is_static,
           deleted = @deleted, version = @version, is_calculating = @is_calculating, updated_at = @updated_at WHERE id = @id`,
        )
        .run({ ...next, filters: JSON.stringify(next.filters), is_static: next.is_static ? 1 : 0, deleted: next.deleted ? 1 : 0, is_calculating: next.is_calculating ? 1 : 0 })
      if (actor) {
        const activity = next.deleted === current.deleted ? 'updated' : next.deleted ? 'deleted' : 'restored'
        this.#log(teamId, actor, id, activity, next.name, changesBetween(SCOPE, snapshot(current), snapshot(next)))
      }
      return this.#toObject(next)
    })()
    this.#changed(teamId, updated)
    return updated
  }

  /**
   * What uses the cohort (a deleted one too), as PostHog's `used_in`: the project's live flags (active or not)
   * that evaluate it, directly or through the cohorts they name, and the live cohorts that name it, each by id.
   * skylark keeps no insights (its dashboards' tiles name flags, never cohorts), so that list is empty.
   */
  usedIn(teamId: number, id: number): CohortUsedIn {
    if (this.record(teamId, id) === null) throw new AppError('not_found')
    const flags = flagsUsing(id, liveFlagDefinitions(this.#db, teamId), (ref) => this.record(teamId, ref))
    const cohorts = this.#cohortsNaming(teamId, id)
    return {
      feature_flags: block(flags.map((f) => ({ id: f.id, key: f.key, name: f.name }))),
      insights: block([]),
      cohorts: block(cohorts.map((c) => ({ id: c.id, name: c.name || 'Unnamed' }))),
    }
  }

  /** Logs a change of a static cohort's members made through the API, as PostHog words it (no name, one bare change). */
  logMembers(teamId: number, id: number, activity: 'persons_added_manually' | 'person_removed_manually', actor: CohortActor): void {
    this.#log(teamId, actor, id, activity, null, [{ type: SCOPE, action: 'changed', field: null, before: null, after: null }])
  }

  /** The project's cohort activity, newest first; with `id`, that cohort's (404 when the project has no such cohort, deleted or not). */
  activity(teamId: number, id: number | null, request: ActivityPageRequest): ActivityPage {
    if (id !== null && this.record(teamId, id) === null) throw new AppError('not_found')
    return this.#activity.page(teamId, SCOPE, request, id === null ? undefined : [String(id)])
  }

  #log(teamId: number, actor: CohortActor, id: number, activity: string, name: string | null, changes: Change[] | null): void {
    this.#activity.log({ teamId, organizationId: actor.organizationId, userId: actor.userId, scope: SCOPE, itemId: id, activity, name, changes })
  }

  /** Records how many persons a static cohort holds, after its members in persons.db were written (its calculation). */
  setCount(teamId: number, id: number, count: number): void {
    const now = iso(this.#clock.now())
    prepared(this.#db, 'UPDATE cohorts SET count = ?, last_calculation = ?, updated_at = ? WHERE id = ? AND team_id = ?').run(count, now, now, id, teamId)
    for (const listener of this.#listeners) listener(teamId)
  }

  /** The cohort's calculations, newest first (404 when the project has no such cohort, deleted or not). */
  calculationHistory(teamId: number, id: number, limit: number, offset: number): { count: number; results: CalculationObject[] } {
    if (this.record(teamId, id) === null) throw new AppError('not_found')
    return this.calculations.history({ teamId, id }, limit, offset)
  }

  /**
   * PostHog's CohortFilters rules (a static cohort without criteria keeps what it was sent, as PostHog's
   * does), then the references: each must be a live cohort of the project, and none may lead back here.
   */
  #parseFilters(teamId: number, selfId: number | null, raw: JsonObject, isStatic: boolean): JsonObject {
    if (isStatic && !hasCriteria(raw)) return raw
    const filters = parseCohortFilters(raw)
    for (const ref of cohortRefs(filters)) {
      const target = this.record(teamId, ref)
      if (!target || target.deleted) throw new ValidationError('invalid_input', 'Invalid Cohort ID in filter', 'filters')
      if (selfId !== null && this.withDependencies(teamId, ref).some((c) => c.id === selfId)) {
        throw new ValidationError('invalid_input', 'Cohorts cannot reference other cohorts in a loop.', 'filters')
      }
    }
    return filters
  }

  /** While an active flag evaluates the cohort, its tree may not gain event filters, itself or through a cohort it names. */
  #checkFlagsAllow(teamId: number, id: number, filters: JsonObject): void {
    if (this.#flagsUsing(teamId, id).length === 0) return
    if (hasBehaviouralLeaf(filters)) {
      throw new ValidationError('behavioral_cohort_found', 'Behavioral filters cannot be added to cohorts used in feature flags.', 'filters')
    }
    for (const ref of cohortRefs(filters)) {
      const behavioural = this.withDependencies(teamId, ref).find((c) => !c.is_static && hasBehaviouralLeaf(c.filters))
      if (behavioural) {
        throw new ValidationError(
          'behavioral_cohort_found',
          `A cohort dependency (${behavioural.name}) has filters based on events. These cohorts can't be used in feature flags.`,
          'filters',
        )
      }
    }
  }

  /** PostHog refuses to delete a cohort that active flags or other live cohorts still need; flags are checked first. */
  #checkUnused(teamId: number, cohort: CohortRecord): void {
    const flags = this.#flagsUsing(teamId, cohort.id)
    if (flags.length > 0) {
      throw new ValidationError(
        'invalid',
        `This cohort is used in ${flags.length} active feature flag(s): ${flags.map((f) => f.name || f.key).join(', ')}. ` +
          'Please remove the cohort from these feature flags before deleting it.',
      )
    }
    const dependants = this.#cohortsNaming(teamId, cohort.id)
    if (dependants.length > 0) {
      throw new ValidationError(
        'invalid',
        `This cohort is used as criteria in ${dependants.length} other cohort(s): ${namesList(dependants.map((c) => c.name || 'Unnamed'))}. ` +
          'Please remove this cohort from those cohort definitions before deleting it.',
      )
    }
  }

  /** The project's other live cohorts whose tree names the cohort, by id. */
  #cohortsNaming(teamId: number, id: number): CohortRecord[] {
    const rows = prepared(this.#db, 'SELECT * FROM cohorts WHERE team_id = ? AND deleted = 0 AND id != ? ORDER BY id').all(teamId, id) as CohortRow[]
    return rows.map(toRecord).filter((c) => cohortRefs(c.filters).includes(id))
  }

  #flagsUsing(teamId: number, id: number) {
    return flagsUsing(id, activeFlagDefinitions(this.#db, teamId), (ref) => this.record(teamId, ref))
  }

  #toObject(cohort: CohortRecord): CohortObject {
    const creator = cohort.created_by_id === null ? null : this.#accounts.userById(cohort.created_by_id)
    return {
      id: cohort.id,
      name: cohort.name,
      description: cohort.description,
      filters: cohort.filters,
      is_static: cohort.is_static,
      deleted: cohort.deleted,
      is_calculating: cohort.is_calculating,
      errors_calculating: cohort.errors_calculating,
      last_calculation: cohort.last_calculation,
      last_error_message: cohort.errors_calculating > 0 ? this.calculations.lastError(cohort.id) : null,
      count: cohort.count,
      version: cohort.version,
      created_by: creator ? userSummary(creator) : null,
      created_at: cohort.created_at,
    }
  }
}

export interface CohortListQuery {
  type: 'static' | 'dynamic' | null
  /** Case-insensitive part of the name. */
  search: string | null
  hideBehavioural: boolean
}
