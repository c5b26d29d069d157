/**
 * What an experiment's `stats_config` asks of the new engine's statistics, read as PostHog's result builders read
 * it (products/experiments/backend/hogql_queries/utils.py): the method, each method's section with its
 * `_validate_numeric_range` and `_parse_enum_config` fallbacks, and the frequentist method's sequential testing
 * (`_resolve_sequential_settings`). Nothing here refuses: a level of exactly 0 or 1 is kept for the method to
 * refuse, as PostHog's configs do.
 */
import { pyTruthy } from '../../common/drf-fields.js'

export type StatsMethod = 'bayesian' | 'frequentist'
export type Difference = 'RELATIVE' | 'ABSOLUTE'

/** SequentialTwoSidedTTest.DEFAULT_TUNING_PARAMETER, PostHog's when neither experiment nor team sets one. */
export const DEFAULT_SEQUENTIAL_TUNING = 5000
const MAX_SEQUENTIAL_TUNING = 1_000_000_000

// Python's float() of a string: an optional sign, then digits (single underscores between them), a fraction and
// an exponent, or inf, infinity and nan; JS's Number() also reads hex, octal and binary, which Python refuses.
const DIGITS = String.raw`\d(?:_?\d)*`
const PY_FLOAT = new RegExp(String.raw`^[+-]?(?:(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:[eE][+-]?${DIGITS})?|inf(?:inity)?|nan)$`, 'i')

/** Python's float(value) of a JSON value, or null where it raises (None, lists, objects, other text). */
function pyFloat(value: unknown): number | null {
  if (typeof value === 'boolean') return value ? 1 : 0
  if (typeof value === 'number') return value
  if (typeof value !== 'string') return null
  const text = value.trim()
  if (!PY_FLOAT.test(text)) return null
  const lower = text.toLowerCase().replace(/_/g, '')
  if (lower.endsWith('nan')) return Number.NaN
  if (lower.endsWith('inf') || lower.endsWith('infinity')) return lower.startsWith('-') ? -Infinity : Infinity
  return Number(lower)
}

/** `_validate_numeric_range`: float(value) when it lies in [min, max], else the fallback (NaN never does). */
function numberIn(value: unknown, min: number, max: number, fallback: number): number {
  const n = pyFloat(value)
  return n !== null && n >= min && n <= max ? n : fallback
}

/** `_parse_enum_config` on DifferenceType: a member's name, else relative. */
function differenceOf(value: unknown): Difference {
  return value === 'ABSOLUTE' || value === 'RELATIVE' ? value : 'RELATIVE'
}

/** `stats_config.<method>`, or {} when it is absent or no object (where PostHog's `.get` would fail). */
function sectionOf(stats: Record<string, unknown> | null, method: StatsMethod): Record<string, unknown> {
  const section = stats?.[method]
  return section !== null && typeof section === 'object' && !Array.isArray(section) ? (section as Record<string, unknown>) : {}
}

/** The stats method of an experiment (`get_experiment_stats_method`): bayesian unless it says frequentist. */
export function statsMethod(stats: Record<string, unknown> | null): StatsMethod {
  return stats?.method === 'frequentist' ? 'frequentist' : 'bayesian'
}

export interface MethodSettings {
  /** The Bayesian `ci_level` (0.95) or the frequentist `alpha` (0.05); 0 and 1 pass through. */
  level: number
  difference: Difference
  /** The frequentist test's tuning parameter when sequential testing is on, else null (the fixed-horizon t-test). */
  sequentialTuning: number | null
}

/**
 * The chosen method's settings. Sequential testing is on when `frequentist.sequential_testing_enabled` is present
 * and true in Python's sense; absent is the team default, off as skylark has no team setting (as CUPED's).
 */
export function methodSettings(stats: Record<string, unknown> | null, method: StatsMethod): MethodSettings {
  const section = sectionOf(stats, method)
  const difference = differenceOf(section.difference_type ?? 'RELATIVE')
  if (method === 'bayesian') return { level: numberIn(section.ci_level ?? 0.95, 0, 1, 0.95), difference, sequentialTuning: null }
  const sequential = 'sequential_testing_enabled' in section && pyTruthy(section.sequential_testing_enabled)
  return {
    level: numberIn(section.alpha ?? 0.05, 0, 1, 0.05),
    difference,
    sequentialTuning: sequential ? numberIn(section.sequential_tuning_parameter ?? DEFAULT_SEQUENTIAL_TUNING, 1, MAX_SEQUENTIAL_TUNING, DEFAULT_SEQUENTIAL_TUNING) : null,
  }
}
