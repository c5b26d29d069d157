/**
 * The query API's cache around the ExperimentQueryRunner, as PostHog's QueryRunner.run
 * (posthog/hogql_queries/query_runner.py) wraps its runners' `calculate`, with the experiment runner's
 * freshness (experiment_query_runner.py: an answer is fresh for 24 hours, its `cache_target_age`).
 *
 * - The key (`cache_key`, "cache_" + an MD5 as PostHog's generate_cache_key) is made of the project, the
 *   query with its keys sorted and without `tags` (PostHog drops them too), and everything read to answer
 *   it: the experiment's and its flag's stored records (dates, variants, exposure criteria, stats_config,
 *   holdout, updated_at…), the holdout's, the project's timezone and test account filters, the cohorts of cohort filters, the steps of the actions the metric and
 *   the exposure criteria name. Any edit of those gives a new key, so an edited experiment is computed again;
 *   PostHog's key holds the query and the stats method only. ExperimentExposureQuery answers are cached alike.
 * - New events do not change the key: an answer is served until it is 24 hours old, its `last_refresh`
 *   saying when it was computed, as PostHog does. `refresh: true` or `"force_blocking"` computes again.
 * - Identical requests that need a computation while one runs wait for that one (PostHog's query coalescer);
 *   a failure is shared by them and never cached.
 * - Asynchronous modes answer at once (202 with the running `query_status`) and compute in the background;
 *   the status is polled at `GET …/query/:query_id/` (query-status.ts). Its id is the request's
 *   `client_query_id`, else the cache key, as PostHog's; a cache miss in `async`/`lazy_async` mode answers a
 *   status of that id still kept (running or complete) instead of starting another, as PostHog's
 *   enqueue_process_query_task does without a refresh.
 * - Cancelling a status (`DELETE …/query/:query_id/`) cannot stop a scan already on the read thread or in
 *   ClickHouse: it withdraws that status's interest. A computation nobody wants any more (every status that
 *   asked for it cancelled, no request waiting on it) still runs to its end, but its answer is dropped, not
 *   cached, as PostHog's killed query caches nothing; an identical request arriving meanwhile takes it up
 *   again rather than queueing a second scan behind it.
 *
 * Answers live in memory, bounded in entries and bytes (QUERY_CACHE_MAX_ENTRIES, QUERY_CACHE_MAX_BYTES); a
 * restart empties the cache.
 */
import { createHash } from 'node:crypto'
import { iso } from '../../common/clock.js'
import { isPlainObject, sortedKeys, type JsonObject } from '../../common/json.js'
import type { Project } from '../../management/index.js'
import { ByteLru } from './byte-lru.js'
import { QueryStatuses, type CancelOutcome, type QueryStatus } from './query-status.js'
import { queryRequestOptions } from './refresh.js'
import { cohortId, type CohortById } from '../../management/index.js'
import type { ExperimentQueryRunner, ExperimentSource, ProjectActionById } from './runner.js'

const TARGET_AGE_MS = 24 * 3_600_000
/** PostHog's `_refresh_frequency`: when a client may ask for a recomputation (not enforced, as PostHog). */
const CLIENT_REFRESH_MS = 60_000
/** Part of the key: a change in how answers are computed or shaped must not serve answers made before it. */
const KEY_VERSION = 1

export interface QueryCacheLimits {
  maxEntries: number
  maxBytes: number
}

/** What became of a request or a computation, counted for /metrics (PostHog counts hit, stale and miss). */
export type CacheOutcome = 'hit' | 'stale' | 'miss' | 'computed' | 'joined' | 'abandoned'

export interface CachedQueriesDeps {
  runner: Pick<ExperimentQueryRunner, 'run'>
  experiments: ExperimentSource
  actionById: ProjectActionById
  /** The cohorts cohort filters name: their definitions are part of the key. */
  cohortById?: CohortById | null
  limits: QueryCacheLimits
  now?: () => number
  count?: (outcome: CacheOutcome) => void
}

