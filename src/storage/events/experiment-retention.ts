/**
 * A retention metric's per-entity outcome, as PostHog's RetentionQueryBuilder computes it in SQL
 * (products/experiments/backend/hogql_queries/experiment_retention_query_builder.py), run in Node on both stores
 * over each entity's start and completion events (SQLite on its read thread, ClickHouse's per-entity arrays), so
 * both answer alike:
 *
 * - the start: the entity's first (`first_seen`) or last (`last_seen`) start event at or after its first exposure,
 *   before the experiment's end + conversion window and, with a conversion window, at most that long after the
 *   first exposure (inclusive); an entity without one is not counted at all (PostHog's INNER JOIN). A metric
 *   started at the exposure (ExperimentExposureNode) reaches here as a first-seen start whose step is the
 *   exposure's filter (src/experiments/query/metric.ts's metricSteps): its first event at or after the first
 *   exposure is that exposure, the start PostHog projects from its exposures CTE, so every exposed entity counts;
 *   with the experiment's `only_count_matured_users`, an entity whose start is less than `end` units (in
 *   seconds) before now is not counted either (`build_retention_maturity_having_clause`);
 * - retained (1, else 0) when another event than that start one (PostHog compares uuids, so a metric whose
 *   start and completion are one event needs a second occurrence) matches the completion step, at or after the
 *   start and at most `end` units + one period (days and hours) after it, and whose time, truncated to the
 *   project's day or hour for those units, is from start + `start` to start + `end` units, both inclusive.
 *   Day and week intervals are calendar days of the project's zone, months calendar months (the day clamped to
 *   the month's length), as ClickHouse adds them to a zoned DateTime.
 */
import { addMonths, offsetAt, wallInstant } from './days.js'
import type { RetentionUnit, RetentionWindow } from './types.js'

const SECOND = 1000
const HOUR = 3_600_000
const DAY = 86_400_000

/** `conversion_window_to_seconds` in ms (a month is 30 days there). */
export const UNIT_MS: Readonly<Record<RetentionUnit, number>> = { second: SECOND, minute: 60 * SECOND, hour: HOUR, day: DAY, week: 7 * DAY, month: 30 * DAY }

/** An instant's wall-clock time in the zone, read as if UTC. */
const wall = (w: RetentionWindow, ms: number) => ms + offsetAt(w.offsets, ms)

/** `ms` + `n` units, as ClickHouse adds an interval to a DateTime of the project's zone. */
export function addUnits(w: RetentionWindow, ms: number, n: number): number {
  switch (w.unit) {
    case 'second':
    case 'minute':
    case 'hour':
      return ms + n * UNIT_MS[w.unit]
    case 'day':
    case 'week':
      return wallInstant(w.offsets, wall(w, ms) + n * UNIT_MS[w.unit])
    case 'month':
      return addMonths(w.offsets, ms, n)
  }
}

/** toStartOfHour in the zone (an hour of a zone half an hour off UTC starts at :30 UTC). */
const hourStart = (w: RetentionWindow, ms: number) => ms - (((wall(w, ms) % HOUR) + HOUR) % HOUR)

/** Whether a completion at `c` retains a start at `s`. */
export function withinRetention(w: RetentionWindow, s: number, c: number): boolean {
  // The join's bound (`build_completion_retention_window_predicate`): end units in seconds, plus a period for days and hours.
  const buffer = w.unit === 'day' ? DAY : w.unit === 'hour' ? HOUR : 0
  if (c < s || c > s + w.end * UNIT_MS[w.unit] + buffer) return false
  if (w.unit === 'day') {
    // toStartOfDay in the zone, + whole days: the zone's calendar days apart.
    const days = Math.floor(wall(w, c) / DAY) - Math.floor(wall(w, s) / DAY)
    return days >= w.start && days <= w.end
  }
  if (w.unit === 'hour') {
    const hours = (hourStart(w, c) - hourStart(w, s)) / HOUR
    return hours >= w.start && hours <= w.end
  }
  return c >= addUnits(w, s, w.start) && c <= addUnits(w, s, w.end)
}

/**
 * An entity's outcome from its events (ms, bit 0: the start step, bit 1: the completion step) at or after its
 * first exposure, in the stores' order (time, then uuid): null when it has no start, else 1 retained or 0.
 */
export function retentionOutcome(w: RetentionWindow, conversionWindowMs: number | null, first: number, events: ReadonlyArray<readonly [t: number, mask: number]>): 0 | 1 | null {
  let start = -1
  for (let i = 0; i < events.length; i++) {
    const [t, mask] = events[i]
    if ((mask & 1) === 0 || t < first || t >= w.startBefore) continue
    if (conversionWindowMs !== null && conversionWindowMs > 0 && t > first + conversionWindowMs) continue
    start = i
    if (w.startHandling === 'first_seen') break
  }
  if (start < 0) return null
  const s = events[start][0]
  if (w.maturedBy !== null && s > w.maturedBy) return null
  for (let j = 0; j < events.length; j++) {
    const [t, mask] = events[j]
    if (j !== start && (mask & 2) !== 0 && t < w.completionBefore && withinRetention(w, s, t)) return 1
  }
  return 0
}
