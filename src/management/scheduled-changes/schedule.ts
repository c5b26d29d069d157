/**
 * The applier's arithmetic, pure: when a recurring change runs next (PostHog's `compute_next_run`, dateutil's
 * relativedelta: a month or year later on the same day, clamped to the month's last day; or its
 * `compute_next_run_cron`, cron.ts), and what a failure leaves behind (PostHog's failure context, stored as
 * JSON, and the sentence the API shows for it).
 */
import { isKnownTimeZone } from '../../common/time-zones.js'
import { nextCronRun } from './cron.js'
import type { RecurrenceInterval, ScheduledChangeRecord } from './record.js'

/** PostHog's MAX_RETRY_ATTEMPTS: a change that keeps failing for a passing reason stops after this many tries. */
export const MAX_RETRY_ATTEMPTS = 5
/** PostHog's MAX_CATCHUP_ITERATIONS: how many missed runs are skipped one by one before jumping past now. */
const MAX_CATCHUP = 1000

function addMonths(ms: number, months: number): number {
  const d = new Date(ms)
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()))
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate()
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay))
  return target.getTime()
}

/**
 * The run after `ms` on an interval. In UTC whatever the change's timezone: PostHog's `compute_next_run` adds
 * a relativedelta to `scheduled_at` as Django loads it, a UTC datetime (a daily change keeps its UTC time of day
 * across daylight saving; only cron expressions read the project's wall clock).
 */
export function nextRun(ms: number, interval: RecurrenceInterval): number {
  switch (interval) {
    case 'daily':
      return ms + 86_400_000
    case 'weekly':
      return ms + 7 * 86_400_000
    case 'monthly':
      return addMonths(ms, 1)
    case 'yearly':
      return addMonths(ms, 12)
  }
}

/** A schedule's rhythm: the run after a given one. */
export type Step = (ms: number) => number

/**
 * The rhythm of a change that recurs, or null: its cron expression if it has one (PostHog tries it first),
 * else its interval.
 */
export function stepOf(change: Pick<ScheduledChangeRecord, 'is_recurring' | 'recurrence_interval' | 'cron_expression' | 'timezone'>): Step | null {
  if (!change.is_recurring) return null
  const { cron_expression: cron, recurrence_interval: interval } = change
  // PostHog's resolve_schedule_timezone: a name the runtime no longer knows reads the expression in UTC.
  const zone = isKnownTimeZone(change.timezone) ? change.timezone : 'UTC'
  if (cron) return (ms) => nextCronRun(cron, ms, zone)
  return interval === null ? null : (ms) => nextRun(ms, interval)
}

/**
 * The first run after `now` that follows `scheduled` on its rhythm: runs missed while late are skipped, not
 * replayed. Throws what the step throws (a cron expression with no next date).
 */
export function nextRunAfter(scheduled: number, step: Step, now: number): number {
  let next = step(scheduled)
  for (let i = 0; next <= now && i < MAX_CATCHUP; i++) next = step(next)
  return next <= now ? step(now) : next
}

export interface FailureContext {
  error: string
  error_type: string
  will_retry: boolean
  retry_count: number
  max_retries: number
  retry_exhausted?: true
  error_classification: 'recoverable' | 'unrecoverable'
}

/**
 * A failed attempt: `permanent` failures (the flag is gone, the change no longer validates) end the change at
 * once; others (the database was busy or full) are retried until MAX_RETRY_ATTEMPTS.
 */
export function failureContext(error: string, errorType: string, permanent: boolean, failureCount: number): FailureContext {
  const exhausted = failureCount >= MAX_RETRY_ATTEMPTS
  const context: FailureContext = {
    error,
    error_type: errorType,
    will_retry: !permanent && !exhausted,
    retry_count: failureCount,
    max_retries: MAX_RETRY_ATTEMPTS,
    error_classification: permanent ? 'unrecoverable' : 'recoverable',
  }
  if (exhausted) context.retry_exhausted = true
  return context
}

/** The change after a failed attempt at `at`: counted, its reason stored, and ended unless it will be retried. */
export function withFailure(change: ScheduledChangeRecord, error: string, errorType: string, permanent: boolean, at: string): ScheduledChangeRecord {
  const failures = change.failure_count + 1
  const context = failureContext(error, errorType, permanent, failures)
  return { ...change, failure_count: failures, failure_reason: JSON.stringify(context), executed_at: context.will_retry ? null : at, updated_at: at }
}

/** PostHog's `formatted_failure_reason`: the error and its retry state, without the rest of the context. */
export function formatFailureReason(stored: string | null): string | null {
  if (!stored) return null
  let context: unknown
  try {
    context = JSON.parse(stored)
  } catch {
    return stored
  }
  if (typeof context !== 'object' || context === null || !('error' in context)) return stored
  const c = context as Partial<FailureContext>
  let message = String(c.error ?? 'Unknown error')
  const count = c.retry_count ?? 0
  if (c.will_retry === false && c.retry_exhausted) {
    message += c.max_retries !== undefined ? ` (failed after ${count} out of ${c.max_retries} attempts)` : ` (failed after ${count} attempts)`
  } else if (c.will_retry === false && c.error_classification === 'unrecoverable') {
    message += ' (permanent error)'
  } else if (c.will_retry) {
    if (c.max_retries !== undefined) {
      const left = c.max_retries - count
      message += ` (will retry automatically, ${left} ${left === 1 ? 'attempt' : 'attempts'} remaining)`
    } else message += ' (will retry automatically)'
  }
  return message
}
