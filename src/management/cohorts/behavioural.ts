/**
 * The behavioural cohort conditions skylark evaluates when asked, as PostHog's cohort query of them has them, over
 * an event by name (`event_type: "events"`; `event_filters` on its properties), up to now:
 * - `performed_event`: the persons who sent one since the start (`explicit_datetime`, relative or a date, else
 *   `time_value` `time_interval`s back);
 * - `performed_event_multiple`: those whose number of them since the start compares with `operator_value` by
 *   `operator` (PostHog's get_count_operator: gte, lte, gt, lt, eq or exact, none meaning eq);
 * - `performed_event_first_time`: those whose first one ever came after the start;
 * - `stopped_performing_event`: those who sent one between the start and the more recent `seq_time_value`
 *   `seq_time_interval`s back, and none since;
 * - `restarted_performing_event`: those who sent one before the start, none from then to the `seq_time` start,
 *   and one since;
 * - `performed_event_regularly`: those who sent a number that compares with `operator_value` by `operator` in at
 *   least `min_periods` of the last `total_periods` periods of `time_value` `time_interval`s.
 * Each reads the event store once (an identical condition, negated or in another cohort, is read once): every
 * distinct id that sent one in the time it looks at, with its first one and its counts in the condition's windows.
 * Over persons.db, a person's tallies are those of all its ids (the earliest first, the counts added up), so an
 * event by any of a person's ids counts, as PostHog counts by person. As in PostHog's query, a person who sent none
 * in that time is not counted at all, so "at most 2 times" means 1 or 2. Sequences
 * (`performed_event_sequence`) and actions' events are a 400 naming them.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { parseRelativeDate } from '../../common/relative-dates.js'
import {
  eventFiltersOnly,
  readPropertyNode,
  type CountOperator,
  type EventStore,
  type NodeRules,
  type PropertyNode,
  type TallyCheck,
  type TallyQuery,
  type TallyRow,
} from '../../storage/events/index.js'
import { storesCanRun } from '../actions/index.js'
import { cohortCondition, cohortId, type CohortById } from './condition.js'

/** What one behavioural condition reads of the events, and how a person's tallies of them decide. */
export interface BehaviouralReading {
  query: TallyQuery
  /** Null: every person who sent one holds. */
  checks: TallyCheck[] | null
  /** How many of the checks must hold. */
  atLeast: number
}

/** Each distinct id that sent matching events, with its tallies (an event store's `distinctIdTallies`). */
export type PerformedReader = (query: TallyQuery) => Promise<readonly TallyRow[]>

/** The reader of an event store. */
export const performedReader = (events: Pick<EventStore, 'distinctIdTallies'>): PerformedReader => (query) => events.distinctIdTallies(query)

/** The distinct-id text a cohort's behavioural conditions may read together (≈400,000 ids of 40 characters). */
export const MAX_PERFORMED_CHARS = 16 * 1024 * 1024

const UNITS: Readonly<Record<string, string>> = { hour: 'h', day: 'd', week: 'w', month: 'm', year: 'y' }

/** PostHog's get_count_operator. */
const COUNT_OPERATORS: Readonly<Record<string, CountOperator>> = { gte: '>=', lte: '<=', gt: '>', lt: '<', eq: '=', exact: '=' }

const invalid = (detail: string) => new ValidationError('invalid', detail)

/** How a condition's `event_filters` are read: event property filters only. */
const EVENT_FILTERS: NodeRules = {
  kind: eventFiltersOnly,
  regex: storesCanRun,
  refuse: () => {
    throw invalid('A behavioural condition filters on event properties only.')
  },
}

const positiveInteger = (raw: unknown): number | null => {
  const value = typeof raw === 'string' ? Number(raw) : raw
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null
}

/** `count` `interval`s before `at` (calendar months and years), `count` ≥ 0. */
function before(at: number, count: number, interval: unknown, name: string): number {
  const unit = typeof interval === 'string' ? UNITS[interval] : undefined
  if (unit === undefined) throw invalid(`The behavioural condition's ${name} must be one of ${Object.keys(UNITS).join(', ')}.`)
  return count === 0 ? at : parseRelativeDate(`-${count}${unit}`, at)!
}

/** Where a condition's time starts: `explicit_datetime`, else `time_value` `time_interval`s before now. */
function windowStart(leaf: JsonObject, now: number): number {
  if (typeof leaf.explicit_datetime === 'string' && leaf.explicit_datetime !== '') {
    const at = parseRelativeDate(leaf.explicit_datetime, now) ?? Date.parse(leaf.explicit_datetime)
    if (Number.isFinite(at)) return at
    throw invalid(`The behavioural condition's explicit_datetime ${JSON.stringify(leaf.explicit_datetime)} is not a date.`)
  }
  const value = positiveInteger(leaf.time_value)
  if (value === null) throw invalid('The behavioural condition needs a positive integer time_value, or an explicit_datetime.')
  return before(now, value, leaf.time_interval, 'time_interval')
}

/** The more recent start of `stopped_` and `restarted_performing_event` (`seq_time_value` `seq_time_interval`s back). */
function seqStart(leaf: JsonObject, start: number, now: number): number {
  const value = positiveInteger(leaf.seq_time_value)
  if (value === null) throw invalid('The behavioural condition needs a positive integer seq_time_value.')
  const at = before(now, value, leaf.seq_time_interval, 'seq_time_interval')
  // PostHog's validate_seq_date_more_recent_than_date.
  if (at < start) throw invalid('seq_date must be more recent than date')
  return at
}

