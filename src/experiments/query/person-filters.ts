/**
 * Person property and cohort filters in the new engine (a metric source's `properties`, an exposure or
 * activation config's, the project's test account filters): each reads as the distinct ids of the persons it
 * matches now in persons.db, as PostHog evaluates them in its `person_id_override_properties_joined` mode (the
 * current person's properties, joined by distinct id) and as skylark's events list does. Events carry no person
 * properties here, so PostHog's default — the properties a person had when each event was sent — is not what
 * is computed: a person whose property changed during the experiment counts with its current value for every
 * event.
 *
 * A cohort is its static members, or for a dynamic cohort the persons its person property conditions (AND/OR
 * groups of them, negated ones included, the cohorts it names read in their place, negated or not) and its
 * behavioural conditions (read from the event store, management/cohorts/behavioural.ts) match; a cohort with a
 * sequence condition is a 400 naming it. `not_in` reads the other persons.
 *
 * A HogQL filter reading person properties (`person.properties.<key>`, and no event ones) reads as the distinct
 * ids of the persons whose properties its expression holds for, as a person property filter does. A person
 * property HogQL math reads (`math_hogql`, mixed with event properties as it likes) reads as each text it has
 * among the project's persons now with their distinct ids, as a person breakdown does: each event then reads its
 * distinct id's person's text (PersonProperty), the same person state the filters read.
 *
 * A group property filter (`type: "group"` with its `group_type_index`) reads as the keys of the groups of that
 * type it matches now, and matches the events whose `$group_<index>` is one of them.
 *
 * A breakdown by a person property reads each exposure's distinct id's person's value now: every text the
 * property has among the project's persons, with their distinct ids (an exposure by another distinct id is in
 * the null group). One by a group property (`type: "group"` with its `group_type_index`) reads the value the
 * exposure's group of that type (its `$group_<index>`) has now, as PostHog's `group_<index>.properties` join does.
 *
 * The filters are found in the query's JSON and resolved before the metric is planned, so that planning stays
 * synchronous and pure (metric.ts and exposure.ts take the lookup). A filter matching more than
 * MAX_PERSON_FILTER_CHARS of distinct ids reads as the events of none of the distinct ids of the persons it
 * fails (so a distinct id without a person passes it), and one both matching and failing that many is a 400
 * asking to narrow it: ClickHouse reads the ids written into the query (18.16 takes no query parameters).
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { cohortId, evaluatedCohortCondition, storesCanRun, type CohortById, type PerformedReader } from '../../management/index.js'
import {
  hogqlFilter,
  HogqlMathError,
  hogqlProperties,
  parseHogqlMath,
  readPropertyFilter,
  readsPersons,
  REGEX_LIMITS,
  type EventPropertyFilter,
  type HogqlCondition,
  type HogqlQueryPlan,
  type AnswerValue,
  type NodeRules,
  type HolderBreakdown,
  type FieldLookupOf,
  type PersonProperty,
  type PropertyNode,
  type PropertyPath,
} from '../../storage/events/index.js'
import type { PersonLookup } from '../metrics.js'

/**
 * persons.db's scans of the distinct ids of the persons matching filters, or of a static cohort's members; with
 * `failing` of the other persons (null: more than `maxChars` of them).
 */
