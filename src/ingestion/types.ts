/** Ingestion's shared types: lanes, spool records, warnings. The event itself is a wire shape (schemas/). */
export type { CapturedEvent } from '../schemas/captured-event.js'

export type Lane = 'main' | 'overflow' | 'historical'

/** Something noticed about an event at capture (a silent drop, a bad timestamp), spooled with the events. */
export interface IngestionWarning {
  team_id: number
  /** e.g. `event_dropped` (details.reason says why), `ignored_invalid_timestamp`, `cannot_merge_already_identified`. */
  type: string
  /** Where it was noticed: `capture` or `persons`. */
  source: string
  details: Record<string, unknown>
  /** ms since the epoch. */
  timestamp: number
}
