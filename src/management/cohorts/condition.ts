/**
 * A cohort as one condition over persons.db's persons, for the reads that evaluate a cohort when asked
 * (experiment filters, the persons lists): a static cohort is its stored members; a dynamic one is what its
 * person property conditions (AND/OR groups of them, negated ones included) match, the cohorts it names read
 * in their place. PostHog reads its precalculated members instead; skylark has no calculation step, so a
 * behavioural condition is read where the caller can read events (behavioural.ts) and refused with a 400
 * elsewhere.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { MAX_PROPERTY_DEPTH, readPropertyFilter, type NodeRules, type PropertyNode } from '../../storage/events/index.js'
import { storesCanRun } from '../actions/index.js'
import { hasCriteria } from './filters.js'

/** What reading a cohort needs of it. */
export interface CohortSource {
  is_static: boolean
  deleted: boolean
  filters: JsonObject | null
}

export type CohortById = (teamId: number, id: number) => CohortSource | null

const invalid = (detail: string) => new ValidationError('invalid', detail)

/** No person: what a dynamic cohort without criteria holds (PostHog's calculation finds no one for it). */
const NOBODY: PropertyNode = { not: { type: 'AND', values: [] } }

/** A cohort leaf's cohort id (PostHog reads `int(value)`), null when it names none. */
export function cohortId(leaf: JsonObject): number | null {
  const v = typeof leaf.value === 'string' && /^\s*\d+\s*$/.test(leaf.value) ? Number(leaf.value) : leaf.value
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : null
}

/**
 * A dynamic cohort's conditions as one node over persons: a dynamic cohort it names read in its place, a static
 * one as its members, a negated person condition as its negation (PostHog's `NOT (…)`: a person without the
 * property meets it), a negated cohort (`negation`, or `not_in`) as the persons who are not its members, and a
 * cohort without criteria as no one; a behavioural condition as `behavioural` reads it. A 400 when any condition
 * is another kind (behavioural without `behavioural`, a cycle).
 */
export function cohortCondition(id: number, cohortById: CohortById, teamId: number, behavioural?: (leaf: JsonObject) => PropertyNode): PropertyNode {
  const refuse = () =>
    invalid(`Cohort ${id} has conditions skylark can't evaluate here (only person property conditions and the cohorts they name are; behavioural ones where events are read).`)
  const personLeaf: NodeRules = { kind: (type) => (type === 'person' ? (f) => f : undefined), regex: storesCanRun, refuse: () => { throw refuse() } }
  // Nested cohorts read in place add to the depth, as they would in one stored tree.
  const read = (node: unknown, seen: ReadonlySet<number>, depth: number): PropertyNode => {
    if (depth > MAX_PROPERTY_DEPTH) throw refuse()
    if (!isPlainObject(node)) throw refuse()
    if (Array.isArray(node.values) && (node.type === 'AND' || node.type === 'OR')) return { type: node.type, values: node.values.map((v) => read(v, seen, depth + 1)) }
    if (node.type === 'person' || (node.type === 'behavioral' && behavioural)) {
      const filter = node.type === 'person' ? readPropertyFilter(node, 'properties', personLeaf) : behavioural!(node)
      return node.negation === true ? { not: filter } : filter
    }
    const operator = node.operator ?? 'in'
    const nested = node.type === 'cohort' && (operator === 'in' || operator === 'not_in') ? cohortId(node) : null
    const cohort = nested === null || seen.has(nested) ? null : cohortById(teamId, nested)
    if (cohort === null || cohort.deleted) throw refuse()
    const members = cohort.is_static ? { staticCohort: nested!, teamId } : criteria(cohort, () => read(cohort.filters?.properties, new Set([...seen, nested!]), depth + 1))
    // PostHog's simplified_cohort_filter_properties: `negation` or `not_in` is one negation, of the membership.
    return node.negation === true || operator === 'not_in' ? { not: members } : members
  }
  const cohort = cohortById(teamId, id)
  if (cohort === null) throw refuse()
  return criteria(cohort, () => read(cohort.filters?.properties, new Set([id]), 0))
}

/** A dynamic cohort's conditions as `read` reads them, or no one when it has none. */
const criteria = (cohort: CohortSource, read: () => PropertyNode): PropertyNode => (hasCriteria(cohort.filters) ? read() : NOBODY)

/**
 * A cohort property filter (`{type: "cohort", key: "id", value, operator?}`) as the persons it names: the
 * members of a live cohort of the project, or with `not_in` the other persons (PostHog's property_to_expr reads
 * no other operator); a 400 (naming `attr`) when it names no cohort, or one that is deleted or missing. A dynamic
 * cohort in `evaluated` (evaluatedCohortsNamed) reads as evaluated there, its behavioural conditions included.
 */
export function cohortMembership(leaf: JsonObject, cohortById: CohortById, teamId: number, attr?: string, evaluated?: ReadonlyMap<number, PropertyNode>): PropertyNode {
  const id = cohortId(leaf)
  if (id === null) throw new ValidationError('invalid', 'A cohort filter needs the id of a cohort as its value.', attr)
  const cohort = cohortById(teamId, id)
  if (cohort === null || cohort.deleted) throw new ValidationError('invalid', `The cohort filter names cohort ${id}, which does not exist.`, attr)
  const members = cohort.is_static ? { staticCohort: id, teamId } : (evaluated?.get(id) ?? cohortCondition(id, cohortById, teamId))
  return leaf.operator === 'not_in' ? { not: members } : members
}