export interface PersonMatcher {
  distinctIdsMatching(teamId: number, properties: readonly PropertyNode[], maxChars: number, failing?: boolean): Promise<string[] | null>
  distinctIdsInCohort(teamId: number, cohortId: number, maxChars: number, failing?: boolean): Promise<string[] | null>
  groupKeysMatching(teamId: number, groupTypeIndex: number, properties: readonly PropertyNode[], maxChars: number, failing?: boolean): Promise<string[] | null>
  /** Each text a person property (a path: a value within one) has, with its persons' distinct ids (null: more than `maxChars` of ids). */
  distinctIdsByProperty(teamId: number, key: string | PropertyPath, maxChars: number): Promise<Array<{ text: string; ids: string[] }> | null>
  /** Each text a group property (a path: a value within one) has among the groups of a type, with their keys (null: more than `maxChars` of keys). */
  groupKeysByProperty(teamId: number, groupTypeIndex: number, key: string | PropertyPath, maxChars: number): Promise<Array<{ text: string; ids: string[] }> | null>
  /** What a HogQL query reads of the events' groups and persons now (hogql-lookups.ts), each value with its keys (null: more than `maxChars` of keys). */
  lookupValues(teamId: number, of: FieldLookupOf, maxChars: number): Promise<Array<{ text: string | number; ids: string[] }> | null>
  /** A HogQL query of the persons or groups table (`FROM persons`, `FROM groups`): its rows. */
  hogqlQuery(teamId: number, plan: HogqlQueryPlan): Promise<AnswerValue[][]>
}

/** The distinct-id text one person filter may resolve to (≈100,000 ids of 40 characters). */
export const MAX_PERSON_FILTER_CHARS = 4 * 1024 * 1024

const invalid = (detail: string) => new ValidationError('invalid', detail)
const filterKey = (f: EventPropertyFilter) => JSON.stringify([f.key, f.operator, f.value ?? null])

const cohortKey = (leaf: JsonObject) => JSON.stringify([cohortId(leaf), leaf.operator === 'not_in'])

/** What can't be read while the filters are found: the planner reads it again and refuses it in its words. */
const unreadable = (): never => {
  throw new Error('unreadable')
}

/** Reads a node, throwing `Error` for what can't be read: the planner reads it again and refuses it in its words. */
const ANY_FILTER: NodeRules = { kind: () => (f) => f, regex: storesCanRun, refuse: unreadable }

/** A group leaf as the planner reads it: any unreadable part a 400. */
const GROUP_LEAF: NodeRules = {
  kind: () => (f) => f,
  regex: storesCanRun,
  refuse: (r) => {
    if (r.why === 'regex') throw invalid(`A group filter's regex ${JSON.stringify(r.node.value)} is one skylark's stores can't run (${REGEX_LIMITS}).`)
    throw invalid(r.why === 'no_key' ? 'Every metric property filter needs a key.' : `A group filter's ${r.why === 'operator' ? 'operator' : 'value'} can't be read.`)
  },
}

interface Found {
  persons: Map<string, EventPropertyFilter>
  cohorts: Map<string, JsonObject>
  /** The person and group properties of breakdowns (`{property, type: "person"}`, `{property, type: "group", group_type_index}`), by breakdownKey. */
  breakdowns: Map<string, { key: string; groupTypeIndex: number | null }>
  /** Group property filters, with their type's index. */
  groups: Map<string, { index: number; filter: EventPropertyFilter }>
  /** HogQL filters reading person properties, by their key. */
  hogql: Map<string, HogqlCondition>
  /** The person properties (paths) HogQL math reads (`math_hogql`'s `person.properties.<key>`), by their JSON. */
  mathPersons: Map<string, PropertyPath>
}

/** A group leaf's type index (0–4), null when it names none. */
function groupIndexOf(leaf: JsonObject): number | null {
  const i = leaf.group_type_index
  return typeof i === 'number' && Number.isInteger(i) && i >= 0 && i <= 4 ? i : null
}

const groupKey = (index: number, f: EventPropertyFilter) => JSON.stringify([index, f.key, f.operator, f.value ?? null])
const breakdownKey = (key: string, groupTypeIndex: number | null) => JSON.stringify([key, groupTypeIndex])

/** The person properties a `math_hogql` text reads; none for a text the planner refuses (it words why). */
function mathPersonPaths(text: string): PropertyPath[] {
  try {
    return hogqlProperties(parseHogqlMath(text).expr, 'person')
  } catch (error) {
    if (error instanceof HogqlMathError) return []
    throw error
  }
}

