import t from 'tap'
import { iso } from '../../../src/common/clock.js'
import { ByteLru } from '../../../src/experiments/query/byte-lru.js'
import { queryRequestOptions } from '../../../src/experiments/query/refresh.js'
import { cachedQueries } from './cached-queries.js'
import { DAY, HOUR, T0, experimentWorld } from './fixture.js'

const keys = (lru: ByteLru<number>, candidates: string[]) => candidates.filter((k) => lru.get(k) !== undefined)

t.test('the answer cache keeps at most its number of entries, dropping the least recently used', async (t) => {
  const lru = new ByteLru<number>(3, 1_000_000)
  for (const [i, k] of ['a', 'b', 'c'].entries()) lru.set(k, i, 10)
  t.equal(lru.get('a'), 0, 'reading a makes it the most recently used')
  lru.set('d', 3, 10)
  t.equal(lru.size, 3)
  t.equal(lru.get('b'), undefined, 'b, least recently used, went')
  t.same(keys(lru, ['a', 'c', 'd']), ['a', 'c', 'd'])
  t.equal(lru.bytes, 30)
})

t.test('the answer cache keeps at most its bytes, dropping as many old entries as a large one needs', async (t) => {
  const lru = new ByteLru<number>(100, 100)
  for (const [i, k] of ['a', 'b', 'c', 'd'].entries()) lru.set(k, i, 25)
  t.equal(lru.bytes, 100)
  t.ok(lru.set('big', 9, 70), 'a 70-byte answer is kept')
  t.same(keys(lru, ['a', 'b', 'c', 'd', 'big']), ['d', 'big'], 'the three oldest went for it')
  t.equal(lru.bytes, 95)
  t.notOk(lru.set('huge', 10, 101), 'an answer larger than the whole budget is not kept')
  t.equal(lru.get('huge'), undefined)
  t.equal(lru.bytes, 95, 'and evicts nothing')
})

t.test('storing a key again replaces its value and its size', async (t) => {
  const lru = new ByteLru<number>(10, 100)
  lru.set('a', 1, 60)
  lru.set('a', 2, 30)
  t.equal(lru.get('a'), 2)
  t.equal(lru.size, 1)
  t.equal(lru.bytes, 30)
  lru.delete('a')
  t.same([lru.size, lru.bytes], [0, 0])
})

t.test('a cache of no entries keeps nothing', async (t) => {
  const lru = new ByteLru<number>(0, 100)
  t.notOk(lru.set('a', 1, 1))
  t.equal(lru.get('a'), undefined)
})

t.test("refresh is read as PostHog's query endpoint reads it", async (t) => {
  const mode = (request: object) => queryRequestOptions({ query: {}, ...request }).mode
  t.equal(mode({}), 'blocking', 'absent: blocking')
  t.equal(mode({ refresh: false }), 'blocking')
  t.equal(mode({ refresh: 'force_cache' }), 'blocking', 'the endpoint computes when the cache has nothing fresh, even for force_cache')
  t.equal(mode({ refresh: true }), 'force_blocking')
  for (const m of ['blocking', 'force_blocking', 'async', 'lazy_async', 'force_async', 'async_except_on_cache_miss']) t.equal(mode({ refresh: m }), m)
  t.equal(mode({ refresh: 'blocking', async: true }), 'async', 'the legacy async flag')
  t.throws(() => mode({ refresh: 'sometimes' }), { status: 400, code: 'invalid_input', attr: 'refresh' })
  t.throws(() => mode({ refresh: 1 }), { status: 400, code: 'invalid_input', attr: 'refresh' })
  t.same(queryRequestOptions({ client_query_id: 'abc' }).clientQueryId, 'abc')
  t.throws(() => queryRequestOptions({ client_query_id: 'x'.repeat(201) }), { status: 400, code: 'invalid_input', attr: 'client_query_id' })
  t.throws(() => queryRequestOptions({ client_query_id: 5 }), { status: 400, code: 'invalid_input', attr: 'client_query_id' })
})

