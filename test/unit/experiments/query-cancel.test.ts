/**
 * Cancelling an asynchronous query (PostHog's `cancel_query`) on the query cache, with the real runner over a
 * real SQLite store. Its reads cross to the read thread, so a computation started by `run` is still running
 * until the test yields to the event loop: each cancel below lands on a running computation for certain.
 */
import t, { type Test } from 'tap'
import { iso } from '../../../src/common/clock.js'
import type { CacheOutcome } from '../../../src/experiments/query/cached-runner.js'
import { cancelMessage } from '../../../src/experiments/query/query-status.js'
import { cachedQueries } from './cached-queries.js'
import { DAY, HOUR, T0, experimentWorld } from './fixture.js'

async function cancelWorld(t: Test) {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const e = w.create({ name: 'E', feature_flag_key: 'k', start_date: new Date(T0 - DAY).toISOString() })
  const outcomes: CacheOutcome[] = []
  const queries = cachedQueries(w, (outcome) => outcomes.push(outcome))
  const rows = ['control', 'test'].flatMap((variant, i) => [
    { distinctId: `p${i}`, event: '$feature_flag_called', at: T0 - HOUR, properties: { $feature_flag: 'k', $feature_flag_response: variant } },
    { distinctId: `p${i}`, event: 'clicked', at: T0 - HOUR + 1000 },
  ])
  await w.events(rows)
  const request = (refresh: string, id?: string, event = 'clicked') => ({
    refresh,
    ...(id === undefined ? {} : { client_query_id: id }),
    query: { kind: 'ExperimentQuery', experiment_id: e.id, metric: { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event } } },
  })
  const tally = (outcome: CacheOutcome) => outcomes.filter((o) => o === outcome).length
  const until = async (what: () => boolean) => {
    for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 10))
    return what()
  }
  return { w, queries, request, tally, until }
}

t.test('a running query cancelled: its status goes at once, and its answer, when the scan ends, is not cached', async (t) => {
  const { w, queries, request, tally, until } = await cancelWorld(t)
  const started = await queries.run(w.project, request('async', 'a'))
  t.match(started, { status: 202, body: { query_status: { id: 'a', complete: false } } })
  t.equal(queries.cancel(w.project, 'a'), 'cancelled')
  t.throws(() => queries.status(w.project, 'a'), { status: 404, code: 'not_found', detail: `Query a not found for team ${w.project.id}` }, 'a later poll: 404, as PostHog deletes the status')
  t.equal(queries.cancel(w.project, 'a'), 'unknown', 'a second cancel finds nothing')

  t.ok(await until(() => tally('abandoned') === 1), 'the scan still ran to its end, wanted by no one')
  t.throws(() => queries.status(w.project, 'a'), { status: 404, code: 'not_found' }, 'its end brings no status back')
  const next = await queries.run(w.project, request('blocking'))
  t.match(next, { status: 200, body: { is_cached: false, baseline: { number_of_samples: 1 } } }, 'the next request computes: nothing was cached')
  t.equal(tally('computed'), 2)
})

t.test('a request waiting on the computation keeps it: answered, and cached, though the status that started it was cancelled', async (t) => {
  const { w, queries, request, tally } = await cancelWorld(t)
  t.equal((await queries.run(w.project, request('async', 'b'))).status, 202)
  const waiting = queries.run(w.project, request('blocking'))
  t.equal(tally('joined'), 1, 'the blocking request joined the running computation')
  t.equal(queries.cancel(w.project, 'b'), 'cancelled')
  t.match(await waiting, { status: 200, body: { is_cached: false, last_refresh: iso(T0), baseline: { number_of_samples: 1 } } })
  t.match((await queries.run(w.project, request('blocking'))).body, { is_cached: true, last_refresh: iso(T0) }, 'its answer was cached')
  t.equal(tally('computed'), 1)
  t.equal(tally('abandoned'), 0)
})

t.test('cancelling one status leaves another status of the same computation to complete', async (t) => {
  const { w, queries, request, tally, until } = await cancelWorld(t)
  await queries.run(w.project, request('async', 'c1'))
  await queries.run(w.project, request('async', 'c2'))
  t.equal(tally('joined'), 1, 'one computation for both')
  t.equal(queries.cancel(w.project, 'c1'), 'cancelled')
  t.ok(await until(() => queries.status(w.project, 'c2').complete))
  t.match(queries.status(w.project, 'c2'), { complete: true, error: false, results: { baseline: { number_of_samples: 1 } } })
  t.throws(() => queries.status(w.project, 'c1'), { status: 404, code: 'not_found' })
  t.match((await queries.run(w.project, request('blocking'))).body, { is_cached: true }, 'cached for the status still wanting it')
})

t.test('an identical request after a cancel takes up the abandoned scan rather than queueing a second one', async (t) => {
  const { w, queries, request, tally, until } = await cancelWorld(t)
  await queries.run(w.project, request('async', 'd'))
  t.equal(queries.cancel(w.project, 'd'), 'cancelled')
  const again = await queries.run(w.project, request('async', 'd-again'))
  t.equal(again.status, 202)
  t.equal(tally('joined'), 1, 'joined the scan under way')
  t.ok(await until(() => queries.status(w.project, 'd-again').complete))
  t.match((await queries.run(w.project, request('blocking'))).body, { is_cached: true }, 'wanted again, so cached')
  t.equal(tally('computed'), 1)
  t.equal(tally('abandoned'), 0)
})

t.test('a complete query is not cancelled: its status stays, as PostHog answers "Query already complete"', async (t) => {
  const { w, queries, request, until } = await cancelWorld(t)
  await queries.run(w.project, request('async', 'e'))
  t.ok(await until(() => queries.status(w.project, 'e').complete))
  t.equal(queries.cancel(w.project, 'e'), 'complete')
  t.match(queries.status(w.project, 'e'), { complete: true, error: false, results: { baseline: { number_of_samples: 1 } } })

  const refused = { ...request('async', 'refused'), query: { ...request('async').query, metric: { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'ExperimentDataWarehouseNode', table_name: 'x' } } } }
  await queries.run(w.project, refused)
  t.ok(await until(() => queries.status(w.project, 'refused').complete))
  t.equal(queries.cancel(w.project, 'refused'), 'complete', 'a failed query is complete too')
  t.match(queries.status(w.project, 'refused'), { error: true })
})

t.test("a project cannot cancel another project's query", async (t) => {
  const { w, queries, request, until } = await cancelWorld(t)
  await queries.run(w.project, request('async', 'f'))
  t.equal(queries.cancel(w.other, 'f'), 'unknown')
  t.ok(await until(() => queries.status(w.project, 'f').complete))
  t.match(queries.status(w.project, 'f'), { error: false, results: { baseline: { number_of_samples: 1 } } })
})

t.test('each outcome has its message', async (t) => {
  t.equal(cancelMessage('complete', 7, 'x'), 'Query already complete', "PostHog's, verbatim")
  t.equal(cancelMessage('cancelled', 7, 'x'), 'Query cancelled')
  t.equal(cancelMessage('unknown', 7, 'x'), 'Query x not found for team 7; nothing cancelled')
})