/** Every readable person, group and cohort filter and person or group breakdown in `node`, at any depth. */
function findFilters(node: unknown, into: Found): Found {
  if (Array.isArray(node)) for (const item of node) findFilters(item, into)
  else if (isPlainObject(node)) {
    if (node.math === 'hogql' && typeof node.math_hogql === 'string') {
      for (const path of mathPersonPaths(node.math_hogql)) into.mathPersons.set(JSON.stringify(path), path)
    }
    if (node.type === 'cohort' && cohortId(node) !== null) into.cohorts.set(cohortKey(node), node)
    else if (node.type === 'hogql' && typeof node.key === 'string') {
      try {
        const condition = hogqlFilter({ key: node.key, operator: 'exact' }, unreadable, storesCanRun)
        if (readsPersons(condition, unreadable)) into.hogql.set(node.key, condition)
      } catch {
        // The planner refuses it with its message.
      }
    } else if ((node.type === 'person' || node.type === 'group') && node.key === undefined && (typeof node.property === 'string' || Number.isInteger(node.property))) {
      const groupTypeIndex = node.type === 'group' ? groupIndexOf(node) : null
      if (node.type === 'person' || groupTypeIndex !== null) into.breakdowns.set(breakdownKey(String(node.property), groupTypeIndex), { key: String(node.property), groupTypeIndex })
    } else if ((node.type === 'person' || node.type === 'group') && typeof node.key === 'string') {
      try {
        const filter = readPropertyFilter(node, 'properties', ANY_FILTER) as EventPropertyFilter
        const index = groupIndexOf(node)
        if (node.type === 'person') into.persons.set(filterKey(filter), filter)
        else if (index !== null) into.groups.set(groupKey(index, filter), { index, filter })
      } catch {
        // The planner refuses it with its message.
      }
    }
    for (const value of Object.values(node)) findFilters(value, into)
  }
  return into
}

/** The ids (distinct ids, or group keys) a read names, or the ones it fails when they are too many; a 400 when both are. */
async function resolve(what: string, read: (failing: boolean) => Promise<string[] | null>, of = 'persons'): Promise<{ distinctIds: string[]; excluded?: boolean }> {
  const ids = await read(false)
  if (ids !== null) return { distinctIds: ids }
  const failing = await read(true)
  if (failing === null) throw invalid(`${what} splits too many ${of} to compute this query; narrow it.`)
  return { distinctIds: failing, excluded: true }
}

/**
 * A cohort's persons now as their distinct ids: a static cohort's members, or the persons a dynamic one's conditions
 * match (its behavioural ones read with `performed`, refused without); or, `excluded`, the other persons' when the
 * members are too many.
 */
export async function cohortMembers(
  matcher: PersonMatcher,
  cohortById: CohortById | null,
  teamId: number,
  id: number,
  maxChars = MAX_PERSON_FILTER_CHARS,
  performed: { read: PerformedReader; now: number } | null = null,
): Promise<{ distinctIds: string[]; excluded?: boolean }> {
  const cohort = cohortById?.(teamId, id) ?? null
  if (cohort === null || cohort.deleted) throw invalid(`The cohort filter names cohort ${id}, which does not exist.`)
  const condition = cohort.is_static ? null : await evaluatedCohortCondition(id, cohortById!, teamId, performed?.read ?? null, performed?.now ?? 0)
  return resolve(`Cohort ${id}`, (failing) => (condition === null ? matcher.distinctIdsInCohort(teamId, id, maxChars, failing) : matcher.distinctIdsMatching(teamId, [condition], maxChars, failing)))
}

/**
 * The lookup planning reads person, group and cohort filters and person property breakdowns with: each found in
 * `nodes` resolved to the distinct ids (group keys) it matches. Null without persons.db (they are then refused).
 * `performed` reads cohorts' behavioural conditions from the events as of `now`; without it they are refused.
 */
