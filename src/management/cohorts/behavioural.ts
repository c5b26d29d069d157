/**
 * The behavioural cohort conditions skylark evaluates when asked, over the events (by name, `event_type:
 * "events"`; `event_filters` on their properties) from the start of a window (`explicit_datetime`, relative or a
 * date, else `time_value` `time_interval`s back) up to now:
 * - PostHog's `performed_event`: the persons who sent one;
 * - `performed_event_multiple`: the persons whose number of them compares with `operator_value` by `operator`
 *   (PostHog's get_count_operator: gte, lte, gt, lt, eq or exact, none meaning eq). As PostHog's cohort query
 *   of behavioural conditions, a person who sent none is not counted at all, so "at most 2" means 1 or 2.
 * Both are read from the event store as each distinct id that sent one with how many it sent, then over
 * persons.db as the persons owning them, their ids' counts added up (so an event by any of a person's distinct
 * ids counts, as PostHog counts by person). Other behavioural kinds (first time, stopped or restarted,
 * sequences, regularity) and actions' events need orders no event store answers yet: each is a 400 naming it.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { parseRelativeDate } from '../../common/relative-dates.js'
import { eventFiltersOnly, readPropertyNode, type CountOperator, type EventStore, type NodeRules, type PropertyNode } from '../../storage/events/index.js'
import { storesCanRun } from '../actions/index.js'
import { cohortCondition, cohortId, type CohortById } from './condition.js'

/** What one behavioural condition reads of the events: who sent the event in the window. */
export interface PerformedEvent {
  teamId: number
  event: string
  /** Inclusive, ms. */
  after: number
  /** Exclusive, ms: now, as PostHog's `timestamp < now()`. */
  before: number
  properties: readonly PropertyNode[]
}

/** Each distinct id that sent matching events, with how many it sent (an event store's `distinctIdCounts`). */
export type PerformedReader = (query: PerformedEvent) => Promise<ReadonlyArray<readonly [string, number]>>

/** The reader of an event store. */
export const performedReader = (events: Pick<EventStore, 'distinctIdCounts'>): PerformedReader => (query) => events.distinctIdCounts(query)

/** A `performed_event_multiple` condition's comparison of a person's count. */
interface Times {
  operator: CountOperator
  value: number
}

/** The distinct-id text a cohort's behavioural conditions may read together (≈400,000 ids of 40 characters). */
export const MAX_PERFORMED_CHARS = 16 * 1024 * 1024

const UNITS: Readonly<Record<string, string>> = { hour: 'h', day: 'd', week: 'w', month: 'm', year: 'y' }

/** PostHog's get_count_operator. */
const COUNT_OPERATORS: Readonly<Record<string, CountOperator>> = { gte: '>=', lte: '<=', gt: '>', lt: '<', eq: '=', exact: '=' }

const KINDS = new Set(['performed_event', 'performed_event_multiple'])

const invalid = (detail: string) => new ValidationError('invalid', detail)

/** How a condition's `event_filters` are read: event property filters only. */
const EVENT_FILTERS: NodeRules = {
  kind: eventFiltersOnly,
  regex: storesCanRun,
  refuse: () => {
    throw invalid('A performed_event condition filters on event properties only.')
  },
}

/** Where a `performed_event` window starts: `explicit_datetime`, else `time_value` `time_interval`s before now. */
function windowStart(leaf: JsonObject, now: number): number {
  if (typeof leaf.explicit_datetime === 'string' && leaf.explicit_datetime !== '') {
    const at = parseRelativeDate(leaf.explicit_datetime, now) ?? Date.parse(leaf.explicit_datetime)
    if (Number.isFinite(at)) return at
    throw invalid(`The behavioural condition's explicit_datetime ${JSON.stringify(leaf.explicit_datetime)} is not a date.`)
  }
  const value = typeof leaf.time_value === 'string' ? Number(leaf.time_value) : leaf.time_value
  const unit = typeof leaf.time_interval === 'string' ? UNITS[leaf.time_interval] : undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw invalid('The behavioural condition needs a positive integer time_value, or an explicit_datetime.')
  if (unit === undefined) throw invalid(`The behavioural condition's time_interval must be one of ${Object.keys(UNITS).join(', ')}.`)
  return parseRelativeDate(`-${value}${unit}`, now)!
}

