/**
 * The list endpoint's query parameters, as PostHog reads them: `search` (key or name, case-insensitive),
 * `active` (`true`, `false` or `STALE`), `type` (`boolean`, `multivariant`, `experiment`, `remote_config`),
 * `created_by_id`, `evaluation_runtime`, `tags` and `excluded_properties` (JSON lists; malformed JSON is
 * ignored), `has_evaluation_tags` (`true`, `1` or `yes`: with evaluation tags; anything else: without) and
 * `order` (a field, `-` for descending; default `-created_at`). Bulk delete sends the same filters as a JSON
 * object (`filtersAsQuery`).
 */
import { tryParseJson } from '../../common/json.js'
import { NEWEST_FIRST, parseCreatedById, parseListOrder, type ListOrder } from '../../common/pagination.js'

export type FlagType = 'boolean' | 'multivariant' | 'experiment' | 'remote_config'

export interface FlagListFilter {
  search?: string
  active?: boolean
  stale?: boolean
  type?: FlagType
  createdById?: number
  evaluationRuntime?: string
  tags?: string[]
  excludedKeys?: string[]
  hasEvaluationTags?: boolean
  order: ListOrder
}

/** `order` values accepted, mapped to columns. */
const ORDER_COLUMNS: ReadonlyMap<string, string> = new Map([
  ['id', 'id'],
  ['key', 'key'],
  ['name', 'name'],
  ['created_at', 'created_at'],
  ['updated_at', 'updated_at'],
  ['active', 'active'],
  ['version', 'version'],
  ['created_by', 'created_by_id'],
  ['created_by_id', 'created_by_id'],
  ['evaluation_runtime', 'evaluation_runtime'],
])

const FLAG_TYPES: readonly FlagType[] = ['boolean', 'multivariant', 'experiment', 'remote_config']

function stringList(raw: string | null): string[] | undefined {
  if (raw === null || raw === '') return undefined
  const parsed = tryParseJson(raw)
  if (!Array.isArray(parsed)) return undefined
  return parsed.filter((v): v is string => typeof v === 'string')
}

export function parseFlagListQuery(query: URLSearchParams): FlagListFilter {
  const filter: FlagListFilter = { order: parseListOrder(query.get('order'), ORDER_COLUMNS, NEWEST_FIRST) }
  const search = query.get('search')
  if (search) filter.search = search
  const active = query.get('active')
  if (active === 'STALE') filter.stale = true
  else if (active !== null && active !== '') filter.active = active === 'true'
  const type = query.get('type')
  if (type && (FLAG_TYPES as readonly string[]).includes(type)) filter.type = type as FlagType
  const createdById = parseCreatedById(query)
  if (createdById !== undefined) filter.createdById = createdById
  const runtime = query.get('evaluation_runtime')
  if (runtime) filter.evaluationRuntime = runtime
  const tags = stringList(query.get('tags'))
  if (tags?.length) filter.tags = tags
  const excluded = stringList(query.get('excluded_properties'))
  if (excluded?.length) filter.excludedKeys = excluded
  const hasEvaluationTags = query.get('has_evaluation_tags')
  if (hasEvaluationTags !== null) filter.hasEvaluationTags = ['true', '1', 'yes'].includes(hasEvaluationTags.toLowerCase())
  return filter
}

/** The filter keys bulk delete accepts (PostHog's allow-list: nothing that would widen a deletion by accident). */
export const BULK_FILTER_KEYS: ReadonlySet<string> = new Set(['active', 'created_by_id', 'search', 'type', 'evaluation_runtime', 'excluded_properties', 'tags', 'has_evaluation_tags'])

/** A JSON object of list filters as the query the list reads: strings as they are, other values as JSON text. */
export function filtersAsQuery(filters: Record<string, unknown>): URLSearchParams {
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(filters)) query.set(key, typeof value === 'string' ? value : JSON.stringify(value))
  return query
}
