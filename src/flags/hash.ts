/**
 * PostHog's bucketing hash: the first 15 hex digits (60 bits) of SHA-1 over `prefix + identifier + salt`,
 * divided by 0xFFFFFFFFFFFFFFF. As a double that divisor rounds to 2^60, so the value is the 60-bit integer,
 * correctly rounded to a double, times 2^-60 — exactly what Rust's `u64 as f64 / LONG_SCALE as f64` gives.
 */
import { hash as cryptoHash } from 'node:crypto'
import type { HashFn } from './types.js'

const TWO_POW_28 = 268435456
const TWO_POW_60 = 1152921504606846976

/**
 * The digest is read through the `binary` (latin1) encoding: one char per byte, no Buffer allocation, about twice
 * as fast as hex + parseInt. The 60 bits are split 32 + 28 so both halves are exact integers; the single
 * final addition then rounds the same way a u64 → f64 conversion does.
 */
export const sha1Hash: HashFn = (input) => {
  const d = cryptoHash('sha1', input, 'binary')
  const hi = ((d.charCodeAt(0) << 24) | (d.charCodeAt(1) << 16) | (d.charCodeAt(2) << 8) | d.charCodeAt(3)) >>> 0
  const lo = (d.charCodeAt(4) << 20) | (d.charCodeAt(5) << 12) | (d.charCodeAt(6) << 4) | (d.charCodeAt(7) >> 4)
  return (hi * TWO_POW_28 + lo) / TWO_POW_60
}

/**
 * Hash inputs: rollout `"<flag key>.<identifier>"`, variant the same plus `"variant"` (built in `match.ts`
 * from a prefix compiled once), holdout `"holdout-<identifier>"` — the same for every flag, so a person is
 * held out of all experiments together.
 */
export function holdoutHashInput(identifier: string): string {
  return 'holdout-' + identifier
}
