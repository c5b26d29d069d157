/**
 * The dates and times of HogQL queries (hogql-query.ts), as the parser (hogql-parse.ts) makes them: which nodes are
 * dates and times, dates or intervals, the texts read as instants of a zone, and the zone offsets a period's start
 * (toStartOfDay …) reads.
 */
import { offsetChanges, wallToInstant, zoneOffsetMs } from '../../common/time-zones.js'
import type { HogqlNode, TruncateUnit } from './hogql-math.js'

/**
 * A query's dates and times (hogql-query.ts): `timestamp` (a number of ms), now(), toDateTime('…') and their sums
 * with intervals (`now() - interval 7 day`, ms too), which the query reads whole or compares; the marks do not
 * travel (the query checks them where it is read).
 */
const DATETIMES = new WeakSet<HogqlNode>()
/** The dates among them: toDate(…), a day's start written as its date. */
const DATES = new WeakSet<HogqlNode>()
const INTERVALS = new WeakSet<HogqlNode>()
export const isDatetime = (node: HogqlNode): boolean => DATETIMES.has(node)
export const isDate = (node: HogqlNode): boolean => DATES.has(node)
export const isInterval = (node: HogqlNode): boolean => INTERVALS.has(node)
const marker = (set: WeakSet<HogqlNode>) => (node: HogqlNode): HogqlNode => {
  set.add(node)
  return node
}
export const markDatetime = marker(DATETIMES)
export const markDate = marker(DATES)
export const markInterval = marker(INTERVALS)
/** The functions that cut a date and time to its period's start on the project's wall clock. */
export const TRUNCATIONS: Readonly<Record<string, TruncateUnit>> = { tostartofminute: 'minute', tostartofhour: 'hour', tostartofday: 'day', todate: 'day', tostartofweek: 'week', tostartofmonth: 'month' }
/**
 * The offsets truncations read, from 1970 to ten years on, once a zone: read a week apart (≈3,500 Intl reads,
 * ≈50 ms; a day apart took 0.4 s), each week whose ends differ then day by day (offsetChanges). A zone that
 * changed and changed back within a week would be missed; none has.
 */
const ZONE_OFFSETS = new Map<string, Array<[number, number]>>()
const WEEK = 7 * 86_400_000
export function zoneOffsets(zone: string, now: number): Array<[number, number]> {
  let offsets = ZONE_OFFSETS.get(zone)
  if (offsets !== undefined) return offsets
  const end = Math.max(now, Date.UTC(2026, 0, 1)) + 10 * 365 * 86_400_000
  offsets = [[0, zoneOffsetMs(zone, 0) ?? 0]]
  for (let from = 0; zone !== 'UTC' && from < end; from += WEEK) {
    if ((zoneOffsetMs(zone, from + WEEK) ?? 0) !== offsets[offsets.length - 1][1]) offsets.push(...offsetChanges(zone, from, from + WEEK + 1000).slice(1))
  }
  ZONE_OFFSETS.set(zone, offsets)
  return offsets
}
/** An interval's unit in ms: months and years have no fixed length, and are not read. */
export const INTERVAL_MS: Readonly<Record<string, number>> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 }

export interface QueryClock {
  now: number
  /** The project's time zone: a date and time without an offset is its wall clock, as PostHog reads it. */
  zone: string
}

const DATETIME = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/

/**
 * A date and time's text as an instant (ms, with a fraction below the ms kept, so that comparisons with stored ms
 * hold as they would in µs): `2024-01-31`, `2024-01-31 12:00[:00[.123456]]` (or with a T) in `zone`, or with
 * its own offset (`Z`, `+01:00`); null for any other text or an impossible date.
 */
export function datetimeMs(text: string, zone: string): number | null {
  const m = DATETIME.exec(text.trim())
  if (m === null) return null
  const [, y, mo, d, h = '0', mi = '0', sec = '0', fraction = '', offset] = m
  const wall = new Date(0)
  wall.setUTCFullYear(Number(y), Number(mo) - 1, Number(d))
  wall.setUTCHours(Number(h), Number(mi), Number(sec), 0)
  // Date rolls 2024-02-30 over to March; ClickHouse refuses it, and so is it refused here.
  if (wall.getUTCMonth() !== Number(mo) - 1 || wall.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return null
  const sub = fraction === '' ? 0 : Number(`0.${fraction}`) * 1000
  if (offset === undefined) return wallToInstant(zone, wall.getTime()) + sub
  if (offset === 'Z') return wall.getTime() + sub
  const digits = offset.replace(':', '')
  const minutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5) || '0')
  return wall.getTime() - (offset[0] === '-' ? -1 : 1) * minutes * 60_000 + sub
}
