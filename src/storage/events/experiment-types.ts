/**
 * What the new experiment engine asks the event store (src/experiments/query) and what it answers: the
 * exposures and metric events read, how they aggregate, and the per-variant sums (re-exported by types.ts).
 */
import type { HogqlField, HogqlMath, PropertyPath } from './hogql-math.js'
import type { EventFilter, FunnelStep } from './types.js'

/**
 * What the new experiment engine reads (src/experiments/query): each exposed entity's exposures and the
 * metric events those entities sent. An entity is a person (its person id, or `distinct:<id>` for an event
 * stored without one) or, with `groupTypeIndex`, a group key of that type (events without one are left out).
 */
export interface ExperimentEventsQuery {
  teamId: number
  groupTypeIndex: number | null
  /** The exposure events: name, window and conditions (the flag, the variant among the experiment's). */
  exposure: EventFilter
  /** The property holding the variant of an exposure. */
  variantProperty: string
  /**
   * Activation mode (PostHog's `exposure_criteria.activation_config`): the events that expose an entity once
   * they come at or after its first exposure event. Its first such event is then its exposure (time,
   * breakdown texts, a funnel's step 0), while its exposure events still give its variant.
   */
  activation?: EventFilter | null
  /**
   * Event properties, or person properties (ExperimentBreakdown), at most MAX_EXPERIMENT_BREAKDOWNS, whose texts
   * at each entity's first exposure split the sums into breakdown groups (missing or null:
   * BREAKDOWN_NULL_LABEL); none for one group of everyone.
   */
  breakdowns: readonly ExperimentBreakdown[]
  /** When a session bounces, for `$is_bounce` (SessionMath); DEFAULT_BOUNCE when absent. */
  bounce?: BounceRule
  /** The metric events of exposed entities: `after` inclusive, `before` exclusive, matching any step. */
  metric: {
    after: number
    before: number
    /** At most 30: an event's steps come back as bits. */
    steps: readonly FunnelStep[]
    /** The properties (paths) whose text each event carries back, in order. */
    valueProperties: readonly PropertyPath[]
    /** The event's fields (HogQL math's `event`, `distinct_id`) each event carries back after them, in order; none when absent. */
    valueFields?: readonly HogqlField[]
    /** The keys whose text each event carries back for distinct counts, in order. */
    distinctKeys: readonly DistinctKey[]
  }
}

/**
 * What a distinct count counts (PostHog's `get_source_value_expr`): `$session_id`s (`unique_session`), persons
 * (`dau`: the person id, or `distinct:<id>` for an event stored without one, as the entity), or group keys of
 * a type (`unique_group`).
 */
export type DistinctKey = '$session_id' | 'person' | `$group_${0 | 1 | 2 | 3 | 4}`

/**
 * How one event's value counts for a mean or ratio source: its count, a property's number, the distinct
 * non-empty keys of its events, `any` (1 with an event, else 0: PostHog's distinct count of its constant 1),
 * a HogQL expression's aggregate (hogql-math.ts), or `session`: a session property's value (SessionMath).
 */
export type SourceMath =
  | { kind: 'count' }
  | { kind: 'sum' | 'avg' | 'min' | 'max'; property: string }
  | { kind: 'distinct'; key: DistinctKey }
  | { kind: 'any' }
  /** `persons`: the person properties the expression reads (`person.properties.<key>`), each as resolved before the read. */
  | { kind: 'hogql'; hogql: HogqlMath; persons?: readonly PersonProperty[] }
  | SessionMath

/**
 * A person property HogQL math reads, as the persons of the events' distinct ids have it now (PostHog's
 * `person_id_override_properties_joined` mode, as person property filters and breakdowns read persons): each text
 * the property (path) has among the project's persons, with their distinct ids. An event by a distinct id in none
 * reads it as null (no person, or a person without it).
 */
export interface PersonProperty {
  path: PropertyPath
  values: HolderBreakdown['values']
}

/**
 * The session properties a mean can aggregate (PostHog's ALLOWED_SESSION_MATH_PROPERTIES), as PostHog's sessions
 * table computes them from a session's events: `$session_duration` the whole seconds from its first event's second
 * to its last's; `$pageview_count`, `$autocapture_count` and `$screen_count` its distinct `$pageview`,
 * `$autocapture` and `$screen` events; `$num_uniq_urls` its distinct non-empty `$current_url` texts; `$is_bounce`
 * 1 when it bounced by the query's BounceRule, else 0 (PostHog's NULL for a session without the events counted
 * reads 0, as the experiment's coalesce makes it).
 */
export const SESSION_PROPERTIES = ['$session_duration', '$pageview_count', '$autocapture_count', '$screen_count', '$num_uniq_urls', '$is_bounce'] as const
export type SessionProperty = (typeof SESSION_PROPERTIES)[number]