t.test('an answer is served until it is 24 hours old, then computed again (asynchronous modes: in the background)', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const e = w.create({ name: 'E', feature_flag_key: 'k', start_date: new Date(T0 - DAY).toISOString() })
  const queries = cachedQueries(w)
  let people = 0
  const exposed = (variant: string, at: number) => {
    const id = `p${++people}`
    return w.events([
      { distinctId: id, event: '$feature_flag_called', at, properties: { $feature_flag: 'k', $feature_flag_response: variant } },
      { distinctId: id, event: 'clicked', at: at + 1000 },
    ])
  }
  for (let i = 0; i < 5; i++) {
    await exposed('control', T0 - 20 * HOUR + i)
    await exposed('test', T0 - 20 * HOUR + i)
  }
  const body = (refresh: string) => ({ refresh, query: { kind: 'ExperimentQuery', experiment_id: e.id, metric: { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'clicked' } } } })
  const samples = (answer: any) => answer.baseline.number_of_samples

  const first = await queries.run(w.project, body('blocking'))
  t.match(first, { status: 200, body: { is_cached: false, last_refresh: iso(T0) } })
  t.equal(samples(first.body), 5)
  await exposed('control', T0 + HOUR)
  w.advance(24 * HOUR)
  const day = await queries.run(w.project, body('blocking'))
  t.match(day.body, { is_cached: true, last_refresh: iso(T0) }, 'at 24 hours old it is still fresh')
  t.equal(samples(day.body), 5, 'without the new exposure')

  w.advance(1)
  const stale = await queries.run(w.project, body('async'))
  t.equal(stale.status, 202, 'stale, async: the old answer now')
  t.match(stale.body, { is_cached: true, last_refresh: iso(T0), query_status: { complete: false } })
  const id = (stale.body.query_status as { id: string }).id
  t.equal(id, stale.body.cache_key, "without a client_query_id the status is the cache key's, as PostHog's")
  t.match(queries.status(w.project, id), { complete: false, expiration_time: iso(T0 + DAY + 1 + 20 * 60_000) }, 'a running status already says when it expires')
  for (let i = 0; i < 100 && !queries.status(w.project, id).complete; i++) await new Promise((r) => setTimeout(r, 10))
  t.match(queries.status(w.project, id), { complete: true, error: false, results: { is_cached: false, last_refresh: iso(T0 + DAY + 1) } })
  const renewed = await queries.run(w.project, body('blocking'))
  t.match(renewed.body, { is_cached: true, last_refresh: iso(T0 + DAY + 1) }, 'the background answer replaced it')
  t.equal(samples(renewed.body), 6)
  t.throws(() => queries.status(w.other, id), { status: 404, code: 'not_found' }, "another project's status is unknown")
  w.advance(20 * 60_000 - 1)
  t.equal(queries.status(w.project, id).complete, true, 'a status is kept 20 minutes after its end')
  w.advance(1)
  t.throws(() => queries.status(w.project, id), { status: 404, code: 'not_found' }, 'and then goes')

  w.advance(DAY)
  const blocking = await queries.run(w.project, body('blocking'))
  t.match(blocking, { status: 200, body: { is_cached: false, last_refresh: iso(T0 + 2 * DAY + 20 * 60_000 + 1) } }, 'stale, blocking: computed again')
})

t.test('asynchronous requests of one query share its status: a miss answers the status kept, a fresh answer names one running', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const e = w.create({ name: 'E', feature_flag_key: 'k', start_date: new Date(T0 - DAY).toISOString() })
  const counts: string[] = []
  const queries = cachedQueries(w, (outcome) => counts.push(outcome))
  await w.events([{ distinctId: 'p1', event: '$feature_flag_called', at: T0 - HOUR, properties: { $feature_flag: 'k', $feature_flag_response: 'control' } }])
  const body = (refresh: string, extra: object = {}) => ({ refresh, ...extra, query: { kind: 'ExperimentQuery', experiment_id: e.id, metric: { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'clicked' } } } })
  const status = (answer: { body: Record<string, any> }) => answer.body.query_status

  // Each call reaches its answer without awaiting anything, so requests made together meet the same computation.
  const [first, second, mine] = await Promise.all([queries.run(w.project, body('async')), queries.run(w.project, body('lazy_async')), queries.run(w.project, body('async', { client_query_id: 'mine' }))])
  t.same([first.status, second.status, mine.status], [202, 202, 202])
  t.equal(status(first).id, first.body.cache_key)
  t.equal(status(second).id, status(first).id, 'the second miss answers the first status')
  t.equal(status(mine).id, 'mine', 'a client_query_id names a status of its own')
  t.same(counts.filter((c) => c === 'computed' || c === 'joined'), ['computed', 'joined'], 'the second miss starts nothing; the third joins the computation')
  const key = first.body.cache_key as string
  const settled = async (id: string) => {
    for (let i = 0; i < 100 && !queries.status(w.project, id).complete; i++) await new Promise((r) => setTimeout(r, 10))
  }
  await settled(key)
  t.equal(status(await queries.run(w.project, body('blocking'))), null, 'a fresh answer with no computation running names no status')

  const [forced, hit] = await Promise.all([queries.run(w.project, body('force_async')), queries.run(w.project, body('blocking'))])
  t.match(status(forced), { id: first.body.cache_key, complete: false }, 'force_async starts a status of that id again')
  t.match(hit, { status: 200, body: { is_cached: true, query_status: { id: first.body.cache_key, complete: false } } }, 'a fresh answer names the computation of its id while it runs')
  await settled(key)
  t.equal(status(await queries.run(w.project, body('blocking'))), null, 'and nothing once it is complete')
})
