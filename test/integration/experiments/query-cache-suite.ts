/**
 * The query API's cache end to end, once per event store: repeated queries are served from it with the `last_refresh` of their computation, new events
 * show only when a refresh is forced (as PostHog, until 24 hours pass), an experiment edit is a new query,
 * identical concurrent requests share one computation, the asynchronous modes answer 202 and are polled, and
 * are cancelled.
 */
import type { Test } from 'tap'
import { readUntil } from '../../helpers/wait.js'
import { experimentServer, type BatchEvent, type ExperimentServer } from './fixture.js'
import type { StoreSetup } from './query-suite.js'

const HOUR = 3_600_000
const PER_VARIANT = 10

export async function queryCacheSuite(t: Test, setup: StoreSetup): Promise<void> {
  const f: ExperimentServer = await experimentServer(setup.env())
  /** The query's status once it is no longer 202 (running). */
  const poll = (id: string) => readUntil(`query ${id} to finish`, () => f.api('GET', `${f.base}/query/${id}/`), (res) => res.status !== 202)
  t.teardown(() => f.close())
  const start = Date.now() - 2 * HOUR
  const created = await f.api('POST', f.experiments, { name: 'Cached', feature_flag_key: 'c-flag', start_date: new Date(start).toISOString() })
  t.equal(created.status, 201, created.text)
  const experimentId = created.body.id as number

  let people = 0
  /** A person exposed to the variant who then clicks `clicks` times. */
  const person = (variant: string, clicks: number): BatchEvent[] => {
    const id = `c-${variant}-${++people}`
    const at = start + HOUR + people * 1000
    const exposure: BatchEvent = { event: '$feature_flag_called', distinct_id: id, at, properties: { $feature_flag: 'c-flag', $feature_flag_response: variant } }
    return [exposure, ...Array.from({ length: clicks }, (_, c) => ({ event: 'clicked', distinct_id: id, at: at + 100 * (c + 1) }))]
  }
  const initial = [...Array.from({ length: PER_VARIANT }, () => person('control', 1)), ...Array.from({ length: PER_VARIANT }, () => person('test', 2))].flat()
  await f.send(initial)
  await f.waitFor('event=clicked', 3 * PER_VARIANT)

  const metric = (event = 'clicked') => ({ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event } })
  const request = (extra: object = {}, m: object = metric()) => ({ query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric: m }, ...extra })
  const post = (extra?: object, m?: object, path = `${f.base}/query/`) => f.api('POST', path, request(extra, m))
  const counted = async (outcome: string) => {
    const text = (await f.server.request('GET', '/metrics')).text
    return Number(new RegExp(`^skylark_query_cache_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0)
  }

  t.test('a repeated query is answered from the cache, with the last_refresh of its computation', async (t) => {
    const first = await post()
    t.equal(first.status, 200, first.text)
    t.match(first.body, { is_cached: false, baseline: { number_of_samples: PER_VARIANT, sum: PER_VARIANT }, query_status: null })
    t.match(first.body.cache_key, /^cache_[0-9a-f]{32}$/)
    const refreshed = Date.parse(first.body.last_refresh)
    t.equal(Date.parse(first.body.cache_target_age) - refreshed, 24 * HOUR, "PostHog's experiment runner: fresh for 24 hours")
    t.equal(Date.parse(first.body.next_allowed_client_refresh) - refreshed, 60_000)

    const again = await post()
    t.equal(again.status, 200)
    t.equal(again.body.is_cached, true)
    t.equal(again.body.last_refresh, first.body.last_refresh, 'the same computation')
    t.equal(again.body.cache_key, first.body.cache_key)
    t.same(again.body.variant_results, first.body.variant_results)

    // The environment path is the same project; tags, the polling id and key order are not part of the query.
    const reordered = { metric: { source: { event: 'clicked', kind: 'EventsNode' }, metric_type: 'mean', kind: 'ExperimentMetric' }, experiment_id: experimentId, kind: 'ExperimentQuery', tags: { scene: 'x' } }
    const env = await f.api('POST', `/api/environments/${f.server.boot.project_id}/query/`, { query: reordered, client_query_id: 'mine', refresh: 'force_cache' })
    t.match(env.body, { is_cached: true, last_refresh: first.body.last_refresh, cache_key: first.body.cache_key })
  })

  t.test('new events show once a refresh is forced; until then the cached answer, dated, stands', async (t) => {
    const before = await post()
    t.equal(before.body.is_cached, true)
    await f.send(person('control', 5))
    await f.waitFor('event=clicked', 3 * PER_VARIANT + 5)

    const stale = await post({ refresh: 'blocking' })
    t.match(stale.body, { is_cached: true, last_refresh: before.body.last_refresh, baseline: { number_of_samples: PER_VARIANT } }, 'the new event is not in the cached answer')
    const forced = await post({ refresh: 'force_blocking' })
    t.match(forced.body, { is_cached: false, baseline: { number_of_samples: PER_VARIANT + 1, sum: PER_VARIANT + 5 } }, 'force_blocking computes again and sees it')
    t.ok(Date.parse(forced.body.last_refresh) > Date.parse(before.body.last_refresh))
    t.equal(forced.body.cache_key, before.body.cache_key, 'same query, same key')
    const after = await post()
    t.match(after.body, { is_cached: true, last_refresh: forced.body.last_refresh, baseline: { number_of_samples: PER_VARIANT + 1 } }, 'the new answer replaced the old')
    t.match((await post({ refresh: true })).body, { is_cached: false }, 'refresh: true is force_blocking')
  })

  t.test("force_cache with nothing cached computes, as PostHog's query endpoint makes it blocking", async (t) => {
    const m = metric('$feature_flag_called')
    const first = await post({ refresh: 'force_cache' }, m)
    t.equal(first.status, 200, first.text)
    t.match(first.body, { is_cached: false, baseline: { number_of_samples: PER_VARIANT + 1 } })
    t.match((await post({ refresh: 'force_cache' }, m)).body, { is_cached: true, last_refresh: first.body.last_refresh })
  })

  t.test('an edit of the experiment is a new query', async (t) => {
    const before = await post()
    t.equal(before.body.is_cached, true)
    const patched = await f.api('PATCH', `${f.experiments}${experimentId}/`, { stats_config: { method: 'frequentist' } })
    t.equal(patched.status, 200, patched.text)
    const after = await post()
    t.match(after.body, { is_cached: false, variant_results: [{ method: 'frequentist' }] })
    t.not(after.body.cache_key, before.body.cache_key)
    const renamed = await f.api('PATCH', `${f.experiments}${experimentId}/`, { name: 'Cached, renamed' })
    t.equal(renamed.status, 200)
    t.equal((await post()).body.is_cached, false, 'any edit: the key holds the whole stored experiment')
  })

  t.test('identical requests at once share one computation', async (t) => {
    const m = metric('not-yet-asked')
    const computed = await counted('computed')
    const answers = await Promise.all(Array.from({ length: 4 }, () => post({}, m)))
    t.same(answers.map((a) => a.status), [200, 200, 200, 200])
    t.equal(new Set(answers.map((a) => a.body.last_refresh)).size, 1, 'one last_refresh')
    t.equal((await counted('computed')) - computed, 1, 'one computation for four requests')
  })

  t.test('asynchronous modes answer 202 and are polled at …/query/:query_id/', async (t) => {
    const m = metric('async-only')
    const miss = await post({ refresh: 'async', client_query_id: 'poll-me' }, m)
    t.equal(miss.status, 202, miss.text)
    t.match(miss.body, { cache_key: /^cache_/, query_status: { id: 'poll-me', complete: false, query_async: true, team_id: f.server.boot.project_id } })
    t.notOk('baseline' in miss.body, "a cache miss: PostHog's CacheMissResponse")

    const polled = await poll('poll-me')
    t.equal(polled.status, 200, polled.text)
    t.match(polled.body.query_status, { id: 'poll-me', complete: true, error: false, results: { cache_key: miss.body.cache_key, is_cached: false, baseline: { number_of_samples: PER_VARIANT + 1 } } })
    t.ok(Date.parse(polled.body.query_status.expiration_time) - Date.parse(polled.body.query_status.end_time) === 1_200_000, 'kept 20 minutes')
    const cached = await post({}, m)
    t.match(cached.body, { is_cached: true, last_refresh: polled.body.query_status.results.last_refresh }, 'the background answer is cached')
    t.match((await post({ refresh: 'async' }, m)).body, { is_cached: true, query_status: null }, 'fresh: async answers the cached one at once')

    const forced = await post({ refresh: 'force_async' }, m)
    t.equal(forced.status, 202)
    t.match(forced.body, { query_status: { id: miss.body.cache_key, complete: false } }, "without a client_query_id, the cache key's status")
    t.same(Object.keys(forced.body), ['query_status'], "PostHog's QueryStatusResponse")

    const refused = await post({ refresh: 'async', client_query_id: 'refused' }, { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'ExperimentDataWarehouseNode', table_name: 'x' } })
    t.equal(refused.status, 202)
    const failed = await poll('refused')
    t.equal(failed.status, 400, 'a refused query: 400 with its message, as PostHog')
    t.match(failed.body, { type: 'validation_error', code: 'invalid_input', detail: /data warehouse/i }, 'in the error envelope')
    t.match(failed.body.query_status, { complete: true, error: true, error_message: failed.body.detail, results: null })

    const unknown = await f.api('GET', `${f.base}/query/never-started/`)
    t.equal(unknown.status, 404)
    t.match(unknown.body, { type: 'invalid_request', code: 'not_found', detail: `Query never-started not found for team ${f.server.boot.project_id}` })
  })

  t.test("a query is cancelled at DELETE …/query/:query_id/, answered 200 with a message as PostHog's", async (t) => {
    const project = f.server.boot.project_id
    const unknown = await f.api('DELETE', `${f.base}/query/never-started/`)
    t.equal(unknown.status, 200, unknown.text)
    t.same(unknown.body, { message: `Query never-started not found for team ${project}; nothing cancelled` }, 'an unknown id: 200, as PostHog, nothing done')

    const done = await post({ refresh: 'async', client_query_id: 'cancel-done' }, metric('cancel-done'))
    t.equal(done.status, 202)
    t.equal((await poll('cancel-done')).status, 200)
    const late = await f.api('DELETE', `${f.base}/query/cancel-done/`)
    t.same([late.status, late.body], [200, { message: 'Query already complete' }])
    t.match((await f.api('GET', `${f.base}/query/cancel-done/`)).body, { query_status: { complete: true, error: false } }, 'a complete query is left as it is')

    // A computation here takes milliseconds: the DELETE that follows its 202 may come after its end, and then says so.
    // Five tries all lost that race once on an idle CI machine (ci183, SQLite); each try costs a few ms.
    let caught = false
    for (let attempt = 0; attempt < 25 && !caught; attempt++) {
      const id = `cancel-running-${attempt}`
      const m = metric(id)
      const abandoned = await counted('abandoned')
      t.equal((await post({ refresh: 'async', client_query_id: id }, m)).status, 202)
      const cancelled = await f.api('DELETE', `${f.base}/query/${id}/`)
      t.equal(cancelled.status, 200, cancelled.text)
      if (cancelled.body.message === 'Query already complete') continue
      caught = true
      t.same(cancelled.body, { message: 'Query cancelled' })
      const gone = await f.api('GET', `${f.base}/query/${id}/`)
      t.equal(gone.status, 404, 'a later poll: 404, as PostHog deletes the status')
      t.match(gone.body, { code: 'not_found', detail: `Query ${id} not found for team ${project}` })
      await readUntil('the cancelled scan to end', () => counted('abandoned'), (n) => n !== abandoned)
      t.equal((await counted('abandoned')) - abandoned, 1, 'the scan ran to its end, its answer wanted by no one')
      t.equal((await f.api('GET', `${f.base}/query/${id}/`)).status, 404, 'and brought no status back')
      t.match((await post({}, m)).body, { is_cached: false }, 'nor anything into the cache')
    }
    t.ok(caught, 'a running query was cancelled')

    // PostHog's web app cancels on the environment path, without the slash, dequeue_only (a queue skylark has not).
    const m = metric('cancel-shared')
    t.equal((await post({ refresh: 'async', client_query_id: 'cancel-shared' }, m)).status, 202)
    const waiting = post({}, m)
    const env = await f.api('DELETE', `/api/environments/${project}/query/cancel-shared?dequeue_only=true`)
    t.equal(env.status, 200, env.text)
    t.match(env.body, { message: /^Query (cancelled|already complete)$/ })
    const answered = await waiting
    t.equal(answered.status, 200, 'an identical request waiting on the computation is answered')
    t.match(answered.body, { baseline: { number_of_samples: PER_VARIANT + 1 } })
    // Cancelled while running, its answer was either the waiting request's or nobody's, never cached before it.
    if (env.body.message === 'Query cancelled') t.equal(answered.body.is_cached, false, 'computed for it, not served from a cache')
    t.match((await post({}, m)).body, { is_cached: true, last_refresh: answered.body.last_refresh }, 'and its answer cached')
  })

  t.test('refresh values PostHog does not take are refused in the error envelope', async (t) => {
    const res = await post({ refresh: 'sometimes' })
    t.equal(res.status, 400)
    t.match(res.body, { type: 'validation_error', code: 'invalid_input', attr: 'refresh', detail: /force_blocking/ })
  })
}
