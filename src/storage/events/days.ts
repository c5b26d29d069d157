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
