/**
 * The public shapes of the flag engine: definitions in (as stored, PostHog's JSON), a request's context in,
 * per-flag results out. Everything here is plain data so a worker thread can receive and return it.
 */

/** A feature flag row as stored (PostHog's `posthog_featureflag` columns that evaluation reads). */
export interface FlagDefinition {
  id: number
  team_id?: number
  key: string
  /** PostHog's `filters` JSON: groups, multivariate, payloads, aggregation_group_type_index, super_groups, holdout... */
  filters: Record<string, unknown>
  active: boolean
  deleted: boolean
  ensure_experience_continuity: boolean
  version: number | null
  /** `"device_id"` hashes `$device_id` instead of distinct_id for person conditions (a column in PostHog, not a filter). */
  bucketing_identifier?: string | null
  /** A remote config flag with encrypted payloads is served by `/remote_config` only, never evaluated by /flags. */
  is_remote_configuration?: boolean
  has_encrypted_payloads?: boolean
  /** `client`, `server` or `all` (absent or anything else): which SDKs the flag is evaluated for. */
  evaluation_runtime?: string | null
  /** Tags that limit the requests the flag is evaluated for (a /flags request's `evaluation_environments`). */
  evaluation_tags?: readonly string[] | null
  /** Whether a live experiment uses the flag (PostHog's `has_experiment`; SDKs put it on `$feature_flag_called`). */
  has_experiment?: boolean
}

/** A cohort as referenced by flags: static ones are answered by membership, dynamic ones by their filters. */
export interface CohortDefinition {
  id: number
  is_static: boolean
  deleted?: boolean
  /** `{ properties: { type: "AND"|"OR", values: [{ type: "AND"|"OR"|"property", values: [PropertyFilter] }] } }` */
  filters: { properties?: unknown } | null
}

export interface CompileOptions {
  /** The project's group type mapping, index (as a string) → group type name: `{ "0": "company" }`. */
  groupTypeMapping: Record<string, string>
  cohorts: CohortDefinition[]
  /** IANA zone of the project; naive dates and relative dates are read in it. Defaults to UTC. */
  timezone?: string
}

/** Maps the full hash input (`"<key>.<id><salt>"`, `"holdout-<id>"`) to a number in [0, 1). */
export type HashFn = (input: string) => number

/** What the engine, and the answer's writer, keep for a reused person-properties object (see `EvaluationInput.personState`). */
export interface PersonState {
  engine?: object
  /** The text of this person's last answer (response.ts). */
  answer?: object
}

export interface EvaluationInput {
  distinctId: string
  /** Stored person properties overlaid by the request's overrides; the caller adds `distinct_id`. */
  personProperties: Record<string, unknown>
  /**
   * Given when `personProperties` is an object the caller hands out again, unchanged, for this person's later
   * requests (a new object once anything in it changes), each time with this same holder: the engine keeps
   * work for those requests in it.
   */
  personState?: PersonState
  /** Group type name → group key (numbers already turned into their decimal text). */
  groups: Record<string, string>
  /** Group type name → stored group properties overlaid by the request's (the caller adds `$group_key`). */
  groupProperties: Record<string, Record<string, unknown>>
  /** Flag key → stored hash key override (experience continuity). */
  hashKeyOverrides?: Record<string, string>
  /** The request's `$anon_distinct_id`: continuity flags without a stored override hash it (current PostHog). */
  anonDistinctId?: string
  /** Static cohorts the person belongs to. */
  staticCohortIds?: ReadonlySet<number>
  deviceId?: string
  /** Epoch milliseconds; the only clock the engine reads. */
  now: number
  /** Evaluate only these keys (and what they depend on); undefined means every active flag. */
  flagKeys?: readonly string[]
}

export interface EvaluateOptions {
  hash?: HashFn
}

export type FlagValue = boolean | string

export interface FlagReason {
  code: string
  condition_index: number | null
  description?: string
}

export interface FlagResult {
  key: string
  enabled: boolean
  variant: string | null
  reason: FlagReason
  /** The stored payload exactly as kept (usually a JSON string); null when there is none. */
  payload: unknown
  id: number
  version: number
  /** True when the flag could not be evaluated (PostHog's `failed`); `reason.code` then names the error. */
  failed: boolean
  /** The definition's `has_experiment`. */
  hasExperiment: boolean
}

export interface EvaluationResponse {
  flags: Record<string, FlagResult>
  errorsWhileComputingFlags: boolean
}

/** An `EvaluationResponse` with the flags as a list, in the order of `Object.values(flags)`. */
export interface EvaluationList {
  results: FlagResult[]
  errorsWhileComputingFlags: boolean
  /** The input's `personState`, where the answer's text is kept for the person's next request. */
  personState?: PersonState
}
