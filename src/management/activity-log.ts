/**
 * The activity log: who changed what, field by field, in PostHog's shapes (scopes `FeatureFlag`,
 * `Experiment`, `Cohort`, …). Callers write the entry inside the transaction of the change itself, so a
 * change and its log entry commit or roll back together. An `updated` entry without changes is not written.
 */
import { iso, type Clock } from '../common/clock.js'
import { ValidationError } from '../common/errors.js'
import { isPlainObject } from '../common/json.js'
import { MAX_PAGE_SIZE } from '../common/pagination.js'
import type { Db } from '../storage/sqlite/database.js'
import { prepared } from '../storage/sqlite/database.js'

export type ChangeAction = 'created' | 'changed' | 'deleted'

export interface Change {
  type: string
  action: ChangeAction
  /** null for a change PostHog names by its activity alone (a static cohort's members). */
  field: string | null
  before: unknown
  after: unknown
}

export interface ActivityTrigger {
  job_type: string
  job_id: string
  payload: Record<string, unknown>
}

/** Stored and answered as PostHog's `Detail`. */
export interface ActivityDetail {
  changes: Change[] | null
  trigger: ActivityTrigger | null
  name: string | null
  short_id: string | null
  type: string | null
  /** What PostHog's `Detail.context` holds for the scopes that give one (annotations: their scope and dashboard). */
  context?: Record<string, unknown>
}

/** Fields no scope reports (PostHog's `common_field_exclusions`). */
export const COMMON_FIELD_EXCLUSIONS: readonly string[] = [
  'id',
  'uuid',
  'short_id',
  'created_at',
  'created_by',
  'last_modified_at',
  'last_modified_by',
  'updated_at',
  'updated_by',
  'team',
  'team_id',
]

/** Per-scope exclusions (PostHog's `field_exclusions`); `version` is deliberately reported for flags. */
export const FIELD_EXCLUSIONS: Readonly<Record<string, readonly string[]>> = {
  FeatureFlag: ['is_simple_flag', 'experiment', 'featureflagoverride', 'usage_dashboard', 'analytics_dashboards'],
  Experiment: ['feature_flag', 'exposure_cohort', 'holdout', 'saved_metrics', 'experimenttosavedmetric_set'],
  Cohort: ['version', 'pending_version', 'count', 'is_calculating', 'last_calculation', 'errors_calculating'],
}

/** Django's `empty_values`: None, "", [], {} count as "no value" on either side of a change. */
function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true
  if (Array.isArray(value)) return value.length === 0
  return isPlainObject(value) && Object.keys(value).length === 0
}

/** Structural equality of JSON values; object key order does not matter (as with Python dicts). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]))
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]))
  }
  return false
}

/**
 * Field-by-field changes between two snapshots of one object, in the order of the snapshot's keys.
 * Empty→value is `created` (after only), value→empty is `deleted` (before only), otherwise `changed`.
 */
export function changesBetween(scope: string, before: Record<string, unknown>, after: Record<string, unknown>): Change[] {
  const excluded = new Set([...COMMON_FIELD_EXCLUSIONS, ...(FIELD_EXCLUSIONS[scope] ?? [])])
  const fields = [...new Set([...Object.keys(after), ...Object.keys(before)])].filter((f) => !excluded.has(f))
  const changes: Change[] = []
  for (const field of fields) {
    const left = before[field] ?? null
    const right = after[field] ?? null
    const leftEmpty = isEmptyValue(left)
    const rightEmpty = isEmptyValue(right)
    if (leftEmpty && rightEmpty) continue
    if (leftEmpty) changes.push({ type: scope, action: 'created', field, before: null, after: right })
    else if (rightEmpty) changes.push({ type: scope, action: 'deleted', field, before: left, after: null })
    else if (!jsonEqual(left, right)) changes.push({ type: scope, action: 'changed', field, before: left, after: right })
  }
  return changes
}

export interface ActivityEntryInput {
  teamId: number | null
  organizationId: string | null
  /** null for changes made by the system rather than a user. */
  userId: number | null
  scope: string
  itemId: string | number
  activity: string
  name: string | null
  changes: Change[] | null
  trigger?: ActivityTrigger | null
  context?: Record<string, unknown>
}

export type ActivityUser = { first_name: string; email: string } | { first_name: 'System'; email: null; is_system: true }

export interface ActivityEntry {
  id: number
  user: ActivityUser | null
  activity: string
  scope: string
  item_id: string
  detail: ActivityDetail
  created_at: string
}

export interface ActivityPageRequest {
  limit: number
  page: number
}

export interface ActivityPage {
  results: ActivityEntry[]
  total_count: number
  has_next: boolean
  has_previous: boolean
}