/**
 * When a session bounces (`$is_bounce`): the project's `modifiers.bounceRateDurationSeconds` and
 * `bounceRatePageViewMode`, as PostHog's sessions table (v2, its default) reads them. A session bounces when it
 * lasted under `seconds` and, with `uniq_page_screen_autocaptures`, has one pageview, screen or autocapture event
 * in all; with `count_pageviews` (and `uniq_urls`, which v2 reads alike) one pageview and no autocapture.
 */
export interface BounceRule {
  seconds: number
  mode: BounceMode
}

export const BOUNCE_MODES = ['count_pageviews', 'uniq_urls', 'uniq_page_screen_autocaptures'] as const
export type BounceMode = (typeof BOUNCE_MODES)[number]

export const isBounceMode = (value: unknown): value is BounceMode => (BOUNCE_MODES as readonly unknown[]).includes(value)

/** PostHog's DEFAULT_BOUNCE_RATE_DURATION_SECONDS and default page view mode. */
export const DEFAULT_BOUNCE: BounceRule = { seconds: 10, mode: 'count_pageviews' }

/**
 * A mean of a session property (PostHog's session-property metric, mean metrics only): each session counts once,
 * not once per event. An entity's sessions are the `$session_id`s of its metric events; each session whose first
 * metric event comes at or after the entity's first exposure (and within the conversion window after it) adds
 * its value, computed from the session's events of any kind, aggregated over the entity's sessions as
 * `aggregation` says (`distinct`: the distinct values, as PostHog's distinct count reads the session values).
 * An exposed entity without such a session is not counted at all (PostHog's inner join). The session id must be
 * among the metric's `distinctKeys`.
 */
export interface SessionMath {
  kind: 'session'
  /** Not `property`: that names an event property wherever a source math has one. */
  sessionProperty: SessionProperty
  aggregation: 'sum' | 'avg' | 'min' | 'max' | 'distinct'
}

/**
 * How far a session's events reach beyond its metric events when its value is read: PostHog's SDKs start a
 * new session after 24 hours at most, so the events read are those within this of the metric events' range.
 */
export const SESSION_SPAN_MS = 24 * 3_600_000

/**
 * How the metric events of each exposed entity become per-variant sums (experiment-aggregate.ts says how):
 * `sources` are the mean's one or the ratio's numerator and denominator, each matching the step of its index.
 */
export interface ExperimentAggregation {
  type: 'mean' | 'ratio' | 'funnel' | 'retention'
  sources: readonly SourceMath[]
  /** The conversion window after first exposure (a funnel's after each exposure, experiment-funnel.ts), in ms. */
  windowMs: number | null
  lowerPercentile: number | null
  upperPercentile: number | null
  ignoreZeros: boolean
  /** A mean's threshold: each entity's value becomes 1 when it reaches it, else 0 (absent or null: none). */
  threshold?: number | null
  /**
   * CUPED (means and funnels; absent or null: off): each entity's covariate over the metric events in this
   * many ms before its first exposure, summed with the value as `covariate_*` (experiment-aggregate.ts).
   */
  cupedLookbackMs?: number | null
  /** A retention metric's window (steps: the start event, then the completion event); absent otherwise. */
  retention?: RetentionWindow | null
  /**
   * With the experiment's `only_count_matured_users` (means, funnels and ratios with a conversion window): the
   * latest first exposure whose window has ended (now − window). An entity first exposed later is not counted
   * at all, as PostHog's HAVING on its exposures leaves it out. Absent or null: every entity counts.
   */
  maturedBy?: number | null
  /** A funnel's `funnel_order_type` (experiment-funnel.ts; absent or null: ordered). */
  funnelOrder?: FunnelOrder | null
}

/** How a funnel's steps must follow each other (PostHog's StepOrderValue). */
export type FunnelOrder = 'ordered' | 'unordered' | 'strict'

/** The units a retention window counts in (PostHog's FunnelConversionWindowTimeUnit). */
export type RetentionUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month'

/**
 * PostHog's retention metric (experiment_retention_query_builder.py): an entity counts when its start event
 * happened at or after its first exposure (within the conversion window `windowMs` when set, inclusive) and
 * before `startBefore`; it is retained when another event of the completion step happened `start` to `end`
 * units after the start (inclusive both ends, days and hours compared as the project's calendar periods).
 */