export interface QueryAnswer {
  status: 200 | 202
  body: JsonObject
}

interface Cached {
  answer: JsonObject
  computedAt: number
}

interface Computation {
  answer: Promise<Cached>
  /** Requests waiting on it and statuses not cancelled; at 0 its answer is not cached. */
  wanted: number
}

/** The ids of the actions (ActionsNodes) and cohorts (cohort filters) named at any depth. */
function referenced(node: unknown, into = { actions: new Set<number>(), cohorts: new Set<number>() }): typeof into {
  if (Array.isArray(node)) for (const item of node) referenced(item, into)
  else if (isPlainObject(node)) {
    if (node.kind === 'ActionsNode' && typeof node.id === 'number') into.actions.add(node.id)
    const cohort = node.type === 'cohort' ? cohortId(node) : null
    if (cohort !== null) into.cohorts.add(cohort)
    for (const value of Object.values(node)) referenced(value, into)
  }
  return into
}

export class CachedExperimentQueries {
  readonly #deps: CachedQueriesDeps
  readonly #now: () => number
  readonly #answers: ByteLru<Cached>
  readonly #running = new Map<string, Computation>()
  readonly #statuses: QueryStatuses
  readonly #count: (outcome: CacheOutcome) => void

  constructor(deps: CachedQueriesDeps) {
    this.#deps = deps
    this.#now = deps.now ?? Date.now
    this.#answers = new ByteLru(deps.limits.maxEntries, deps.limits.maxBytes)
    this.#statuses = new QueryStatuses(this.#now)
    this.#count = deps.count ?? (() => {})
  }

