/**
 * The event store seen from the rest of the service: a sink the consumer writes to and a query interface
 * the API, experiments and dashboards read through. SQLite and ClickHouse implement both.
 */

import type { ExperimentExposuresQuery, ExperimentSums, ExperimentVariantsQuery, ExposureCount } from './experiment-types.js'
import type { HogqlNode, HogqlValue } from './hogql-math.js'
import type { AnswerValue } from './hogql-values.js'
import type { HogqlQueryPlan } from './hogql-query.js'

export * from './experiment-types.js'

/** One stored event as the consumer hands it to a sink. Times are ms since the epoch (UTC). */
export interface EventRow {
  uuid: string
  team_id: number
  event: string
  distinct_id: string
  person_id: string
  /** JSON text of the event properties. */
  properties: string
  timestamp: number
  created_at: number
  groups: readonly [string, string, string, string, string]
  elements_chain: string
}

export class SinkError extends Error {
  constructor(
    message: string,
    /** True when retrying the same rows can never succeed (bad data): isolate them and dead-letter. */
    readonly permanent: boolean,
  ) {
    super(message)
    this.name = 'SinkError'
  }
}

export interface EventSink {
  readonly kind: 'sqlite' | 'clickhouse'
  /** Stores the rows; replaying rows already stored is a no-op (dedup by uuid). Throws SinkError. */
  write(rows: readonly EventRow[]): Promise<void>
  /**
   * Deletes the project's stored events of these distinct ids (a deleted person's, with `delete_events`):
   * the rows stored before the call, never rows written after it. Throws SinkError.
   */
  deleteEvents(teamId: number, distinctIds: readonly string[]): Promise<void>
  /** True when the store answers. */
  ping(): Promise<boolean>
  close(): Promise<void>
}

/** The property operators both stores evaluate; a filter with another one is refused where it is read. */
export const PROPERTY_OPERATORS = ['exact', 'is_not', 'icontains', 'not_icontains', 'is_set', 'is_not_set', 'gt', 'gte', 'lt', 'lte'] as const
/**
 * A regex search of the property's text (`not_regex`: none, a missing property included), as PostHog's
 * `match`. Event property filters only, where the reader says which patterns every store runs (NodeRules.regex).
 */
export const REGEX_OPERATORS = ['regex', 'not_regex'] as const
/** Why a pattern the stores can't all run is refused, for every reader's message. */
export const REGEX_LIMITS = 'look-around and backreferences are not supported: ClickHouse runs re2'

export type PropertyOperator = (typeof PROPERTY_OPERATORS)[number] | (typeof REGEX_OPERATORS)[number]

/** Groups of filters nest at most this deep: each level is a nested SQL condition. */
export const MAX_PROPERTY_DEPTH = 8

/** A value a filter may compare with (a list of these is "any of"). */
export function isFilterScalar(v: unknown): v is string | number | boolean | null {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v)
}

export interface EventPropertyFilter {
  key: string
  operator: PropertyOperator
  /** A scalar, or a list of scalars for exact / is_not (any of). */
  value?: string | number | boolean | Array<string | number | boolean> | null
}

/** PostHog's property group: every value holds (AND) or any does (OR); groups nest. */
export interface PropertyGroup {
  type: 'AND' | 'OR'
  values: readonly PropertyNode[]
}

/**
 * Events sent by one of these distinct ids: a person property filter, resolved against the persons first; with
 * `excluded`, events sent by none of them (a filter most persons match, resolved as the persons it fails).
 */
export interface DistinctIdCondition {
  distinctIds: readonly string[]
  excluded?: boolean
}

/**
 * How a text is compared, as PostHog's action steps compare: equality, SQL's LIKE (`%` any run, `_` one
 * character, `\` escapes; `ilike` ignores case) or a regex search.
 */
export interface TextMatch {
  mode: 'exact' | 'like' | 'ilike' | 'regex'
  pattern: string
}

/**
 * One step of an action as the stores test it (src/management/actions builds it from PostHog's
 * `action_to_expr`): every condition set must hold. The chain conditions read `elements_chain` as PostHog's
 * materialised columns do.
 */
export interface ActionStepCondition {
  event: string | null
  /** On the `$current_url` property's text. */
  url: TextMatch | null
  /** Regex searches over the whole chain, all of which must hold (a selector's, a tag's). */
  chainRegexes: readonly string[]
  /** `attr_id` values that must all be in the chain. */
  chainIds: readonly string[]
  /** Tags (of PostHog's useful elements) one of which must be in the chain; empty: no check. */
  chainTags: readonly string[]
  /** On the chain's first `href`, '' when it has none. */
  href: TextMatch | null
  /** On any of the chain's `text`s. */
  text: TextMatch | null
  properties: readonly PropertyNode[]
}

/** Events matching any step of an action; an action without steps matches every event. */
export interface ActionCondition {
  actionSteps: readonly ActionStepCondition[]
}

