/**
 * The statuses of asynchronous query computations, polled at `GET …/query/:query_id/`: PostHog's QueryStatus
 * (posthog/clickhouse/client/execute_async.py's QueryStatusManager keeps it in Redis for 20 minutes from each
 * write, so its `expiration_time` is set from the start; PostHog's schema names the fields). Here they live in
 * memory, per project, bounded in number (the oldest go first) and dropped 20 minutes after their computation
 * ends, as PostHog's expire.
 *
 * Cancelling (`DELETE …/query/:query_id/`, PostHog's `cancel_query`) deletes a running status at once, so a
 * later poll is a 404 as in PostHog, and tells whoever started the computation that this status no longer
 * wants its answer; a complete status is kept ("Query already complete").
 */
import { iso } from '../../common/clock.js'
import { AppError } from '../../common/errors.js'
import type { JsonObject } from '../../common/json.js'

const STATUS_TTL_MS = 20 * 60_000
const MAX_STATUSES = 1000

export interface QueryStatus {
  id: string
  team_id: number
  query_async: true
  complete: boolean
  error: boolean
  error_message: string | null
  results: JsonObject | null
  start_time: string
  pickup_time: string
  end_time: string | null
  expiration_time: string
  dashboard_id: null
  insight_id: null
  labels: null
  query_progress: null
  task_id: null
}

/** What `DELETE …/query/:query_id/` did: PostHog answers 200 in every case, with a message saying which. */
export type CancelOutcome = 'cancelled' | 'complete' | 'unknown'

export function cancelMessage(outcome: CancelOutcome, teamId: number, id: string): string {
  if (outcome === 'complete') return 'Query already complete'
  if (outcome === 'cancelled') return 'Query cancelled'
  return `Query ${id} not found for team ${teamId}; nothing cancelled`
}

interface Tracked {
  status: QueryStatus
  /** Called when the status is cancelled while its computation runs. */
  release: () => void
}

export class QueryStatuses {
  readonly #statuses = new Map<string, Tracked>()
  readonly #now: () => number

  constructor(now: () => number) {
    this.#now = now
  }

  /**
   * Records a computation as started and settles its status when it does; answers the (running) status.
   * `release` is called if the status is cancelled before then.
   */
  track(teamId: number, id: string, computation: Promise<JsonObject>, release: () => void): QueryStatus {
    const started = iso(this.#now())
    const status: QueryStatus = {
      id,
      team_id: teamId,
      query_async: true,
      complete: false,
      error: false,
      error_message: null,
      results: null,
      start_time: started,
      pickup_time: started,
      end_time: null,
      expiration_time: iso(this.#now() + STATUS_TTL_MS),
      dashboard_id: null,
      insight_id: null,
      labels: null,
      query_progress: null,
      task_id: null,
    }
    const key = `${teamId}/${id}`
    this.#statuses.delete(key)
    this.#statuses.set(key, { status, release })
    this.#prune()
    const settle = (change: Partial<QueryStatus>) => {
      const ended = this.#now()
      Object.assign(status, { complete: true, end_time: iso(ended), expiration_time: iso(ended + STATUS_TTL_MS) }, change)
    }
    computation.then(
      (results) => settle({ results }),
      // What a client may read of a failure: an AppError's detail (a refusal of the query), nothing else.
      (error: unknown) => settle({ error: true, error_message: error instanceof AppError ? error.detail : null }),
    )
    // A copy: the caller answers it now, and the computation may settle before the answer is written.
    return { ...status }
  }

  /** The status, or 404 as PostHog's QueryNotFoundError. */
  get(teamId: number, id: string): QueryStatus {
    const status = this.find(teamId, id)
    if (status === null) throw new AppError('not_found', { detail: `Query ${id} not found for team ${teamId}` })
    return status
  }

  /** The status, or null when unknown or expired. */
  find(teamId: number, id: string): QueryStatus | null {
    this.#prune()
    return this.#statuses.get(`${teamId}/${id}`)?.status ?? null
  }

  /** Cancels a running status (deleted, its computation released); a complete one is kept, as PostHog's. */
  cancel(teamId: number, id: string): CancelOutcome {
    this.#prune()
    const key = `${teamId}/${id}`
    const tracked = this.#statuses.get(key)
    if (tracked === undefined) return 'unknown'
    if (tracked.status.complete) return 'complete'
    this.#statuses.delete(key)
    tracked.release()
    return 'cancelled'
  }

  /** Drops complete statuses past their expiration (a running one is kept until it ends) and the oldest beyond the bound. */
  #prune(): void {
    const now = this.#now()
    for (const [key, { status }] of this.#statuses) {
      const expired = status.complete && Date.parse(status.expiration_time) <= now
      if (expired || this.#statuses.size > MAX_STATUSES) this.#statuses.delete(key)
    }
  }
}