  async run(project: Project, body: unknown): Promise<QueryAnswer> {
    const { mode, clientQueryId } = queryRequestOptions(body)
    const key = this.#keyOf(project, body)
    // A query the runner will refuse (no experiment, not an ExperimentQuery…): its error, never cached.
    if (key === null) return { status: 200, body: await this.#deps.runner.run(project, body, this.#now()) }
    // PostHog's `self.query_id or cache_key`: without a client_query_id the status is the cache key's, so
    // identical asynchronous requests share it.
    const queryId = clientQueryId ?? key
    const background = (refresh: boolean) => {
      // `enqueue_process_query_task`: a status already known is answered as it is unless a refresh is asked.
      const known = refresh ? null : this.#statuses.find(project.id, queryId)
      if (known !== null) return { ...known }
      const computation = this.#compute(project, body, key, refresh)
      return this.#statuses.track(project.id, queryId, computation.answer.then((c) => c.answer), () => computation.wanted--)
    }

    if (mode === 'force_async') return { status: 202, body: { query_status: background(true) } }
    const cached = mode === 'force_blocking' ? undefined : this.#answers.get(key)
    if (mode !== 'force_blocking') this.#count(cached === undefined ? 'miss' : this.#isStale(cached) ? 'stale' : 'hit')
    if (cached !== undefined && !this.#isStale(cached)) {
      // `get_async_query_status`: a computation of this id still running is named beside the cached answer.
      const running = this.#statuses.find(project.id, queryId)
      return { status: 200, body: this.#hit(cached, running !== null && !running.complete ? { ...running } : null) }
    }
    if (cached !== undefined && mode !== 'blocking') {
      // Stale, asynchronous modes: the old answer now, a new one computed behind it.
      return { status: 202, body: this.#hit(cached, background(true)) }
    }
    if (cached === undefined && (mode === 'async' || mode === 'lazy_async')) {
      // PostHog's CacheMissResponse.
      return { status: 202, body: { cache_key: key, query_status: background(false) } }
    }
    return { status: 200, body: (await this.#compute(project, body, key, mode === 'force_blocking').answer).answer }
  }

  /** The status of an asynchronous computation of the project's (404 when unknown or expired). */
  status(project: Project, queryId: string): QueryStatus {
    return this.#statuses.get(project.id, queryId)
  }

  /** Cancels an asynchronous computation's status of the project (query-status.ts says what each outcome is). */
  cancel(project: Project, queryId: string): CancelOutcome {
    return this.#statuses.cancel(project.id, queryId)
  }

  /** The cache key of the query, or null when the request does not name a live experiment of the project. */
  #keyOf(project: Project, body: unknown): string | null {
    const query = isPlainObject(body) && isPlainObject(body.query) ? body.query : null
    if (query === null || !(query.kind === 'ExperimentQuery' || query.kind === 'ExperimentExposureQuery') || typeof query.experiment_id !== 'number') return null
    let experiment
    try {
      experiment = this.#deps.experiments.record(project, query.experiment_id)
    } catch {
      return null
    }
    const { tags: _tags, ...rest } = query
    // What the answer reads besides the experiment: the query's metric, the exposure, the test account filters.
    const read: unknown[] = [query.metric, experiment.exposure_criteria, JSON.parse(project.test_account_filters)]
    const named = referenced(read)
    const actions = [...named.actions].sort((a, b) => a - b).map((id) => [id, this.#deps.actionById(project.id, id)?.steps ?? null])
    const cohorts = [...named.cohorts].sort((a, b) => a - b).map((id) => [id, this.#deps.cohortById?.(project.id, id) ?? null])
    const payload = {
      version: KEY_VERSION,
      team_id: project.id,
      // The answer names it, and a draft's window starts at its midnight.
      timezone: project.timezone,
      test_account_filters: project.test_account_filters,
      // `$is_bounce` reads the bounce rate's.
      modifiers: project.modifiers,
      query: rest,
      experiment,
      flag: this.#deps.experiments.flagOf(experiment),
      // The exposures' sample ratio mismatch reads its share.
      holdout: this.#deps.experiments.holdoutOf(experiment),
      actions,
      cohorts,
    }
    return `cache_${createHash('md5').update(JSON.stringify(sortedKeys(payload))).digest('hex')}`
  }

  /**
   * One computation per key at a time, wanted once more by each caller; a forced refresh does not join one
   * that may predate its request. An abandoned one stays joinable until it ends: it is the scan a new
   * request would start, already under way.
   */
  #compute(project: Project, body: unknown, key: string, refresh: boolean): Computation {
    const running = this.#running.get(key)
    if (running !== undefined && !refresh) {
      this.#count('joined')
      running.wanted++
      return running
    }
    this.#count('computed')
    const computedAt = this.#now()
    const answer = this.#deps.runner.run(project, body, computedAt).then((result) => {
      const cached: Cached = { answer: this.#stamp(result, key, computedAt), computedAt }
      // A forced computation may end before an older one still running: the older answer must not replace it.
      const current = this.#answers.get(key)
      const newest = current === undefined || current.computedAt <= computedAt
      if (computation.wanted > 0 && newest) this.#answers.set(key, cached, Buffer.byteLength(JSON.stringify(cached.answer)))
      return cached
    })
    const computation: Computation = { answer, wanted: 1 }
    this.#running.set(key, computation)
    const done = () => {
      if (this.#running.get(key) === computation) this.#running.delete(key)
      if (computation.wanted === 0) this.#count('abandoned')
    }
    answer.then(done, done)
    return computation
  }

  /** The cache fields of PostHog's CachedExperimentQueryResponse, for an answer computed at `at`. */
  #stamp(result: JsonObject, key: string, at: number): JsonObject {
    return {
      ...result,
      cache_key: key,
      is_cached: false,
      last_refresh: iso(at),
      next_allowed_client_refresh: iso(at + CLIENT_REFRESH_MS),
      cache_target_age: iso(at + TARGET_AGE_MS),
      calculation_trigger: null,
      query_status: null,
    }
  }

  #hit(cached: Cached, status: QueryStatus | null): JsonObject {
    return { ...cached.answer, is_cached: true, query_status: status }
  }

  #isStale(cached: Cached): boolean {
    return this.#now() - cached.computedAt > TARGET_AGE_MS
  }
}