/**
 * Events whose `$group_<index>` key is one of these: a group property filter, resolved against the groups
 * first; with `excluded`, events whose key is none of them (a filter most groups meet, as the groups it fails).
 */
export interface GroupKeyCondition {
  groupTypeIndex: number
  groupKeys: readonly string[]
  excluded?: boolean
}

/**
 * An element filter on the event's elements chain (PostHog's `property_to_expr` for `type: "element"`): `href`
 * compares the chain's first href ('' read as none), `text` any one of its texts, each as `filter` (its operator
 * and value) compares a property's text.
 */
export interface ElementCondition {
  element: 'href' | 'text'
  filter: EventPropertyFilter
}

/** The events a node does not hold for (an element selector or tag name filter's `is_not`). */
export interface NegatedCondition {
  not: PropertyNode
}

/** A HogQL property filter's condition (`type: 'hogql'`, hogql-math.ts): the events it holds for (hogqlHolds). */
export interface HogqlCondition {
  hogql: HogqlNode
}

/**
 * The persons in a static cohort (its members in persons.db's cohort_people): a condition over persons.db's
 * persons only, where a dynamic cohort's conditions name a static cohort; no event store reads it.
 */
export interface StaticCohortCondition {
  staticCohort: number
  teamId: number
}

/**
 * The persons owning any of these distinct ids (a behavioural cohort condition's, read from the events first): a
 * condition over persons.db's persons only, as StaticCohortCondition.
 */
export interface PersonsOfCondition {
  personsOf: readonly string[]
  teamId: number
  /**
   * With them, only the persons for whom at least `atLeast` of the checks hold over their ids' tallies
   * (`rows[i]` for `personsOf[i]`: a TallyRow without its id), as a behavioural cohort condition reads them.
   */
  tallies?: { rows: ReadonlyArray<readonly number[]>; checks: readonly TallyCheck[]; atLeast: number }
  /**
   * With it, only the persons whose ids' events make the sequence (sequences.ts): `rows[i]` for `personsOf[i]`,
   * a TimesRow without its id, or `true` where that id's events make it alone.
   */
  sequence?: { rows: ReadonlyArray<true | ReadonlyArray<readonly number[]>>; windowMs: number }
}

/** A check of a person's tallies: `column` 0 is its first event (the earliest of its ids'), k ≥ 1 its events in window k − 1 (summed over its ids). */
export interface TallyCheck {
  column: number
  operator: CountOperator
  value: number
}

/** How a count (or a time) compares with a number. */
export type CountOperator = '>=' | '>' | '<=' | '<' | '='

/** Matching events counted per distinct id in each window, `[from, to)` in ms. */
export interface TallyQuery extends EventFilter {
  windows: ReadonlyArray<readonly [number, number]>
}

/** A distinct id, its first matching event (ms), then its count in each window. */
export type TallyRow = [string, number, ...number[]]

/** The times of the events each step matches, per distinct id, in [after, before) (ms). */
export interface TimesQuery {
  teamId: number
  /** One or two. */
  steps: readonly FunnelStep[]
  after: number
  before: number
}

/** A distinct id, then the times of its events each step matches, in the query's order, ascending. */
export type TimesRow = [string, ...number[][]]

export type PropertyNode =
  | EventPropertyFilter
  | PropertyGroup
  | DistinctIdCondition
  | GroupKeyCondition
  | ActionCondition
  | ElementCondition
  | NegatedCondition
  | HogqlCondition
  | StaticCohortCondition
  | PersonsOfCondition

export interface EventFilter {
  teamId: number
  /** One name or any of several. */
  event?: string | readonly string[]
  distinctId?: string
  /** Any of these distinct ids (a person's); an empty list matches nothing. */
  distinctIds?: readonly string[]
  /** Events of this group: its key in the group column of that type index (0–4). */
  group?: { index: number; key: string }
  /** Inclusive lower bound, ms. */
  after?: number
  /** Exclusive upper bound, ms. */
  before?: number
  /** Conditions on the event's top-level properties, all of which must hold. */
  properties?: readonly PropertyNode[]
}

/** A page of a list: `ascending` reads oldest first (the default is newest first). */
export interface EventPage {
  limit: number
  offset: number
  ascending?: boolean
}

/** An event as the API returns it. */
export interface StoredEvent {
  id: string
  uuid: string
  event: string
  distinct_id: string
  person_id: string | null
  properties: Record<string, unknown>
  timestamp: string
  created_at: string
  elements_chain: string
  groups: string[]
}

/** Counts grouped by an event property, e.g. exposures per `$feature_flag_response`. */
export interface BreakdownQuery extends EventFilter {
  /** Property whose value labels each row of the result. */
  breakdown: string
  /** `events` counts rows; `persons` counts distinct person ids (PostHog's `dau` math over the range). */
  math: 'events' | 'persons'
}

export interface BreakdownRow {
  value: string | null
  count: number
}

