/**
 * The shape of one accepted event between capture and the event store. Capture (main thread or a pool
 * worker) produces it from the request; the spool stores it as one JSON record; the consumer thread hands
 * it to person processing and then to the sink.
 */

export type Lane = 'main' | 'overflow' | 'historical'

export interface CapturedEvent {
  /** Client uuid when valid, else a UUIDv7. Lower-case, hyphenated. */
  uuid: string
  /** Event name, at most 200 characters. */
  event: string
  /** At most 200 characters; numbers and other JSON values arrive stringified. */
  distinct_id: string
  /**
   * Event properties. Top-level `$set`/`$set_once` were merged into `properties.$set`/`$set_once`, and
   * `$ip` filled from the request unless the client sent one or the project anonymises IPs.
   */
  properties: Record<string, unknown>
  /** Event time in ms since the epoch, after clock-skew correction (PostHog's parseEventTimestamp). */
  timestamp: number
  team_id: number
  /** When capture received the request, ms since the epoch. */
  now: number
}

/** A record in the spool: an event, or an ingestion warning noticed at capture (a silent drop). */
export type SpoolRecord =
  | { kind: 'event'; event: CapturedEvent }
  | { kind: 'warning'; warning: IngestionWarning }

export interface IngestionWarning {
  team_id: number
  /** e.g. `event_missing_name`, `event_missing_distinct_id`, `cannot_merge_already_identified`. */
  type: string
  /** Where it was noticed: `capture` or `persons`. */
  source: string
  details: Record<string, unknown>
  /** ms since the epoch. */
  timestamp: number
}
