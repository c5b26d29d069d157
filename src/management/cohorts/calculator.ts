/**
 * Counts dynamic cohorts' persons, as PostHog's calculate_cohort tasks do, so a cohort's `count`,
 * `is_calculating`, `last_calculation` and calculation history read as PostHog's. skylark evaluates membership
 * when asked (flags, cohort persons, filters), so the count is all a calculation keeps.
 *
 * - A write that marks a cohort calculating (created, or changed while live and dynamic) queues it at once.
 * - Every CHECK_MS the due ones (calculations.ts: never counted, or counted MAX_AGE_MS ago; not after more than
 *   MAX_ERRORS failures in a row) are queued, PER_LOOK at most, least recently counted first, as PostHog's
 *   minutely task takes a few.
 * - One cohort is counted at a time: the count scans persons.db on its read thread (and, for behavioural
 *   conditions, the event store), which serves the API's lists too.
 * - A cohort written again while it is counted is counted again after; it stays calculating until then.
 * It runs on the main thread, which owns management.db's writing connection. Time is the injected clock's.
 */
import type { Clock } from '../../common/clock.js'
import type { Logger } from '../../observability/logger.js'
import type { PropertyNode } from '../../storage/events/index.js'
import type { PerformedReader } from './behavioural.js'
import { evaluatedCohortCondition } from './evaluate.js'
import type { CohortKey } from './calculations.js'
import type { CohortRecord, Cohorts } from './service.js'

/** How often due cohorts are looked for (PostHog's task runs every minute). */
export const CHECK_MS = 60_000
/** The most due cohorts one look queues. */
export const PER_LOOK = 5

/** How many persons the cohort holds at `now`. */
export type CohortCount = (cohort: CohortRecord, now: number) => Promise<number>

/** A cohort's count: its condition (behavioural conditions read by `read`), counted over persons by `countPersons`. */
export function cohortCount(cohorts: Cohorts, countPersons: (teamId: number, condition: PropertyNode) => Promise<number>, read: PerformedReader | null): CohortCount {
  const byId = (teamId: number, id: number) => cohorts.record(teamId, id)
  return async (cohort, now) => countPersons(cohort.team_id, await evaluatedCohortCondition(cohort.id, byId, cohort.team_id, read, now))
}

export interface CalculatorDeps {
  cohorts: Cohorts
  count: CohortCount
  clock: Clock
  logger?: Logger
}

const keyText = (key: CohortKey) => `${key.teamId}:${key.id}`

export class CohortCalculator {
  readonly #deps: CalculatorDeps
  readonly #queue = new Map<string, CohortKey>()
  #draining: Promise<void> | null = null
  #timer: NodeJS.Timeout | null = null
  #running = false
  #unsubscribe: (() => void) | null = null

  constructor(deps: CalculatorDeps) {
    this.#deps = deps
  }

  /** Queues the cohorts marked calculating (left so by a stopped process too) and those due, then looks every CHECK_MS. */
  start(): void {
    if (this.#running) return
    this.#running = true
    this.#unsubscribe = this.#deps.cohorts.onStale((teamId, id) => this.#add({ teamId, id }))
    for (const key of this.#deps.cohorts.calculations.calculating()) this.#add(key)
    this.#look()
  }

  /** Stops looking, drops what is queued and waits for the count under way. */
  async stop(): Promise<void> {
    this.#running = false
    this.#unsubscribe?.()
    this.#unsubscribe = null
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
    this.#queue.clear()
    await this.#draining
  }

  /** Queues what is due by the clock now, and waits until nothing is queued. */
  async runDue(): Promise<void> {
    this.#queueDue()
    await this.settled()
  }

  /** Waits until nothing is queued or being counted. */
  async settled(): Promise<void> {
    while (this.#draining) await this.#draining
  }

  #look(): void {
    this.#timer = null
    if (!this.#running) return
    // A timer callback that throws would take the process down: a database that can't be read now is read a look later.
    try {
      this.#queueDue()
    } catch (error) {
      this.#deps.logger?.error({ err: error }, 'due cohort calculations could not be read')
    }
    // A timer keeps no process alive: shutdown stops it, and tests' servers exit without it.
    this.#timer = setTimeout(() => this.#look(), CHECK_MS).unref()
  }

  #queueDue(): void {
    for (const key of this.#deps.cohorts.calculations.due(this.#deps.clock.now(), PER_LOOK)) this.#add(key)
  }

  #add(key: CohortKey): void {
    if (!this.#running) return
    this.#queue.set(keyText(key), key)
    this.#kick()
  }

  #kick(): void {
    if (this.#draining) return
    this.#draining = this.#drain().finally(() => {
      this.#draining = null
      // Queued after the loop saw the queue empty, before this ran.
      if (this.#running && this.#queue.size > 0) this.#kick()
    })
  }

  async #drain(): Promise<void> {
    for (;;) {
      const [next] = this.#queue.values()
      if (next === undefined || !this.#running) return
      this.#queue.delete(keyText(next))
      await this.#calculate(next)
    }
  }

  async #calculate(key: CohortKey): Promise<void> {
    const { cohorts, clock, logger } = this.#deps
    const calculations = cohorts.calculations
    try {
      const cohort = cohorts.record(key.teamId, key.id)
      if (cohort === null || cohort.deleted || cohort.is_static) return calculations.settle(key)
      const startedAt = clock.now()
      const run = calculations.begin(key, cohort.filters, startedAt)
      let outcome: { count: number } | { error: string }
      try {
        outcome = { count: await this.#deps.count(cohort, startedAt) }
      } catch (error) {
        // A cohort skylark can't count (a behavioural kind it does not evaluate, too many persons to read) is a
        // failed calculation, as PostHog records one, never a failed process.
        outcome = { error: error instanceof Error ? error.message : String(error) }
        logger?.warn({ err: error, teamId: key.teamId, cohortId: key.id }, 'cohort calculation failed')
      }
      calculations.finish(run, key, outcome, startedAt, clock.now(), this.#queue.has(keyText(key)))
    } catch (error) {
      logger?.error({ err: error, teamId: key.teamId, cohortId: key.id }, 'cohort calculation could not be recorded')
    }
  }
}
