/**
 * Applies scheduled changes when they fall due (PostHog's `process_scheduled_changes` task). It runs on the main
 * thread, which owns management.db's writing connection, and applies each change through the FeatureFlags
 * service as the user who scheduled it: the flag's rules, version, activity entry and the evaluation caches'
 * notice are those of a user's PATCH, and a change its user may no longer make fails like their PATCH would.
 *
 * PostHog polls every minute, so a change lands up to a minute late. Here one timer sleeps until the next
 * change falls due (re-armed when one is written) and at most CHECK_MS: idle, that is one indexed query a
 * minute; the minute also bounds how late a wall-clock jump or a row written by another process makes a change.
 * Time is the injected clock's; `runDue()` applies what is due by it without waiting for the timer.
 */
import { iso, type Clock } from '../../common/clock.js'
import { isAppError } from '../../common/errors.js'
import type { Logger } from '../../observability/logger.js'
import type { Db } from '../../storage/sqlite/database.js'
import type { Accounts } from '../accounts.js'
import type { FeatureFlags } from '../feature-flags/index.js'
import { ChangeRefused, flagPatchFor } from './operations.js'
import { NoNextRun } from './cron.js'
import { CronSyntaxError } from './cron-fields.js'
import { hasRecurrence, isPaused, type ScheduledChangeRecord } from './record.js'
import { nextRunAfter, stepOf, withFailure } from './schedule.js'
import { flagIdOf, FLAG_NOT_FOUND, type ScheduledChanges } from './service.js'

/** The longest the timer sleeps, and how long a change that failed for a passing reason waits to be retried. */
export const CHECK_MS = 60_000

export interface ApplierDeps {
  db: Db
  clock: Clock
  accounts: Accounts
  featureFlags: FeatureFlags
  changes: ScheduledChanges
  logger?: Logger
}

export type Outcome = 'applied' | 'failed' | 'retrying' | 'skipped'

export class ScheduledChangeApplier {
  readonly #deps: ApplierDeps
  /** Change id → not before (ms): changes that failed for a passing reason wait CHECK_MS, as PostHog's next run. */
  readonly #retryAt = new Map<number, number>()
  #timer: NodeJS.Timeout | null = null
  #running = false
  #unsubscribe: (() => void) | null = null

  constructor(deps: ApplierDeps) {
    this.#deps = deps
  }

