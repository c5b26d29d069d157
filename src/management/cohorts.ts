/**
 * Cohorts, the minimal part flags need: named property-group trees (`filters.properties`), static or
 * dynamic, soft-deleted. Person membership and counts belong to persons.db; `count` stays null here.
 * Behavioural (event-based) filters are allowed in a cohort but refused when a flag uses the cohort.
 */
import { iso, type Clock } from '../common/clock.js'
import { AppError, ValidationError } from '../common/errors.js'
import { isPlainObject, type JsonObject } from '../common/json.js'
import { assertValid, createAjv, type ValidateFunction } from '../schemas/index.js'
import { cohortCreateSchema, cohortUpdateSchema, type CohortWrite } from '../schemas/cohort.js'
import type { Db } from '../storage/sqlite/database.js'
import { userSummary, type Accounts, type UserSummary } from './accounts.js'
import { prepared } from '../storage/sqlite/database.js'

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
  count: number | null
  version: number
  created_by: UserSummary | null
  created_at: string
}

interface CohortRow extends Omit<CohortRecord, 'filters' | 'is_static' | 'deleted'> {
  filters: string
  is_static: number
  deleted: number
}

const toRecord = (row: CohortRow): CohortRecord => ({
  ...row,
  filters: JSON.parse(row.filters) as JsonObject,
  is_static: row.is_static === 1,
  deleted: row.deleted === 1,
})

/** Every leaf property of a cohort's `filters.properties` tree. */
export function cohortLeaves(filters: JsonObject): JsonObject[] {
  const leaves: JsonObject[] = []
  const walk = (node: unknown): void => {
    if (!isPlainObject(node)) return
    if (Array.isArray(node.values) && (node.type === 'AND' || node.type === 'OR')) node.values.forEach(walk)
    else leaves.push(node)
  }
  walk(filters.properties)
  return leaves
}

const cohortRefs = (filters: JsonObject): number[] =>
  cohortLeaves(filters)
    .filter((leaf) => leaf.type === 'cohort')
    .map((leaf) => Number(leaf.value))

let validators: { create: ValidateFunction<CohortWrite>; update: ValidateFunction<CohortWrite> } | undefined
function compiled(): { create: ValidateFunction<CohortWrite>; update: ValidateFunction<CohortWrite> } {
  if (!validators) {
    const ajv = createAjv()
    validators = { create: ajv.compile<CohortWrite>(cohortCreateSchema), update: ajv.compile<CohortWrite>(cohortUpdateSchema) }
  }
  return validators
}

export class Cohorts {
  readonly #db: Db
  readonly #accounts: Accounts
  readonly #clock: Clock
  readonly #listeners = new Set<(teamId: number) => void>()

  constructor(db: Db, accounts: Accounts, clock: Clock) {
    this.#db = db
    this.#accounts = accounts
    this.#clock = clock
  }