export interface RetentionWindow {
  startHandling: 'first_seen' | 'last_seen'
  unit: RetentionUnit
  start: number
  end: number
  /** Start events count before this ms (the experiment's end + the conversion window). */
  startBefore: number
  /** Completion events count before this ms (the experiment's end + the conversion window + `end` units in seconds). */
  completionBefore: number
  /**
   * With the experiment's `only_count_matured_users`, the latest start whose window has ended (now − `end`
   * units in seconds): an entity whose start is later is not counted. Null: every start counts.
   */
  maturedBy: number | null
  /** The project time zone's offsets over the events' range (offsetChanges): `[from ms, offset ms]`, the first at or before every event. */
  offsets: ReadonlyArray<readonly [at: number, offset: number]>
}

/** An ExperimentEventsQuery with the variants counted and how its events aggregate. */
export interface ExperimentVariantsQuery extends ExperimentEventsQuery {
  /** The variants answered, in this order; entities exposed to none of them (`$multiple`) are left out. */
  variants: readonly string[]
  multipleVariantHandling: 'exclude' | 'first_seen'
  aggregation: ExperimentAggregation
}

/**
 * What a breakdown reads of each entity's first exposure: an event property's text, or a person or group
 * property's value as its persons (groups) have it now (each value's text with the distinct ids of its persons,
 * or the keys of its groups of `groupTypeIndex`, resolved before the read; an exposure by another distinct id, or
 * with another or no `$group_<index>`: the null label).
 */
export type ExperimentBreakdown = string | HolderBreakdown

export interface HolderBreakdown {
  /** null: the values are persons', `ids` their distinct ids; else groups' of this type, `ids` their keys. */
  groupTypeIndex: number | null
  values: ReadonlyArray<{ text: string; ids: readonly string[] }>
}

/**
 * The exposures alone (PostHog's ExperimentExposureQuery): each entity exposed to one of `variants`, counted
 * once at its first exposure, under its variant (`$multiple` for several, with `exclude`).
 */
export type ExperimentExposuresQuery = Pick<ExperimentVariantsQuery, 'teamId' | 'groupTypeIndex' | 'exposure' | 'variantProperty' | 'variants' | 'multipleVariantHandling'>

/**
 * The counts are of first exposures per variant and quarter hour (`at`, its first ms): every time zone's offset
 * since 1972 is a whole number of quarter hours, so the caller can tell each one's day in any zone.
 */
export const EXPOSURE_BUCKET_MS = 15 * 60_000

export interface ExposureCount {
  variant: string
  at: number
  count: number
}

/** A variant's sufficient statistics, the new engine's statistics' input (PostHog's ExperimentStatsBase). */
export interface VariantSums {
  key: string
  number_of_samples: number
  sum: number
  sum_squares: number
  /** Funnels: entities that reached at least step i (0-based), for each step. */
  step_counts?: number[]
  /** Ratio metrics. */
  denominator_sum?: number
  denominator_sum_squares?: number
  numerator_denominator_sum_product?: number
  /** With CUPED: the covariates' sum, sum of squares, and sum of their products with the values. */
  covariate_sum?: number
  covariate_sum_squares?: number
  covariate_sum_product?: number
}

/** One breakdown group's per-variant sums, in the order of the query's variants. */
export interface BreakdownSums {
  /** The breakdown properties' texts, in the order of the query's `breakdowns`. */
  values: string[]
  variants: VariantSums[]
}

/** An experiment metric's sums: per variant over everyone, and per breakdown group (null without breakdowns). */
export interface ExperimentSums {
  variants: VariantSums[]
  breakdowns: BreakdownSums[] | null
}

/**
 * [entity, variant, first exposure ms, breakdown texts] per entity, variant and breakdown texts it was exposed
 * with (the texts' first exposure: an entity's breakdown group is that of its earliest row).
 */
export type ExposureRow = [string, string, number, string[]]
/**
 * [entity, ms, bit i set when step i matches (and EXPOSURE_BIT when the store reads the exposures among the
 * events too), the value properties' texts (null: missing), the distinct keys' texts], oldest first.
 */
export type MetricEventRow = [string, number, number, ReadonlyArray<string | null>, ReadonlyArray<string | null>]

/** The most steps an ExperimentEventsQuery takes. */
export const MAX_EXPERIMENT_STEPS = 30
/**
 * The bit of an event's steps saying it is an exposure, past every step's: set only where the aggregation
 * walks the exposures with the steps (funnels, experiment-funnel.ts).
 */
export const EXPOSURE_BIT = 2 ** MAX_EXPERIMENT_STEPS
/** The most breakdowns an experiment metric takes (PostHog's ExperimentQueryRunner). */
export const MAX_EXPERIMENT_BREAKDOWNS = 3
/** A breakdown property's text when the exposure has it missing or null (PostHog's BREAKDOWN_NULL_STRING_LABEL). */
export const BREAKDOWN_NULL_LABEL = '$$_posthog_breakdown_null_$$'
