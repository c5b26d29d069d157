/**
 * What a HogQL query's node is as a time (hogql-datetime.ts reads and sets it): a date and time, a date or an
 * interval, and the zone a date and time is of (toTimeZone's), with the offsets each zone's wall clock reads.
 */
import { offsetChanges, zoneOffsetMs } from '../../common/time-zones.js'
import type { HogqlNode } from './hogql-math.js'
import { HogqlMathError } from './hogql-tokens.js'

/**
 * A query's dates and times (hogql-query.ts): `timestamp` (a number of ms), now(), toDateTime('…') and their sums
 * with intervals (`now() - interval 7 day`, ms too), which the query reads whole or compares; the marks do not
 * travel (the query checks them where it is read).
 */
const DATETIMES = new WeakSet<HogqlNode>()
/** The dates among them: toDate(…), a day's start on the project's wall clock, written as its date. */
const DATES = new WeakSet<HogqlNode>()
const INTERVALS = new WeakSet<HogqlNode>()
/**
 * The zone of a date and time given one (toTimeZone(t, 'UTC'), toDateTime('…', 'Asia/Tokyo') and what is computed
 * from them): its parts, periods and text are of that wall clock, as ClickHouse's DateTime('zone'). Any other is of
 * the project's zone; a date has none (it is always of the project's, hogql-datetime.ts's asDate).
 */
const ZONES = new WeakMap<HogqlNode, string>()
export const isDatetime = (node: HogqlNode): boolean => DATETIMES.has(node)
export const isDate = (node: HogqlNode): boolean => DATES.has(node)
export const isInterval = (node: HogqlNode): boolean => INTERVALS.has(node)
const marker = (set: WeakSet<HogqlNode>) => (node: HogqlNode): HogqlNode => {
  set.add(node)
  return node
}
export const markDatetime = marker(DATETIMES)
/** A date: always of the project's clock (hogql-zones.ts's asDate), so of no zone of its own. */
export function markDate(node: HogqlNode): HogqlNode {
  ZONES.delete(node)
  DATES.add(node)
  return node
}
export const markInterval = marker(INTERVALS)
/** The zone `node` is of: its own, else `project`. */
export const zoneOf = (node: HogqlNode, project: string): string => ZONES.get(node) ?? project
/** `node` marked a date and time of `zone`. */
export function markZone(node: HogqlNode, zone: string): HogqlNode {
  ZONES.set(node, zone)
  return markDatetime(node)
}
/** `to` marked a date and time of the zone `from` is of, if it has one. */
export function keepZone(from: HogqlNode, to: HogqlNode): HogqlNode {
  const zone = ZONES.get(from)
  if (zone !== undefined) ZONES.set(to, zone)
  return markDatetime(to)
}

/**
 * A choice among values (if, coalesce, ifNull, greatest, least, and what reads as them: multiIf, nullIf, CASE, an
 * -If's value) of dates and times is one too, of their zone, and a date where all are dates; NULL may stand beside
 * them. Anything else beside one has no common type in ClickHouse, and two zones (a date and another zone's date and
 * time too) are refused rather than guessed.
 */
export function markChoice(node: HogqlNode, values: readonly HogqlNode[]): HogqlNode {
  const given = values.filter((v) => v.op !== 'null')
  if (!given.some(isDatetime)) return node
  if (!given.every(isDatetime) || new Set(given.map((v) => ZONES.get(v))).size > 1) {
    throw new HogqlMathError('The values a choice gives (if, multiIf, coalesce, ifNull, greatest, least, nullIf, CASE, an -If) are all dates and times of one zone, or NULL, where one is: convert the others, as in coalesce(toDateTime(properties.sent_at), timestamp).')
  }
  keepZone(given[0], node)
  return given.every(isDate) ? markDate(node) : node
}

/**
 * The offsets a zone's wall clock reads, from 1970 to ten years on, once a zone: read a week apart (≈3,500 Intl
 * reads, ≈50 ms; a day apart took 0.4 s), each week whose ends differ then day by day (offsetChanges). A zone that
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
