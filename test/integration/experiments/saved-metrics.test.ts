/**
 * Shared experiment metrics over HTTP against the real server, as PostHog's experiment_saved_metrics API
 * and its experiments' `saved_metrics_ids` answer: CRUD and its refusals in the contract's envelope, links
 * as primary and secondary metrics with the ordering lists following, unlinking, another project's metric
 * refused, duplicate copying the links, and the experiments list's `event` filter reaching linked queries.
 */
import t from 'tap'
import { experimentServer, type ExperimentServer } from './fixture.js'

const mean = (event: string) => ({ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event } })

t.test('shared experiment metrics over HTTP', async (t) => {
  let f: ExperimentServer
  t.before(async () => {
    f = await experimentServer()
  })
  t.teardown(() => f?.close())
  const metrics = () => `${f.base}/experiment_saved_metrics/`
  const create = async (body: Record<string, unknown>) => {
    const res = await f.api('POST', metrics(), body)
    if (res.status !== 201) throw new Error(`${res.status} ${res.text}`)
    return res.body
  }

  t.test('create, read, list, change and delete, as PostHog answers them', async (t) => {
    const created = await f.api('POST', metrics(), { name: 'Checkout rate', query: { ...mean('checkout'), uuid: 'from-an-inline-metric' }, tags: [' Revenue ', 'revenue', 'Core'] })
    t.equal(created.status, 201, created.text)
    t.match(created.body, {
      id: Number,
      name: 'Checkout rate',
      description: null,
      query: { ...mean('checkout'), uuid: String },
      created_by: { email: 'admin@skylark.local' },
      tags: ['core', 'revenue'],
      user_access_level: 'editor',
    })
    const uuid = created.body.query.uuid
    t.not(uuid, 'from-an-inline-metric', 'a new metric gets a uuid of its own, not the one sent')
    t.notOk('fingerprint' in created.body.query, 'the stored query has no fingerprint: each experiment has its own')
    const url = `${metrics()}${created.body.id}/`
    t.same((await f.api('GET', url)).body, created.body)

    await create({ name: 'average order', description: 'Revenue per order', query: mean('order') })
    await create({ name: 'Zebra', query: mean('checkout') })
    const names = async (query = '') => ((await f.api('GET', `${metrics()}${query}`)).body.results as Array<{ name: string }>).map((m) => m.name)
    t.same(await names(), ['average order', 'Checkout rate', 'Zebra'], 'listed by name, ignoring case')
    t.same(await names('?search=revenue'), ['average order', 'Checkout rate'], 'search reads the description and the tags too')
    t.same(await names('?search=order%20revenue'), ['average order'], 'every word must match')
    t.same(await names('?event=checkout'), ['Checkout rate', 'Zebra'], 'event finds metrics by what they measure')
    t.match((await f.api('GET', `${metrics()}?limit=1`)).body, { count: 3, results: [{ name: 'average order' }], next: /offset=1/ })

    const renamed = await f.api('PATCH', url, { name: 'Checkout conversion', description: 'Of visitors', query: { ...mean('purchase'), uuid } })
    t.equal(renamed.status, 200, renamed.text)
    t.match(renamed.body, { name: 'Checkout conversion', description: 'Of visitors', query: { source: { event: 'purchase' }, uuid }, tags: ['core', 'revenue'] })
    const withoutUuid = await f.api('PATCH', url, { query: mean('paid') })
    t.equal(withoutUuid.body.query.uuid, uuid, 'an edit keeps the uuid')
    const otherUuid = await f.api('PATCH', url, { query: { ...mean('paid'), uuid: 'another' } })
    t.match(otherUuid, { status: 400, body: { type: 'validation_error', code: 'invalid', attr: null, detail: 'Saved metric UUID cannot be changed' } })

    t.equal((await f.api('DELETE', url)).status, 204)
    t.equal((await f.api('GET', url)).status, 404)
    t.equal((await f.api('PATCH', url, { name: 'x' })).status, 404)
  })

  t.test("PostHog's refusals arrive in the contract's envelope", async (t) => {
    await create({ name: 'Taken', query: mean('a') })
    const cases: Array<[unknown, Record<string, unknown>]> = [
      [{ query: mean('a') }, { code: 'required', attr: 'name', detail: 'This field is required.' }],
      [{ name: 'x' }, { code: 'required', attr: 'query', detail: 'This field is required.' }],
      [{ name: null, query: mean('a') }, { code: 'null', attr: 'name', detail: 'This field may not be null.' }],
      [{ name: 'x', query: null }, { code: 'null', attr: 'query' }],
      [{ name: 'x'.repeat(401), query: mean('a') }, { code: 'max_length', attr: 'name' }],
      [{ name: 'tAKEN', query: mean('a') }, { code: 'invalid', attr: 'name', detail: 'A shared metric with this name already exists.' }],
      [{ name: 'x', query: {} }, { attr: null, detail: 'Query is required to create a saved metric' }],
      [{ name: 'x', query: { kind: 'ExperimentTrendsQuery' } }, { attr: null, detail: /^Invalid metric: legacy metric kind 'ExperimentTrendsQuery' is no longer supported/ }],
      [{ name: 'x', query: { kind: 'TrendsQuery' } }, { attr: null, detail: "Invalid metric: metric kind must be 'ExperimentMetric'" }],
      [{ name: 'x', query: { kind: 'ExperimentMetric', metric_type: 'ratio', numerator: { kind: 'EventsNode', event: 'a' } } }, { detail: /^Invalid metric: \[\{'loc': \('ExperimentRatioMetric', 'denominator'\), 'type': 'missing'/ }],
      [{ name: 'x', query: { ...mean('a'), source: { kind: 'ActionsNode', id: 4 } } }, { detail: /^Action\(s\) with ID 4 not found or deleted\./ }],
      [{ name: 'x', query: mean('a'), tags: 'a' }, { code: 'not_a_list', attr: 'tags' }],
      [[1], { attr: null, detail: 'Invalid data. Expected a dictionary, but got list.' }],
    ]
    for (const [body, error] of cases) {
      t.match(await f.api('POST', metrics(), body), { status: 400, body: { type: 'validation_error', ...error } }, JSON.stringify(body).slice(0, 80))
    }
    const unknownEvent = await f.api('POST', metrics(), { name: 'Not ingested yet', query: mean('never-seen') })
    t.equal(unknownEvent.status, 201, "PostHog's saved-metric service does not check event names against what was ingested")
  })

  t.test('experiments link shared metrics as primary and secondary ones, in their orderings', async (t) => {
    const primary = await create({ name: 'Primary shared', query: mean('signup') })
    const secondary = await create({ name: 'Secondary shared', query: mean('upgrade') })
    const extra = await create({ name: 'Extra shared', query: mean('churn') })
    const inline = { ...mean('$pageview'), uuid: primary.query.uuid }
    const res = await f.api('POST', f.experiments, {
      name: 'Linked',
      feature_flag_key: 'linked',
      metrics: [inline],
      allow_unknown_events: true,
      saved_metrics_ids: [{ id: primary.id, metadata: { type: 'primary' } }, { id: String(secondary.id), metadata: { type: 'secondary' } }],
    })
    t.equal(res.status, 201, res.text)
    const e = res.body
    const inlineUuid = e.metrics[0].uuid
    t.not(inlineUuid, primary.query.uuid, "an inline metric may not take a linked metric's uuid")
    t.same(e.primary_metrics_ordered_uuids, [inlineUuid, primary.query.uuid])
    t.same(e.secondary_metrics_ordered_uuids, [secondary.query.uuid])
    t.match(e.saved_metrics, [
      { id: Number, experiment: e.id, saved_metric: primary.id, metadata: { type: 'primary' }, created_at: String, name: 'Primary shared', query: { ...mean('signup'), uuid: primary.query.uuid, fingerprint: /^[0-9a-f]{64}$/ } },
      { saved_metric: secondary.id, metadata: { type: 'secondary' }, name: 'Secondary shared' },
    ])
    t.same(Object.keys(e.saved_metrics[0]), ['id', 'experiment', 'saved_metric', 'metadata', 'created_at', 'query', 'name'])
    t.same((await f.api('GET', `${f.experiments}${e.id}/`)).body.saved_metrics, e.saved_metrics, 'GET answers the links')
    const url = `${f.experiments}${e.id}/`

    // The fingerprint follows the experiment's settings, not the metric's.
    const frequentist = await f.api('PATCH', url, { stats_config: { method: 'frequentist' } })
    t.not(frequentist.body.saved_metrics[0].query.fingerprint, e.saved_metrics[0].query.fingerprint)

    const swapped = await f.api('PATCH', url, { saved_metrics_ids: [{ id: secondary.id, metadata: { type: 'secondary' } }, { id: extra.id, metadata: { type: 'primary' } }] })
    t.equal(swapped.status, 200, swapped.text)
    t.same(swapped.body.primary_metrics_ordered_uuids, [inlineUuid, extra.query.uuid], 'an unlinked metric leaves the ordering, a new one joins it')
    t.same(swapped.body.secondary_metrics_ordered_uuids, [secondary.query.uuid])
    t.same(swapped.body.saved_metrics.map((l: { saved_metric: number }) => l.saved_metric), [secondary.id, extra.id])
    t.equal(swapped.body.saved_metrics[0].id, frequentist.body.saved_metrics[1].id, 'a link kept is the same link')

    const dropped = await f.api('PATCH', url, { primary_metrics_ordered_uuids: [inlineUuid] })
    t.match(dropped, { status: 400, body: { attr: null, detail: `primary_metrics_ordered_uuids is missing UUIDs: ['${extra.query.uuid}']. This is likely a frontend bug - please refresh and try again.` } })

    const renamed = await f.api('PATCH', `${metrics()}${extra.id}/`, { name: 'Extra renamed', query: { ...extra.query, source: { kind: 'EventsNode', event: 'cancel' } } })
    t.equal(renamed.status, 200, renamed.text)
    t.match((await f.api('GET', url)).body.saved_metrics[1], { name: 'Extra renamed', query: { source: { event: 'cancel' }, uuid: extra.query.uuid } }, 'experiments read the metric as it is now')

    const unlinked = await f.api('PATCH', url, { saved_metrics_ids: null })
    t.equal(unlinked.status, 200, unlinked.text)
    t.same(unlinked.body.saved_metrics, [], 'null unlinks every shared metric')
    t.same(unlinked.body.primary_metrics_ordered_uuids, [inlineUuid])
    t.same(unlinked.body.secondary_metrics_ordered_uuids, [])
  })

  t.test("another project's metric, a repeated id and a link without metadata are refused", async (t) => {
    const other = f.m.accounts.createProject(f.server.boot.organization_id, 'Other project')
    const theirs = await f.api('POST', `/api/projects/${other.id}/experiment_saved_metrics/`, { name: 'Theirs', query: mean('x') })
    t.equal(theirs.status, 201, theirs.text)
    t.equal((await f.api('GET', `${metrics()}${theirs.body.id}/`)).status, 404, "another project's metric is not found here")
    const ours = await create({ name: 'Ours', query: mean('x') })
    const refusals: Array<[unknown, Record<string, unknown>]> = [
      [[{ id: theirs.body.id, metadata: { type: 'primary' } }], { code: 'invalid', attr: 'saved_metrics_ids', detail: 'Saved metric does not exist or does not belong to this project' }],
      [[{ id: ours.id, metadata: { type: 'primary' } }, { id: ours.id, metadata: { type: 'secondary' } }], { attr: 'saved_metrics_ids', detail: 'Saved metric does not exist or does not belong to this project' }],
      [[{ id: 'abc' }], { attr: 'saved_metrics_ids', detail: 'Saved metric does not exist or does not belong to this project' }],
      [[{ id: ours.id, metadata: {} }], { attr: 'saved_metrics_ids', detail: 'Metadata must have a type key' }],
      [[{ id: ours.id }], { code: 'null', attr: 'metadata', detail: 'This field may not be null.' }],
    ]
    for (const [ids, error] of refusals) {
      const key = `refused-${Math.random().toString(36).slice(2)}`
      const res = await f.api('POST', f.experiments, { name: 'Refused', feature_flag_key: key, saved_metrics_ids: ids })
      t.match(res, { status: 400, body: { type: 'validation_error', ...error } }, JSON.stringify(ids))
      t.equal(f.m.featureFlags.repository.liveByKey(f.server.boot.project_id, key), null, 'nothing was created')
    }
    const e = await f.api('POST', f.experiments, { name: 'Later', feature_flag_key: 'later' })
    const patched = await f.api('PATCH', `${f.experiments}${e.body.id}/`, { saved_metrics_ids: [{ id: theirs.body.id, metadata: { type: 'primary' } }] })
    t.match(patched, { status: 400, body: { attr: 'saved_metrics_ids' } })
    const noMetadata = await f.api('PATCH', `${f.experiments}${e.body.id}/`, { saved_metrics_ids: [{ id: ours.id }] })
    t.equal(noMetadata.status, 200, 'an update takes a link without metadata, as `{}` (a primary metric)')
    t.match(noMetadata.body, { saved_metrics: [{ metadata: {} }], primary_metrics_ordered_uuids: [ours.query.uuid] })
  })

  t.test('duplicate copies the links; deleting a metric unlinks it; the event filter reaches linked queries', async (t) => {
    const shared = await create({ name: 'Activation', query: mean('activated') })
    const source = await f.api('POST', f.experiments, { name: 'Source', feature_flag_key: 'source', saved_metrics_ids: [{ id: shared.id, metadata: { type: 'secondary' } }] })
    t.equal(source.status, 201, source.text)
    const copy = await f.api('POST', `${f.experiments}${source.body.id}/duplicate/`, { feature_flag_key: 'source-copy' })
    t.equal(copy.status, 201, copy.text)
    t.match(copy.body, { name: 'Source (Copy)', saved_metrics: [{ saved_metric: shared.id, metadata: { type: 'secondary' }, experiment: copy.body.id }], secondary_metrics_ordered_uuids: [shared.query.uuid] })
    t.not(copy.body.saved_metrics[0].id, source.body.saved_metrics[0].id, 'the copy has links of its own')

    const named = async (event: string) => ((await f.api('GET', `${f.experiments}?event=${event}`)).body.results as Array<{ name: string }>).map((e) => e.name).sort()
    t.same(await named('activated'), ['Source', 'Source (Copy)'], 'experiments are found through their shared metrics')
    t.same(await named('activ'), [], 'the whole name, not a part')

    t.equal((await f.api('DELETE', `${metrics()}${shared.id}/`)).status, 204)
    const after = await f.api('GET', `${f.experiments}${source.body.id}/`)
    t.same(after.body.saved_metrics, [], 'the link went with the metric')
    t.same(after.body.secondary_metrics_ordered_uuids, [shared.query.uuid], "the ordering keeps the uuid, as PostHog's does")
    t.same(await named('activated'), [])
    const patched = await f.api('PATCH', `${f.experiments}${source.body.id}/`, { description: 'still editable' })
    t.equal(patched.status, 200, patched.text)
  })

  t.test("the experiments list's event filter reads inline and secondary metrics, with the list's other filters and pages", async (t) => {
    for (const [name, fields] of [
      ['Inline', { metrics: [mean('signup')] }],
      ['Secondary', { metrics_secondary: [{ ...mean('other'), source: { kind: 'EventsNode', event: 'signup' } }] }],
      ['Elsewhere', { metrics: [mean('signup-started')] }],
    ] as const) {
      const made = await f.api('POST', f.experiments, { name, feature_flag_key: name.toLowerCase(), allow_unknown_events: true, ...fields })
      t.equal(made.status, 201, made.text)
    }
    const page = async (query: string) => (await f.api('GET', `${f.experiments}?event=signup${query}`)).body as { count: number; results: Array<{ name: string }> }
    t.same((await page('&order=name')).results.map((e) => e.name), ['Inline', 'Secondary'])
    t.match(await page('&order=name&limit=1&offset=1'), { count: 2, results: [{ name: 'Secondary' }] }, 'counted and paged after the filter')
    t.same((await page('&search=Inl')).results.map((e) => e.name), ['Inline'], 'with the other filters')
  })

  t.test('the routes need experiment_saved_metric scopes', async (t) => {
    const reader = f.keyWith(['experiment_saved_metric:read'])
    const experimentsOnly = f.keyWith(['experiment:write'])
    t.equal((await f.api('GET', metrics(), undefined, reader.key)).status, 200)
    t.match(await f.api('POST', metrics(), { name: 'n', query: mean('a') }, reader.key), { status: 403, body: { code: 'permission_denied' } })
    t.match(await f.api('GET', metrics(), undefined, experimentsOnly.key), { status: 403 })
  })
})
