/**
 * A cohort's `filters`: PostHog's CohortFilters rules (its pydantic models in posthog/api/cohort.py), with
 * its messages. A tree the flag evaluator could not read must be refused here: stored, it turns every
 * flag on the cohort into `cohort_filters_parsing_error` or `dependency_not_found_cohort` later.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { isParseableDate } from '../feature-flags/validation.js'

const LEAF_TYPES = ['behavioral', 'cohort', 'person', 'person_metadata'] as const
const TAGS = [...LEAF_TYPES, 'AND', 'OR'].map((tag) => `'${tag}'`).join(', ')
/** PostHog checks the dates of these two only, as for flags. */
const DATE_OPERATORS = new Set(['is_date_after', 'is_date_before'])

const invalid = (detail: string) => new ValidationError('invalid', detail, 'filters')

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

/** The ids of the cohorts a tree references (stored trees hold integers; older rows may hold text). */
export const cohortRefs = (filters: JsonObject): number[] =>
  cohortLeaves(filters)
    .filter((leaf) => leaf.type === 'cohort')
    .map((leaf) => Number(leaf.value))

export const hasBehaviouralLeaf = (filters: JsonObject): boolean => cohortLeaves(filters).some((leaf) => leaf.type === 'behavioral')

/** PostHog's cohort_filters_have_values: the tree holds at least one condition. */
export const hasCriteria = (filters: unknown): boolean => isPlainObject(filters) && cohortLeaves(filters).length > 0

/**
 * Checks `filters` as PostHog's CohortFilters does and returns what is stored: the same tree with nested
 * cohort ids as integers (pydantic's `value: int` turns "1" into 1; text ids once made flags miss the
 * cohort). The first broken rule in tree order is reported.
 */
export function parseCohortFilters(filters: JsonObject): JsonObject {
  if (!('properties' in filters)) throw invalid("Must contain a 'properties' key with type and values")
  return { ...filters, properties: parseNode(filters.properties) }
}

function parseNode(node: unknown): JsonObject {
  if (!isPlainObject(node)) throw invalid('Input should be a valid dictionary or instance of the model')
  if (node.type === undefined) throw invalid("Unable to extract tag using discriminator 'type'")
  if (node.type === 'AND' || node.type === 'OR') {
    if (!Array.isArray(node.values)) throw invalid('Input should be a valid list')
    return { ...node, values: node.values.map(parseNode) }
  }
  switch (node.type) {
    case 'cohort':
      return parseCohortLeaf(node)
    case 'person':
    case 'person_metadata':
      return parsePersonLeaf(node, node.type as string)
    case 'behavioral':
      return parseBehaviouralLeaf(node)
    default:
      throw invalid(`Input tag ${pyRepr(node.type)} found using 'type' does not match any of the expected tags: ${TAGS}`)
  }
}

function parseCohortLeaf(leaf: JsonObject): JsonObject {
  if (leaf.key === undefined) throw missing('cohort', 'key')
  if (leaf.value === undefined) throw missing('cohort', 'value')
  if (leaf.key !== 'id') throw invalid("Input should be 'id'")
  const value = leaf.value
  let id: number | null = null
  if (typeof value === 'number') id = Number.isSafeInteger(value) ? value : null
  else if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) id = Number(value.trim())
  if (id === null || !Number.isSafeInteger(id)) {
    throw invalid(typeof value === 'string' ? 'Input should be a valid integer, unable to parse string as an integer' : 'Input should be a valid integer')
  }
  return { ...leaf, value: id }
}

function parsePersonLeaf(leaf: JsonObject, noun: string): JsonObject {
  if (leaf.key === undefined) throw missing(noun, 'key')
  if (typeof leaf.key !== 'string') throw invalid('Input should be a valid string')
  const operator = leaf.operator ?? null
  const value = leaf.value ?? null
  const absent: string[] = []
  if (value === null && operator !== 'is_set' && operator !== 'is_not_set') absent.push('value')
  if (operator === null) absent.push('operator')
  if (absent.length > 0) throw invalid(`Missing required keys for ${noun} filter: ${absent.join(', ')}`)
  if (typeof operator !== 'string') throw invalid('Input should be a valid string')
  if (DATE_OPERATORS.has(operator) && !isParseableDate(value)) {
    throw invalid(
      `Invalid date value ${pyRepr(value)} for operator '${operator}'. ` +
        "Expected a relative date (e.g., '-7d', '30d') or an ISO 8601 date (e.g., '2024-01-15').",
    )
  }
  return leaf
}

function parseBehaviouralLeaf(leaf: JsonObject): JsonObject {
  for (const field of ['key', 'value', 'event_type']) if (leaf[field] === undefined) throw missing('behavioral', field)
  if (typeof leaf.key !== 'string' && typeof leaf.key !== 'number') throw invalid('Input should be a valid string')
  if (typeof leaf.value !== 'string' || typeof leaf.event_type !== 'string') throw invalid('Input should be a valid string')
  return leaf
}

const missing = (noun: string, field: string) => invalid(`Missing required keys for ${noun} filter: ${field}`)

/** How Python prints the value in pydantic's message: text in single quotes. */
const pyRepr = (value: unknown): string => (typeof value === 'string' ? `'${value}'` : JSON.stringify(value))

/**
 * What PostHog's `hide_behavioral_cohorts` leaves out (the flag editor's cohort picker): dynamic cohorts
 * with event filters and those that reference one, transitively. Static cohorts stay, since flags accept
 * them whatever their filters say.
 */
export function behaviouralIds(cohorts: ReadonlyArray<{ id: number; is_static: boolean; filters: JsonObject }>): Set<number> {
  const byId = new Map(cohorts.map((c) => [c.id, c]))
  const verdicts = new Map<number, boolean>()
  const isBehavioural = (id: number): boolean => {
    const known = verdicts.get(id)
    if (known !== undefined) return known
    verdicts.set(id, false) // a loop (refused on write, but old rows) ends here
    const cohort = byId.get(id)
    const verdict = cohort !== undefined && !cohort.is_static && (hasBehaviouralLeaf(cohort.filters) || cohortRefs(cohort.filters).some(isBehavioural))
    verdicts.set(id, verdict)
    return verdict
  }
  return new Set(cohorts.filter((c) => isBehavioural(c.id)).map((c) => c.id))
}
