/**
 * A property's text read as a number: one rule for every store and the action matcher, so that `gt`/`lt` filters,
 * HogQL's toFloat and `math_property` sums pass and add the same events on SQLite and ClickHouse. The text is a
 * number when it is an optional `+`, then an optional `-`, digits with an optional fraction (or a fraction
 * alone) and an optional exponent; anything else (spaces around it, `0x10`, `inf`, `nan`) is none.
 *
 * Each store had its own reading before: SQLite's CAST read `abc` as 0 and ` 3` as 3, ClickHouse 18.16's
 * toFloat64OrNull read `inf` as infinity and `+5` as nothing, and Node's Number read `0x10` as 16. ClickHouse
 * gets the rule as `extract` (re2) of the number's part, which every version's toFloat64OrNull reads alike.
 */
import { quote } from './clickhouse-schema.js'

/** The number's part (without a leading `+`) in group 1; written for both JavaScript and re2. */
const NUMBER_TEXT = /^\+?(-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$/

/** The text's number (±Infinity for an exponent beyond a double's), or null when it is none. */
export function textNumber(text: string): number | null {
  const m = NUMBER_TEXT.exec(text)
  return m === null ? null : Number(m[1])
}

/** textNumber in ClickHouse SQL, of a Nullable(String) `sql` (NULL for NULL). */
export function textNumberSql(sql: string): string {
  return `toFloat64OrNull(extract(${sql}, ${quote(NUMBER_TEXT.source)}))`
}