  /** Calls `listener(teamId)` after a cohort of the project changed (for evaluation caches). */
  onChange(listener: (teamId: number) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** The cohort of the project, deleted or not; null when there is none. */
  record(teamId: number, id: number): CohortRecord | null {
    const row = prepared(this.#db, 'SELECT * FROM cohorts WHERE id = ? AND team_id = ?').get(id, teamId) as CohortRow | undefined
    return row ? toRecord(row) : null
  }

  /** The cohort and every live cohort it references, transitively, each once, the cohort first. */
  withDependencies(teamId: number, id: number): CohortRecord[] {
    const seen = new Map<number, CohortRecord>()
    const visit = (cohortId: number): void => {
      if (seen.has(cohortId)) return
      const cohort = this.record(teamId, cohortId)
      if (!cohort || cohort.deleted) return
      seen.set(cohortId, cohort)
      cohortRefs(cohort.filters).forEach(visit)
    }
    visit(id)
    return [...seen.values()]
  }

  count(teamId: number): number {
    return (prepared(this.#db, 'SELECT COUNT(*) AS n FROM cohorts WHERE team_id = ? AND deleted = 0').get(teamId) as { n: number }).n
  }

  list(teamId: number, limit: number, offset: number): CohortObject[] {
    const rows = prepared(this.#db, 'SELECT * FROM cohorts WHERE team_id = ? AND deleted = 0 ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?')
      .all(teamId, limit, offset) as CohortRow[]
    return rows.map((row) => this.#toObject(toRecord(row)))
  }

  get(teamId: number, id: number): CohortObject {
    const cohort = this.record(teamId, id)
    if (!cohort) throw new AppError('not_found')
    return this.#toObject(cohort)
  }

  create(teamId: number, body: unknown, userId: number | null): CohortObject {
    assertValid(compiled().create, body)
    const filters = body.filters ?? {}
    this.#checkFilters(teamId, null, filters)
    const now = iso(this.#clock.now())
    const info = prepared(this.#db, 
        `INSERT INTO cohorts (team_id, name, description, filters, is_static, deleted, created_by_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(teamId, body.name ?? '', body.description ?? '', JSON.stringify(filters), body.is_static ? 1 : 0, body.deleted ? 1 : 0, userId, now, now)
    for (const listener of this.#listeners) listener(teamId)
    return this.get(teamId, Number(info.lastInsertRowid))
  }

  update(teamId: number, id: number, body: unknown): CohortObject {
    assertValid(compiled().update, body)
    const updated = this.#db.transaction(() => {
      const current = this.record(teamId, id)
      if (!current) throw new AppError('not_found')
      if (body.filters !== undefined) this.#checkFilters(teamId, id, body.filters)
      const next: CohortRecord = {
        ...current,
        name: body.name === undefined ? current.name : (body.name ?? ''),
        description: body.description ?? current.description,
        filters: body.filters ?? current.filters,
        is_static: body.is_static ?? current.is_static,
        deleted: body.deleted ?? current.deleted,
        version: body.filters === undefined ? current.version : current.version + 1,
        updated_at: iso(this.#clock.now()),
      }
      prepared(this.#db, 
          `UPDATE cohorts SET name = @name, description = @description, filters = @filters, is_static = @is_static,
           deleted = @deleted, version = @version, updated_at = @updated_at WHERE id = @id`,
        )
        .run({ ...next, filters: JSON.stringify(next.filters), is_static: next.is_static ? 1 : 0, deleted: next.deleted ? 1 : 0 })
      return this.#toObject(next)
    })()
    for (const listener of this.#listeners) listener(teamId)
    return updated
  }

  /** `filters.properties` must be an AND/OR tree; referenced cohorts must exist and not lead back here. */
  #checkFilters(teamId: number, selfId: number | null, filters: JsonObject): void {
    const tree = filters.properties
    if (tree !== undefined && !isGroup(tree)) {
      throw new ValidationError(
        'invalid_input',
        'filters.properties must be a property group: {"type": "AND" | "OR", "values": [...]}.',
        'filters',
      )
    }
    for (const leaf of cohortLeaves(filters)) {
      if (typeof leaf.key !== 'string' && typeof leaf.key !== 'number') {
        throw new ValidationError('invalid_input', 'Every property needs a key.', 'filters')
      }
    }
    for (const ref of cohortRefs(filters)) {
      const target = Number.isInteger(ref) ? this.record(teamId, ref) : null
      if (!target || target.deleted) throw new ValidationError('invalid_input', 'Invalid Cohort ID in filter', 'filters')
      if (selfId !== null && this.withDependencies(teamId, ref).some((c) => c.id === selfId)) {
        throw new ValidationError('invalid_input', 'Cohorts cannot reference other cohorts in a loop.', 'filters')
      }
    }
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
      is_calculating: false,
      errors_calculating: 0,
      last_calculation: null,
      count: cohort.count,
      version: cohort.version,
      created_by: creator ? userSummary(creator) : null,
      created_at: cohort.created_at,
    }
  }
}

function isGroup(node: unknown): boolean {
  if (!isPlainObject(node) || (node.type !== 'AND' && node.type !== 'OR') || !Array.isArray(node.values)) return false
  return node.values.every((v) => (isPlainObject(v) && 'values' in v ? isGroup(v) : isPlainObject(v)))
}
