/**
 * One accepted event between capture and the event store: capture (main thread or a pool worker)
 * produces it, the spool stores it as one JSON record, the consumer hands it to person processing and
 * then to the sink. It lives with the wire shapes because both ingestion and persons read it.
 */
/** The distinct id posthog-js's `cookieless_mode` sends: the consumer replaces it (persons/cookieless.ts). */
export const COOKIELESS_SENTINEL = '$posthog_cookieless'

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
  /**
   * Sent by skylark itself (IngestionService.captureInternal), never by a client: capture builds its events
   * field by field. Only such an event may apply the groups API's writes (persons/stage.ts).
   */
  internal?: true
}