export async function personFilterLookup(
  matcher: PersonMatcher | null,
  cohortById: CohortById | null,
  teamId: number,
  nodes: readonly unknown[],
  maxChars = MAX_PERSON_FILTER_CHARS,
  performed: { read: PerformedReader; now: number } | null = null,
): Promise<PersonLookup | null> {
  if (matcher === null) return null
  const found = findFilters(nodes, { persons: new Map(), cohorts: new Map(), breakdowns: new Map(), groups: new Map(), hogql: new Map(), mathPersons: new Map() })
  const persons = new Map<string, PropertyNode>()
  for (const [key, filter] of found.persons) {
    persons.set(key, await resolve(`The person filter on ${filter.key}`, (failing) => matcher.distinctIdsMatching(teamId, [filter], maxChars, failing)))
  }
  for (const [key, condition] of found.hogql) {
    persons.set(`hogql ${key}`, await resolve(`The HogQL filter ${JSON.stringify(key)}`, (failing) => matcher.distinctIdsMatching(teamId, [condition], maxChars, failing)))
  }
  const cohorts = new Map<string, PropertyNode>()
  for (const [key, leaf] of found.cohorts) {
    const node = await cohortMembers(matcher, cohortById, teamId, cohortId(leaf)!, maxChars, performed)
    // `not_in`: the events of none of the members.
    cohorts.set(key, leaf.operator === 'not_in' ? { ...node, excluded: !node.excluded } : node)
  }
  const groups = new Map<string, PropertyNode>()
  for (const [key, { index, filter }] of found.groups) {
    const node = await resolve(`The group filter on ${filter.key}`, (failing) => matcher.groupKeysMatching(teamId, index, [filter], maxChars, failing), 'groups')
    groups.set(key, { groupTypeIndex: index, groupKeys: node.distinctIds, excluded: node.excluded })
  }
  const breakdowns = new Map<string, HolderBreakdown>()
  for (const [id, { key, groupTypeIndex }] of found.breakdowns) {
    const person = groupTypeIndex === null
    const values = await (person ? matcher.distinctIdsByProperty(teamId, key, maxChars) : matcher.groupKeysByProperty(teamId, groupTypeIndex, key, maxChars))
    if (values === null) throw invalid(`The breakdown by the ${person ? 'person' : 'group'} property ${key} covers too many ${person ? 'persons' : 'groups'} to compute this query.`)
    breakdowns.set(id, { groupTypeIndex, values })
  }
  const mathPersons = new Map<string, PersonProperty>()
  for (const [id, path] of found.mathPersons) {
    const values = await matcher.distinctIdsByProperty(teamId, path, maxChars)
    if (values === null) throw invalid(`The person property ${path.join('.')} in math_hogql covers too many persons to compute this query.`)
    mathPersons.set(id, { path, values })
  }
  return {
    person: (filter) => persons.get(filterKey(filter)) ?? { distinctIds: [] },
    personProperty: (path) => mathPersons.get(JSON.stringify(path)) ?? { path, values: [] },
    hogql: (key) => persons.get(`hogql ${key}`) ?? { distinctIds: [] },
    breakdown: (key, groupTypeIndex = null) => breakdowns.get(breakdownKey(key, groupTypeIndex)) ?? { groupTypeIndex, values: [] },
    group: (leaf) => {
      const index = groupIndexOf(leaf)
      if (index === null) throw invalid('A group filter needs a group_type_index from 0 to 4.')
      const filter = readPropertyFilter(leaf, 'properties', GROUP_LEAF) as EventPropertyFilter
      return groups.get(groupKey(index, filter)) ?? { groupTypeIndex: index, groupKeys: [] }
    },
    cohort: (leaf) => {
      const node = cohorts.get(cohortKey(leaf))
      if (node === undefined) throw invalid('A cohort filter needs the id of a cohort as its value.')
      return node
    },
  }
}
