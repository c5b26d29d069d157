/**
 * The export renderer against a real router: it follows a list's `next` pages as the caller, stops at the row and
 * size limits, takes `columns` as the header, writes PostHog's "no data" row for an empty list, and turns a list
 * that refuses or does not exist into the asset's exception instead of an error. A query's rows are written under
 * the same limits.
 */
import t from 'tap'
import { AppError } from '../../../src/common/errors.js'
import { renderExport, renderRows } from '../../../src/http/export-runner.js'
import { Router } from '../../../src/http/router.js'
import type { RequestContext } from '../../../src/http/types.js'

const caller = { authorization: 'Bearer phx_test', remoteAddress: '127.0.0.1', requestId: 'r1' }

/** A list of `total` things served in pages as the management lists are (limit, offset, absolute `next`). */
function listRouter(total: number) {
  const seen: RequestContext[] = []
  const router = new Router()
  router.add('get', '/api/projects/:project_id/things/', (ctx) => {
    seen.push(ctx)
    if (ctx.headers.authorization !== caller.authorization) throw new AppError('permission_denied', { detail: 'No scope.' })
    const q = new URLSearchParams(ctx.query)
    const limit = Number(q.get('limit') ?? 100)
    const offset = Number(q.get('offset') ?? 0)
    const results = Array.from({ length: Math.max(0, Math.min(limit, total - offset)) }, (_, i) => ({ id: offset + i, tags: ['a'], properties: { n: offset + i } }))
    const next = offset + limit < total ? `http://example.test/api/projects/${ctx.params.project_id}/things/?limit=${limit}&offset=${offset + limit}` : null
    return { status: 200, body: JSON.stringify({ count: total, next, previous: null, results }) }
  }, { maxBodyBytes: 0 })
  return { router, seen }
}

const lines = (outcome: { content: string } | { exception: string }) => ('content' in outcome ? outcome.content.trimEnd().split('\r\n') : [])

t.test('every page is read, 1,000 rows at a time, as the caller', async (t) => {
  const { router, seen } = listRouter(2_345)
  const outcome = await renderExport(router, { path: '/api/projects/7/things/?format=csv' }, caller)
  const [header, ...rows] = lines(outcome)
  t.equal(header, 'id,tags.0,properties.n')
  t.equal(rows.length, 2_345)
  t.equal(rows.at(-1), '2344,a,2344')
  t.same(seen.map((ctx) => new URLSearchParams(ctx.query).get('offset')), [null, '1000', '2000'])
  t.ok(seen.every((ctx) => new URLSearchParams(ctx.query).get('format') === null), 'the JSON page is read, never the CSV one')
})

t.test('the rows stop at the row limit and at the size limit', async (t) => {
  const { router } = listRouter(5_000)
  t.equal(lines(await renderExport(router, { path: '/api/projects/7/things/' }, caller, { rows: 1_500, chars: 1e9 })).length, 1_501)
  const capped = lines(await renderExport(router, { path: '/api/projects/7/things/' }, caller, { rows: 1e9, chars: 100 }))
  t.ok(capped.length > 2 && capped.length < 20, `${capped.length - 1} rows for 100 characters`)
})

t.test('columns are the header, in their order, and nothing else', async (t) => {
  const { router } = listRouter(2)
  t.same(lines(await renderExport(router, { path: '/api/projects/7/things/', columns: ['properties.n', 'missing', 'id'] }, caller)), ['properties.n,missing,id', '0,,0', '1,,1'])
})

t.test("an empty list is PostHog's no-data row", async (t) => {
  const { router } = listRouter(0)
  t.same(lines(await renderExport(router, { path: '/api/projects/7/things/', columns: ['id'] }, caller)), ['error', 'No data available or unable to format for export.'])
})

t.test('a list that refuses the key, no list at all, or an answer that is no list is the exception', async (t) => {
  const { router } = listRouter(3)
  t.same(await renderExport(router, { path: '/api/projects/7/things/' }, { ...caller, authorization: 'Bearer other' }), { exception: '/api/projects/7/things/ answered 403: No scope.' })
  t.same(await renderExport(router, { path: '/api/projects/7/nothing/' }, caller), { exception: 'No list is served at /api/projects/7/nothing/.' })
  router.add('get', '/api/projects/:project_id/things/:id/content/', () => ({ status: 200, headers: { 'Content-Type': 'text/csv' }, body: 'a,b\r\n' }), { maxBodyBytes: 0 })
  t.same(await renderExport(router, { path: '/api/projects/7/things/1/content/' }, caller), { exception: '/api/projects/7/things/1/content/ is not a list.' }, 'an answer that is not JSON')
})

t.test('a fault of the list is thrown, not taken for a refusal', async (t) => {
  const router = new Router()
  router.add('get', '/api/projects/:project_id/broken/', () => {
    throw new TypeError('a bug')
  }, { maxBodyBytes: 0 })
  await t.rejects(renderExport(router, { path: '/api/projects/7/broken/' }, caller), TypeError)
})

t.test("a query's rows are written in their columns' order, under the limits, and none is PostHog's no-data row", async (t) => {
  const rows = [{ event: 'a', n: 1, last: '2024-01-01 00:00:00+00:00' }, { event: 'b,c', n: null, last: null }]
  t.same(renderRows(rows, {}).content.split('\r\n'), ['event,n,last', 'a,1,2024-01-01 00:00:00+00:00', '"b,c",,', ''])
  t.same(renderRows(rows, { columns: ['n'] }).content.split('\r\n'), ['n', '1', '', ''])
  t.equal(renderRows(rows, {}, { rows: 1, chars: 1e9 }).content.split('\r\n').length, 3, 'the row limit')
  t.same(renderRows([], {}).content.split('\r\n'), ['error', 'No data available or unable to format for export.', ''])
})