/**
 * A breakdown per day of a zone's wall clock, given as the offsets it uses over the query's range (`[at,
 * offset]`, from `offsetChanges` in src/common/time-zones.ts; none or `[[after, 0]]` is UTC).
 */
export interface DailyBreakdownQuery extends BreakdownQuery {
  offsets?: ReadonlyArray<readonly [at: number, offset: number]>
}

/** A breakdown per day: `day` is `YYYY-MM-DD` on the query's wall clock. */
export interface DailyBreakdownRow extends BreakdownRow {
  day: string
}

/** One step of a funnel: an event name (or any of several, or any event when null) and conditions on the event. */
export interface FunnelStep {
  event: string | readonly string[] | null
  properties?: readonly PropertyNode[]
}

/**
 * An ordered funnel per person, broken down by a property of the event that started it (PostHog's
 * first-touch attribution): a person enters with a first-step event whose `breakdown` value is one of
 * `breakdownValues`, and reaches step k when steps 2..k follow in order (each at or after the previous
 * one) within `windowMs` of that first-step event. Every step must fall in [after, before).
 */
export interface FunnelQuery {
  teamId: number
  /** At least one step. */
  steps: readonly FunnelStep[]
  /** Inclusive lower bound, ms. */
  after: number
  /** Exclusive upper bound, ms. */
  before: number
  /** Conversion window, ms. */
  windowMs: number
  breakdown: string
  breakdownValues: readonly string[]
}

/** The event names a funnel reads, or null when a step takes any event. */
export function funnelEventNames(q: Pick<FunnelQuery, 'steps'>): string[] | null {
  const names = new Set<string>()
  for (const step of q.steps) {
    if (step.event === null) return null
    for (const name of typeof step.event === 'string' ? [step.event] : step.event) names.add(name)
  }
  return [...names]
}

/** Persons of one breakdown value: `counts[i]` reached at least step i + 1 (`counts[0]` entered). */
export interface FunnelRow {
  value: string
  counts: number[]
}

/** The columns PostHog's events/values reads with `is_column=true` that skylark stores. */
export const VALUE_COLUMNS = ['event', 'distinct_id', 'person_id', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4'] as const
export type ValueColumn = (typeof VALUE_COLUMNS)[number]

/**
 * The distinct values of a property (or column) on matching events, as text (strings unquoted, other JSON as
 * written), null and missing left out; most recently seen first, or with `search` the shortest first.
 */
export interface PropertyValuesQuery {
  filter: EventFilter
  /** A top-level property key, or a column. */
  source: { property: string } | { column: ValueColumn }
  /** Only values whose text contains this, in any case. */
  search?: string
  limit: number
}

/** The distinct ids of a set of events and, per group type index 0–4, their non-empty group keys; all sorted. */
export interface EventActors {
  distinctIds: string[]
  groupKeys: string[][]
}

export interface EventStore {
  list(filter: EventFilter, page: EventPage): Promise<StoredEvent[]>
  /** The project's event with this uuid (canonical lower-case form), or null. */
  get(teamId: number, uuid: string): Promise<StoredEvent | null>
  propertyValues(query: PropertyValuesQuery): Promise<string[]>
  /** Who matching events were sent by and for, in one read (groups/related). */
  actors(filter: EventFilter): Promise<EventActors>
  count(filter: EventFilter): Promise<number>
  breakdown(query: BreakdownQuery): Promise<BreakdownRow[]>
  /** The same counts per day of the query's wall clock (days without events are absent), oldest first. */
  dailyBreakdown(query: DailyBreakdownQuery): Promise<DailyBreakdownRow[]>
  /** Ordered-funnel counts per breakdown value, aggregated in the store; values nobody entered are absent. */
  funnel(query: FunnelQuery): Promise<FunnelRow[]>
  /** The distinct ids that sent matching events, each once, sorted. */
  distinctIds(filter: EventFilter): Promise<string[]>
  /**
   * Each distinct id that sent matching events, sorted: its first matching event (ms) and how many it sent in
   * each of the query's windows.
   */
  distinctIdTallies(query: TallyQuery): Promise<TallyRow[]>
  /** Each distinct id that sent events the query's steps match in its time, sorted, with their times. */
  distinctIdTimes(query: TimesQuery): Promise<TimesRow[]>
  /**
   * An experiment metric's per-variant sums (and per breakdown group), aggregated where the events are read
   * (ExperimentVariantsQuery): only these numbers reach the caller, whatever the number of events.
   */
  experimentVariants(query: ExperimentVariantsQuery): Promise<ExperimentSums>
  /** Entities first exposed per variant and quarter hour (ExperimentExposuresQuery), counted where the events are read. */
  experimentExposures(query: ExperimentExposuresQuery): Promise<ExposureCount[]>
  /** A HogQL query's rows over the project's events (hogql-query.ts), at most `plan.fetch`; dates and times as ms. */
  hogqlQuery(teamId: number, plan: HogqlQueryPlan): Promise<AnswerValue[][]>
  close(): Promise<void>
}