interface ActivityRow {
  id: number
  user_id: number | null
  is_system: number
  activity: string
  scope: string
  item_id: string
  detail: string
  created_at: string
  first_name: string | null
  email: string | null
}

export class ActivityLog {
  readonly #db: Db
  readonly #clock: Clock

  constructor(db: Db, clock: Clock) {
    this.#db = db
    this.#clock = clock
  }

  /** Writes one entry; returns false (and writes nothing) for an `updated` entry without changes. */
  log(entry: ActivityEntryInput): boolean {
    if (entry.activity === 'updated' && (entry.changes === null || entry.changes.length === 0)) return false
    const detail: ActivityDetail = {
      changes: entry.changes,
      trigger: entry.trigger ?? null,
      name: entry.name,
      short_id: null,
      type: null,
    }
    if (entry.context !== undefined) detail.context = entry.context
    prepared(this.#db, 
        `INSERT INTO activity_log (team_id, organization_id, user_id, is_system, activity, scope, item_id, detail, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        entry.teamId,
        entry.organizationId,
        entry.userId,
        entry.userId === null ? 1 : 0,
        entry.activity,
        entry.scope,
        String(entry.itemId),
        JSON.stringify(detail),
        iso(this.#clock.now()),
      )
    return true
  }

  /** Newest first; `itemIds` narrows to some objects of the scope. */
  page(teamId: number, scope: string, request: ActivityPageRequest, itemIds?: readonly string[]): ActivityPage {
    const where = ['a.team_id = ?', 'a.scope = ?']
    const params: unknown[] = [teamId, scope]
    if (itemIds) {
      where.push(`a.item_id IN (${itemIds.map(() => '?').join(', ') || 'NULL'})`)
      params.push(...itemIds)
    }
    const total = (
      prepared(this.#db, `SELECT COUNT(*) AS n FROM activity_log a WHERE ${where.join(' AND ')}`).get(...params) as { n: number }
    ).n
    const offset = (request.page - 1) * request.limit
    const rows = prepared(this.#db, 
        `SELECT a.*, u.first_name, u.email FROM activity_log a LEFT JOIN users u ON u.id = a.user_id
         WHERE ${where.join(' AND ')} ORDER BY a.created_at DESC, a.id DESC LIMIT ? OFFSET ?`,
      )
      .all(...params, request.limit, offset) as ActivityRow[]
    return {
      results: rows.map(toEntry),
      total_count: total,
      has_next: offset + request.limit < total,
      has_previous: request.page > 1,
    }
  }
}

function toEntry(row: ActivityRow): ActivityEntry {
  let user: ActivityUser | null = null
  if (row.is_system === 1) user = { first_name: 'System', email: null, is_system: true }
  else if (row.email !== null) user = { first_name: row.first_name ?? '', email: row.email }
  return {
    id: row.id,
    user,
    activity: row.activity,
    scope: row.scope,
    item_id: row.item_id,
    detail: JSON.parse(row.detail) as ActivityDetail,
    created_at: row.created_at,
  }
}

function positiveInt(raw: string | null, name: string, fallback: number): number {
  if (raw === null || raw === '') return fallback
  if (!/^-?\d+$/.test(raw)) throw new ValidationError('invalid', 'A valid integer is required.', name)
  const value = Number(raw)
  if (value < 1) throw new ValidationError('min_value', 'Ensure this value is greater than or equal to 1.', name)
  return value
}

/** `?limit=` (default 10) and `?page=` (default 1), as PostHog's activity endpoints take them. */
export function parseActivityPage(query: URLSearchParams): ActivityPageRequest {
  return {
    limit: Math.min(positiveInt(query.get('limit'), 'limit', 10), MAX_PAGE_SIZE),
    page: positiveInt(query.get('page'), 'page', 1),
  }
}

export interface ActivityPageEnvelope {
  results: ActivityEntry[]
  next: string | null
  previous: string | null
  total_count: number
}

/** PostHog's activity page: `{results, next, previous, total_count}` with page-number links. */
export function activityPageEnvelope(
  baseUrl: string,
  path: string,
  query: URLSearchParams,
  request: ActivityPageRequest,
  page: ActivityPage,
): ActivityPageEnvelope {
  const link = (to: number): string => {
    const params = new URLSearchParams(query)
    params.set('page', String(to))
    params.set('limit', String(request.limit))
    return `${baseUrl}${path}?${params.toString()}`
  }
  return {
    results: page.results,
    next: page.has_next ? link(request.page + 1) : null,
    previous: page.has_previous ? link(request.page - 1) : null,
    total_count: page.total_count,
  }
}