  start(): void {
    if (this.#running) return
    this.#running = true
    this.#unsubscribe = this.#deps.changes.onChange(() => this.#arm(0))
    this.#arm(0)
  }

  stop(): void {
    this.#running = false
    this.#unsubscribe?.()
    this.#unsubscribe = null
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
  }

  /** Applies every change due by the clock, oldest first; one change's failure never stops the others. */
  runDue(): Map<number, Outcome> {
    return this.#runDueAt(this.#deps.clock.now())
  }

  #runDueAt(now: number): Map<number, Outcome> {
    const outcomes = new Map<number, Outcome>()
    for (const id of this.#deps.changes.repository.dueIds(iso(now))) {
      if ((this.#retryAt.get(id) ?? 0) > now) continue
      try {
        outcomes.set(id, this.#applyOne(id, now))
      } catch (error) {
        // Recording the outcome failed too (the database is full or gone): the change stays due.
        this.#deps.logger?.error({ err: error, scheduledChangeId: id }, 'scheduled change could not be recorded')
        this.#retryAt.set(id, now + CHECK_MS)
      }
    }
    return outcomes
  }

  #tick(): void {
    this.#timer = null
    if (!this.#running) return
    const ranAt = this.#deps.clock.now()
    // A timer callback that throws would take the process down: a database that can't be read now is tried
    // again a minute later.
    try {
      this.#runDueAt(ranAt)
      this.#arm(undefined, ranAt)
    } catch (error) {
      this.#deps.logger?.error({ err: error }, 'scheduled changes could not be read')
      this.#arm(CHECK_MS)
    }
  }

  /**
   * Sleeps until the next change or retry is due, at most CHECK_MS; `delay` forces an earlier look. The next
   * change is the first due after `ranAt`, the time the last run read: one that fell due while that run worked
   * is due now, not a minute from now.
   */
  #arm(delay?: number, ranAt?: number): void {
    if (!this.#running) return
    if (this.#timer) clearTimeout(this.#timer)
    let wait = delay ?? CHECK_MS
    if (delay === undefined) {
      const now = this.#deps.clock.now()
      const next = this.#deps.changes.repository.nextDueAfter(iso(ranAt ?? now))
      if (next !== null) wait = Math.min(wait, Date.parse(next) - now)
      for (const [id, at] of this.#retryAt) {
        if (this.#deps.changes.repository.byId(id)?.executed_at !== null) this.#retryAt.delete(id)
        else wait = Math.min(wait, at - now)
      }
    }
    // A timer keeps no process alive: shutdown stops it, and tests' servers exit without it.
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, wait)).unref()
  }

  #applyOne(id: number, now: number): Outcome {
    const repo = this.#deps.changes.repository
    const change = repo.byId(id)
    if (!change || change.executed_at !== null || isPaused(change)) return 'skipped'
    const at = iso(now)
    // A recurring schedule whose window closed ends without a last run.
    if (change.end_date !== null && Date.parse(change.end_date) <= now && hasRecurrence(change)) {
      repo.update({ ...change, executed_at: at, updated_at: at })
      return 'skipped'
    }
    try {
      const [after, outcome] = this.#deps.db
        .transaction(() => {
          const done = this.#apply(change, now)
          repo.update(done[0])
          return done
        })
        .immediate()
      this.#retryAt.delete(id)
      if (outcome === 'failed') this.#deps.logger?.info({ scheduledChangeId: id, error: after.failure_reason }, 'scheduled change has no next run')
      return outcome
    } catch (error) {
      const permanent = error instanceof ChangeRefused || isAppError(error)
      const message = isAppError(error) ? error.detail : error instanceof Error ? error.message : String(error)
      const type = error instanceof ChangeRefused ? error.errorType : error instanceof Error ? error.name : 'Error'
      const failed = withFailure(change, message, type, permanent, at)
      repo.update(failed)
      const willRetry = failed.executed_at === null
      if (willRetry) this.#retryAt.set(id, now + CHECK_MS)
      else this.#retryAt.delete(id)
      this.#deps.logger?.info({ scheduledChangeId: id, error: message, willRetry }, 'scheduled change failed')
      return willRetry ? 'retrying' : 'failed'
    }
  }

  /** Changes the flag and answers the change as it is after the run, and how the run went. */
  #apply(change: ScheduledChangeRecord, now: number): [ScheduledChangeRecord, Outcome] {
    const { accounts, featureFlags } = this.#deps
    const project = accounts.projectById(change.team_id)
    const flagId = flagIdOf(change.record_id)
    const flag = project && flagId !== null ? featureFlags.repository.get(project.id, flagId) : null
    // A deleted flag is gone to its users (the flag list and /decide skip it): changing it would help no one.
    if (!project || !flag || flag.deleted) throw new ChangeRefused(FLAG_NOT_FOUND, 'DoesNotExist')
    const userId = change.created_by_id ?? flag.created_by_id
    if (userId === null) throw new ChangeRefused('The user who scheduled this change no longer exists', 'DoesNotExist')
    featureFlags.update(project, flag.id, flagPatchFor(change.payload, flag.filters), userId)
    const at = iso(now)
    const step = stepOf(change)
    if (step === null) return [{ ...change, executed_at: at, updated_at: at }, 'applied']
    let next: number
    try {
      next = nextRunAfter(Date.parse(change.scheduled_at), step, now)
    } catch (error) {
      if (!(error instanceof NoNextRun || error instanceof CronSyntaxError)) throw error
      // A cron expression no date matches (`0 0 31 2 *`), or whose `R` drew a value out of range: PostHog's
      // task has changed the flag by then and keeps that change; the schedule fails for good, its time as it was.
      return [withFailure(change, error.message, error.name, true, at), 'failed']
    }
    const ended = change.end_date !== null && next > Date.parse(change.end_date)
    return [{ ...change, scheduled_at: iso(next), last_executed_at: at, executed_at: ended ? at : null, updated_at: at }, 'applied']
  }
}
