/**
 * The behavioural cohort conditions skylark evaluates when asked, as PostHog's cohort query of them has them, over
 * an event by name (`event_type: "events"`) or an action's events (`"actions"`), `event_filters` on their
 * properties, up to now:
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
 *   least `min_periods` of the last `total_periods` periods of `time_value` `time_interval`s;
 * - `performed_event_sequence`: those who sent one and then `seq_event`, at the same time or later but no more
 *   than `seq_time_value` `seq_time_interval`s after it (PostHog's two-step funnel: its window in seconds, a
 *   month 30 days), both since the start. As PostHog's funnel of them, it reads no `event_filters`.
 * `performed_event`, `_multiple` and `_sequence` end at `explicit_datetime_to` where it is given beside
 * `explicit_datetime`, as PostHog's date range of them.
 * Each reads the event store once (an identical condition, negated or in another cohort, is read once): every
 * distinct id that sent one in the time it looks at, with its first one and its counts in the condition's windows
 * (a sequence: the times of its events of both names). Over persons.db, a person's tallies are those of all its
 * ids (the earliest first, the counts added up), and its sequence is made of all its ids' events, so an event by
 * any of a person's ids counts, as PostHog counts by person. As in PostHog's query, a person who sent none in that
 * time is not counted at all, so "at most 2 times" means 1 or 2.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { parseRelativeDate } from '../../common/relative-dates.js'
import {
  eventFiltersOnly,
  readPropertyNode,
  type CountOperator,
  type EventStore,
  type FunnelStep,
  type NodeRules,
  type TallyCheck,
  type TallyQuery,
  type TallyRow,
  type TimesQuery,
  type TimesRow,
} from '../../storage/events/index.js'
import { actionCondition, stepEvents, storesCanRun, type ActionRecord } from '../actions/index.js'

/**
 * What one behavioural condition reads of the events, and how a person's reading decides: its tallies by the
 * checks, or the times of its events by the sequence's window.
 */
export type BehaviouralReading =
  | {
      query: TallyQuery
      /** Null: every person who sent one holds. */
      checks: TallyCheck[] | null
      /** How many of the checks must hold. */
      atLeast: number
    }
  | { times: TimesQuery; windowMs: number }

/** A project's action by id, a deleted one too (PostHog's Action.objects.get reads those), or null. */
export type ActionById = (teamId: number, id: number) => Pick<ActionRecord, 'steps'> | null

/**
 * Each distinct id that sent matching events, with its tallies or its events' times (an event store's reads),
 * and the actions a condition may name.
 */
export interface PerformedReader {
  tallies(query: TallyQuery): Promise<readonly TallyRow[]>
  times(query: TimesQuery): Promise<readonly TimesRow[]>
  actionById: ActionById
}

/** The reader of an event store and the projects' actions. */
export const performedReader = (events: Pick<EventStore, 'distinctIdTallies' | 'distinctIdTimes'>, actions: { byId: ActionById }): PerformedReader => ({
  tallies: (query) => events.distinctIdTallies(query),
  times: (query) => events.distinctIdTimes(query),
  actionById: (teamId, id) => actions.byId(teamId, id),
})

const UNITS: Readonly<Record<string, string>> = { hour: 'h', day: 'd', week: 'w', month: 'm', year: 'y' }

/** A sequence's window, as PostHog's INTERVAL_TO_SECONDS (a month 30 days, a year 365). */
const SEQUENCE_UNIT_MS: Readonly<Record<string, number>> = { minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000, month: 2_592_000_000, year: 31_536_000_000 }

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

/** A relative date (`-7d`) or a date, given as the condition's `name`. */
function explicitDate(leaf: JsonObject, name: 'explicit_datetime' | 'explicit_datetime_to', now: number): number | undefined {
  const text = leaf[name]
  if (typeof text !== 'string' || text === '') return undefined
  const at = parseRelativeDate(text, now) ?? Date.parse(text)
  if (Number.isFinite(at)) return at
  throw invalid(`The behavioural condition's ${name} ${JSON.stringify(text)} is not a date.`)
}

/** Where a condition's time starts: `explicit_datetime`, else `time_value` `time_interval`s before now. */
function windowStart(leaf: JsonObject, now: number): number {
  const explicit = explicitDate(leaf, 'explicit_datetime', now)
  if (explicit !== undefined) return explicit
  const value = positiveInteger(leaf.time_value)
  if (value === null) throw invalid('The behavioural condition needs a positive integer time_value, or an explicit_datetime.')
  return before(now, value, leaf.time_interval, 'time_interval')
}

