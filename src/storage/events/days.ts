/** `YYYY-MM-DD` of a day number (days since the Unix epoch, on the wall clock asked for): both stores group by this number. */
export function dayOf(day: number): string {
  return new Date(day * 86400000).toISOString().slice(0, 10)
}

/** A zone's offset at `ms` from its `[at, offset]` changes (offsetChanges): the last at or before it, the first pair's before all. */
export function offsetAt(offsets: ReadonlyArray<readonly [at: number, offset: number]>, ms: number): number {
  let lo = 0
  let hi = offsets.length - 1
  if (hi < 0) return 0
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (offsets[mid][0] <= ms) lo = mid
    else hi = mid - 1
  }
  return offsets[lo][1]
}

type Offsets = ReadonlyArray<readonly [at: number, offset: number]>

/** The instant of a wall-clock time (the offset taken where the wall time would be in UTC, then corrected once). */
export function wallInstant(offsets: Offsets, wallMs: number): number {
  const guess = wallMs - offsetAt(offsets, wallMs)
  return wallMs - offsetAt(offsets, guess)
}

/**
 * `ms` + `n` months, as ClickHouse adds them to a DateTime of the zone: on its wall clock, the time of day kept and
 * the day cut to the month's last. NaN past the years a Date holds.
 */
export function addMonths(offsets: Offsets, ms: number, n: number): number {
  const d = new Date(ms + offsetAt(offsets, ms))
  const months = d.getUTCFullYear() * 12 + d.getUTCMonth() + n
  const year = Math.floor(months / 12)
  const month = months - year * 12
  const out = new Date(0)
  out.setUTCFullYear(year, month + 1, 0)
  out.setUTCFullYear(year, month, Math.min(d.getUTCDate(), out.getUTCDate()))
  out.setUTCHours(d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds())
  return wallInstant(offsets, out.getTime())
}

/**
 * SQL (SQLite's and ClickHouse's alike) for the offset in force at the instant `ms` (an integer expression in
 * milliseconds), from a DailyBreakdownQuery's `offsets`: adding it to `ms` before dividing by a day gives the
 * day number on that zone's wall clock.
 */
export function offsetSql(ms: string, offsets: ReadonlyArray<readonly [at: number, offset: number]>): string {
  if (offsets.length <= 1) return String(offsets[0]?.[1] ?? 0)
  const cases = offsets.slice(1).reverse().map(([at, offset]) => `WHEN ${ms} >= ${Math.trunc(at)} THEN ${Math.trunc(offset)}`)
  return `(CASE ${cases.join(' ')} ELSE ${Math.trunc(offsets[0]![1])} END)`
}