/** A `performed_event_multiple` leaf's comparison (null for `performed_event`); a 400 for one that has none. */
function timesOf(leaf: JsonObject): Times | null {
  if (leaf.value !== 'performed_event_multiple') return null
  const operator = leaf.operator === undefined || leaf.operator === null ? '=' : COUNT_OPERATORS[String(leaf.operator)]
  if (operator === undefined) throw invalid('count_operator must be gte, lte, eq, or None')
  const value = typeof leaf.operator_value === 'string' ? Number(leaf.operator_value) : leaf.operator_value
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) throw invalid('A performed_event_multiple condition needs a positive integer operator_value.')
  return { operator, value }
}

/** A behavioural leaf as the events it reads; a 400 for one skylark can't evaluate. */
export function performedEvent(leaf: JsonObject, teamId: number, now: number): PerformedEvent {
  if (typeof leaf.value !== 'string' || !KINDS.has(leaf.value)) {
    throw invalid(`The behavioural condition ${JSON.stringify(leaf.value)} is one skylark can't evaluate (only performed_event and performed_event_multiple are).`)
  }
  if ((leaf.event_type ?? 'events') !== 'events' || typeof leaf.key !== 'string') {
    throw invalid(`A ${leaf.value} condition skylark evaluates names an event (event_type "events", its name as key), not an action's.`)
  }
  const filters = Array.isArray(leaf.event_filters) ? leaf.event_filters : []
  const properties = filters.map((f, i) => readPropertyNode(isPlainObject(f) ? f : null, `event_filters[${i}]`, 1, EVENT_FILTERS))
  return { teamId, event: leaf.key, after: windowStart(leaf, now), before: now, properties }
}

/**
 * The cohort's condition over persons (cohortCondition) with its behavioural conditions read from the events by
 * `read` first; without one (no event store), such a cohort is refused as before.
 */
export async function evaluatedCohortCondition(id: number, cohortById: CohortById, teamId: number, read: PerformedReader | null, now: number): Promise<PropertyNode> {
  if (read === null) return cohortCondition(id, cohortById, teamId)
  // By what they read: a condition and its negation, the same events counted or not, or the same condition in
  // two cohorts are read once.
  const queries = new Map<string, PerformedEvent>()
  const keyOf = (leaf: JsonObject) => JSON.stringify(performedEvent(leaf, teamId, now))
  const NONE: PropertyNode = { personsOf: [], teamId }
  // Walked twice: once to find what to read (and refuse what can't be), once with what was read.
  cohortCondition(id, cohortById, teamId, (leaf) => {
    const query = performedEvent(leaf, teamId, now)
    timesOf(leaf)
    queries.set(JSON.stringify(query), query)
    return NONE
  })
  const found = new Map<string, { ids: string[]; counts: number[] }>()
  let chars = 0
  for (const [key, query] of queries) {
    const rows = await read(query)
    for (const [distinctId] of rows) chars += distinctId.length
    if (chars > MAX_PERFORMED_CHARS) throw invalid(`Cohort ${id}'s behavioural conditions match too many persons to evaluate at once.`)
    found.set(key, { ids: rows.map(([distinctId]) => distinctId), counts: rows.map(([, n]) => n) })
  }
  return cohortCondition(id, cohortById, teamId, (leaf) => {
    const sent = found.get(keyOf(leaf))
    if (sent === undefined) return NONE
    const times = timesOf(leaf)
    return times === null ? { personsOf: sent.ids, teamId } : { personsOf: sent.ids, teamId, times: { counts: sent.counts, ...times } }
  })
}

/**
 * Each live dynamic cohort a property filter tree (as sent: AND/OR groups and their leaves) names, evaluated with
 * its behavioural conditions read, by id: what cohortMembership reads them as, where a filter is parsed
 * synchronously. A tree that can't be read is left to its parser to refuse.
 */
export async function evaluatedCohortsNamed(tree: unknown, cohortById: CohortById, teamId: number, read: PerformedReader | null, now: number): Promise<Map<number, PropertyNode>> {
  const ids = new Set<number>()
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk)
    else if (isPlainObject(node)) {
      if (Array.isArray(node.values)) node.values.forEach(walk)
      else if (node.type === 'cohort' && cohortId(node) !== null) ids.add(cohortId(node)!)
    }
  }
  walk(tree)
  const evaluated = new Map<number, PropertyNode>()
  for (const id of ids) {
    const cohort = cohortById(teamId, id)
    if (cohort !== null && !cohort.deleted && !cohort.is_static) evaluated.set(id, await evaluatedCohortCondition(id, cohortById, teamId, read, now))
  }
  return evaluated
}