/** Where `performed_event`, `_multiple` and `_sequence` end: `explicit_datetime_to` beside an `explicit_datetime`, else now. */
function windowEnd(leaf: JsonObject, now: number): number {
  return explicitDate(leaf, 'explicit_datetime', now) === undefined ? now : (explicitDate(leaf, 'explicit_datetime_to', now) ?? now)
}

function seqTimeValue(leaf: JsonObject): number {
  const value = positiveInteger(leaf.seq_time_value)
  if (value === null) throw invalid('The behavioural condition needs a positive integer seq_time_value.')
  return value
}

/** The most time a sequence's second event may come after its first, in ms. */
function sequenceWindowMs(leaf: JsonObject): number {
  const value = seqTimeValue(leaf)
  const unit = typeof leaf.seq_time_interval === 'string' ? SEQUENCE_UNIT_MS[leaf.seq_time_interval] : undefined
  if (unit === undefined) throw invalid(`The behavioural condition's seq_time_interval must be one of ${Object.keys(SEQUENCE_UNIT_MS).join(', ')}.`)
  return value * unit
}

/**
 * The events a condition's `event_type` and `key` name (`seq_event_type` and `seq_event` for a sequence's
 * second): an event by name, or an action's events, as its steps match them (any event for an action without
 * steps, as PostHog's action_to_expr; its steps' names where each has one, so the stores read those only).
 */
function targetOf(leaf: JsonObject, second: boolean, teamId: number, actionById: ActionById | undefined): FunnelStep {
  const [type, key] = second ? [leaf.seq_event_type, leaf.seq_event] : [leaf.event_type, leaf.key]
  if ((type ?? 'events') === 'events') {
    if (typeof key !== 'string') throw invalid(`A behavioural condition on an event names it by ${second ? 'seq_event' : 'key'}.`)
    return { event: key, properties: [] }
  }
  if (type !== 'actions') throw invalid(`A behavioural condition's ${second ? 'seq_event_type' : 'event_type'} must be "events" or "actions".`)
  const id = positiveInteger(key)
  const action = id === null || actionById === undefined ? null : actionById(teamId, id)
  if (action === null) throw invalid(`The behavioural condition names action ${JSON.stringify(key)}, which does not exist.`)
  const named = action.steps.length > 0 && action.steps.every((step) => step.event !== null)
  return { event: named ? stepEvents(action) : null, properties: [actionCondition(action.steps)] }
}

/** The more recent start of `stopped_` and `restarted_performing_event` (`seq_time_value` `seq_time_interval`s back). */
function seqStart(leaf: JsonObject, start: number, now: number): number {
  const at = before(now, seqTimeValue(leaf), leaf.seq_time_interval, 'seq_time_interval')
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

/**
 * A behavioural leaf as what it reads and how it decides; a 400 for one skylark can't evaluate. `actionById`
 * reads the actions a condition names (without it, such a condition is refused).
 */
export function behaviouralReading(leaf: JsonObject, teamId: number, now: number, actionById?: ActionById): BehaviouralReading {
  const target = targetOf(leaf, false, teamId, actionById)
  const filters = Array.isArray(leaf.event_filters) ? leaf.event_filters : []
  const properties = [...target.properties!, ...filters.map((f, i) => readPropertyNode(isPlainObject(f) ? f : null, `event_filters[${i}]`, 1, EVENT_FILTERS))]
  const query = (after: number | undefined, windows: Array<[number, number]>, end = now): TallyQuery => ({
    teamId,
    ...(target.event === null ? {} : { event: target.event }),
    ...(after === undefined ? {} : { after }),
    before: end,
    properties,
    windows,
  })
  switch (leaf.value) {
    // The two read alike, so the same event in both is read once.
    case 'performed_event': {
      const start = windowStart(leaf, now)
      const end = windowEnd(leaf, now)
      return { query: query(start, [[start, end]], end), checks: null, atLeast: 0 }
    }
    case 'performed_event_multiple': {
      const start = windowStart(leaf, now)
      const end = windowEnd(leaf, now)
      return { query: query(start, [[start, end]], end), checks: [{ column: 1, ...comparison(leaf) }], atLeast: 1 }
    }
    case 'performed_event_sequence': {
      const then = targetOf(leaf, true, teamId, actionById)
      const steps = JSON.stringify(then) === JSON.stringify(target) ? [target] : [target, then]
      return { times: { teamId, steps, after: windowStart(leaf, now), before: windowEnd(leaf, now) }, windowMs: sequenceWindowMs(leaf) }
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
      throw invalid(`The behavioural condition ${JSON.stringify(leaf.value)} is not one PostHog has.`)
  }
}
