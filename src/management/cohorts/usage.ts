/**
 * Who depends on a cohort: active flags (directly or through the cohorts their cohorts reference) and
 * live cohorts whose tree names it. Deleting a cohort they need, or giving it event filters, would break
 * them at evaluation (`dependency_not_found_cohort`, `cohort_filters_parsing_error`), so changes check here.
 */
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { safeInt } from '../feature-flags/record.js'
import { cohortRefs } from './filters.js'

export interface CohortNode {
  id: number
  name: string
  filters: JsonObject
  is_static: boolean
  deleted: boolean
}

export interface FlagNode {
  key: string
  name: string
  filters: JsonObject
}

/** The cohorts a flag's conditions name, directly. */
function flagCohortIds(filters: JsonObject): number[] {
  const groups = Array.isArray(filters.groups) ? filters.groups : []
  return groups.flatMap((group) => {
    const props = isPlainObject(group) && Array.isArray(group.properties) ? group.properties : []
    return props.flatMap((p) => (isPlainObject(p) && p.type === 'cohort' && safeInt(p.value) !== null ? [safeInt(p.value)!] : []))
  })
}

/**
 * Every live cohort a flag evaluates: those it names and, transitively, those they reference. The walk
 * stops at static cohorts, as PostHog's get_cohort_ids(stop_traversal_at_static=True): their members are
 * stored, so their filters are never read.
 */
export function flagCohorts(filters: JsonObject, cohortById: (id: number) => CohortNode | null): Map<number, CohortNode> {
  const seen = new Map<number, CohortNode>()
  const visit = (id: number): void => {
    if (seen.has(id)) return
    const cohort = cohortById(id)
    if (!cohort || cohort.deleted) return
    seen.set(id, cohort)
    if (!cohort.is_static) cohortRefs(cohort.filters).forEach(visit)
  }
  flagCohortIds(filters).forEach(visit)
  return seen
}

/** The flags (of those given, the active ones) that evaluate the cohort. */
export function flagsUsing<F extends FlagNode>(cohortId: number, flags: readonly F[], cohortById: (id: number) => CohortNode | null): F[] {
  return flags.filter((flag) => flagCohorts(flag.filters, cohortById).has(cohortId))
}

/** PostHog's names list: the first five, then ", and N more". */
export function namesList(names: readonly string[]): string {
  const shown = names.slice(0, 5).join(', ')
  return names.length > 5 ? `${shown}, and ${names.length - 5} more` : shown
}

/** PostHog's COHORT_USED_IN_PAGE_SIZE: the most of each kind `used_in` lists. */
export const USED_IN_PAGE_SIZE = 100

/** One kind of `used_in`'s answer, as PostHog's `_used_in_block`. */
export interface UsedInBlock<T> {
  results: T[]
  total: number
  has_more: boolean
}

export interface CohortUsedIn {
  feature_flags: UsedInBlock<{ id: number; key: string; name: string }>
  insights: UsedInBlock<{ id: number; short_id: string; name: string }>
  cohorts: UsedInBlock<{ id: number; name: string }>
}

export const block = <T>(all: T[]): UsedInBlock<T> => ({ results: all.slice(0, USED_IN_PAGE_SIZE), total: all.length, has_more: all.length > USED_IN_PAGE_SIZE })