/** A count comparison's operator and `operator_value`, as PostHog reads them. */
function comparison(leaf: JsonObject): { operator: CountOperator; value: number } {
  const operator = leaf.operator === undefined || leaf.operator === null ? '=' : COUNT_OPERATORS[String(leaf.operator)]
  if (operator === undefined) throw invalid('count_operator must be gte, lte, eq, or None')
  const value = positiveInteger(leaf.operator_value)
  if (value === null) throw invalid(`A ${String(leaf.value)} condition needs a positive integer operator_value.`)
  return { operator, value }
}

/** `performed_event_regularly`'s windows, newest first, and the checks of each. */
function regularly(leaf: JsonObject, now: number): { windows: Array<[number, number]>; checks: TallyCheck[]; atLeast: number } {
  const length = positiveInteger(leaf.time_value)
  const total = positiveInteger(leaf.total_periods)
  const least = positiveInteger(leaf.min_periods)
  if (length === null || total === null || least === null) throw invalid('A performed_event_regularly condition needs positive integers time_value, total_periods and min_periods.')
  if (least > total) throw invalid(`min_periods (${least}) cannot be greater than total_periods (${total})`)
  const { operator, value } = comparison(leaf)
  const windows = Array.from({ length: total }, (_, k): [number, number] => [before(now, length * (k + 1), leaf.time_interval, 'time_interval'), before(now, length * k, leaf.time_interval, 'time_interval')])
  return { windows, checks: windows.map((_, k) => ({ column: k + 1, operator, value })), atLeast: least }
}

/** A behavioural leaf as what it reads and how it decides; a 400 for one skylark can't evaluate. */
export function behaviouralReading(leaf: JsonObject, teamId: number, now: number): BehaviouralReading {
  if ((leaf.event_type ?? 'events') !== 'events' || typeof leaf.key !== 'string') {
    throw invalid(`A ${String(leaf.value)} condition skylark evaluates names an event (event_type "events", its name as key), not an action's.`)
  }
  const filters = Array.isArray(leaf.event_filters) ? leaf.event_filters : []
  const properties = filters.map((f, i) => readPropertyNode(isPlainObject(f) ? f : null, `event_filters[${i}]`, 1, EVENT_FILTERS))
  const query = (after: number | undefined, windows: Array<[number, number]>): TallyQuery => ({
    teamId,
    event: leaf.key as string,
    ...(after === undefined ? {} : { after }),
    before: now,
    properties,
    windows,
  })
  switch (leaf.value) {
    // The two read alike, so the same event in both is read once.
    case 'performed_event': {
      const start = windowStart(leaf, now)
      return { query: query(start, [[start, now]]), checks: null, atLeast: 0 }
    }
    case 'performed_event_multiple': {
      const start = windowStart(leaf, now)
      return { query: query(start, [[start, now]]), checks: [{ column: 1, ...comparison(leaf) }], atLeast: 1 }
    }
    case 'performed_event_first_time':
      return { query: query(undefined, []), checks: [{ column: 0, operator: '>=', value: windowStart(leaf, now) }], atLeast: 1 }
    case 'stopped_performing_event': {
      const start = windowStart(leaf, now)
      const recent = seqStart(leaf, start, now)
      return { query: query(start, [[start, recent], [recent, now]]), checks: [{ column: 1, operator: '>', value: 0 }, { column: 2, operator: '=', value: 0 }], atLeast: 2 }
    }
    case 'restarted_performing_event': {
      const start = windowStart(leaf, now)
      const recent = seqStart(leaf, start, now)
      const windows: Array<[number, number]> = [[0, start], [start, recent], [recent, now]]
      return { query: query(undefined, windows), checks: [{ column: 1, operator: '>', value: 0 }, { column: 2, operator: '=', value: 0 }, { column: 3, operator: '>', value: 0 }], atLeast: 3 }
    }
    case 'performed_event_regularly': {
      const { windows, checks, atLeast } = regularly(leaf, now)
      return { query: query(windows.at(-1)![0], windows), checks, atLeast }
    }
    default:
      throw invalid(`The behavioural condition ${JSON.stringify(leaf.value)} is one skylark can't evaluate (sequences and actions' events are not).`)
  }
}

/**
 * The cohort's condition over persons (cohortCondition) with its behavioural conditions read from the events by
 * `read` first; without one (no event store), such a cohort is refused as before.
 */
export async function evaluatedCohortCondition(id: number, cohortById: CohortById, teamId: number, read: PerformedReader | null, now: number): Promise<PropertyNode> {
  if (read === null) return cohortCondition(id, cohortById, teamId)
  const readingOf = (leaf: JsonObject) => behaviouralReading(leaf, teamId, now)
  const NONE: PropertyNode = { personsOf: [], teamId }
  // Walked twice: once to find what to read (and refuse what can't be), once with what was read.
  const queries = new Map<string, TallyQuery>()
  cohortCondition(id, cohortById, teamId, (leaf) => {
    const { query } = readingOf(leaf)
    queries.set(JSON.stringify(query), query)
    return NONE
  })
  const found = new Map<string, { ids: string[]; rows: number[][] }>()
  let chars = 0
  for (const [key, query] of queries) {
    const rows = await read(query)
    for (const [distinctId] of rows) chars += distinctId.length
    if (chars > MAX_PERFORMED_CHARS) throw invalid(`Cohort ${id}'s behavioural conditions match too many persons to evaluate at once.`)
    found.set(key, { ids: rows.map(([distinctId]) => distinctId), rows: rows.map(([, ...tallies]) => tallies) })
  }
  return cohortCondition(id, cohortById, teamId, (leaf) => {
    const { query, checks, atLeast } = readingOf(leaf)
    const sent = found.get(JSON.stringify(query))
    if (sent === undefined) return NONE
    return checks === null ? { personsOf: sent.ids, teamId } : { personsOf: sent.ids, teamId, tallies: { rows: sent.rows, checks, atLeast } }
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
