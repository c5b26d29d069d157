/**
 * The definitions API against the running server: events captured through /batch/ are read back as PostHog's
 * event_definitions and property_definitions answer them, filtered, and again after a restart. On the SQLite
 * event store only: definitions are written by the consumer into persons.db in its persons transaction,
 * before the rows reach either store, so the store makes no difference to them.
 */
import t from 'tap'
import { foreignProject } from '../../helpers/seed.js'
import { startServer, type TestServer } from '../../helpers/server.js'
import { readUntil as until } from '../../helpers/wait.js'

const BATCH = [
  { event: '$pageview', properties: { distinct_id: 'u1', $current_url: 'https://a.example/x', $screen_width: 1440, utm_source: 42, $set: { email: 'u1@example.com' } } },
  { event: '$pageview', properties: { distinct_id: 'u2', $current_url: 'https://a.example/y', '$feature/beta': true, $set_once: { first_plan: 'free' } } },
  { event: 'purchase', properties: { distinct_id: 'u1', amount: 9.99, currency: 'EUR', paid: true, paid_at: '2024-05-01T10:00:00Z', note: null } },
  { event: 'purchase_refunded', properties: { distinct_id: 'u1', amount: '9.99', reason: 'late' } },
  { event: '$groupidentify', properties: { distinct_id: 'u1', $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme', seats: 12 } } },
  { event: 'signed_up', properties: { distinct_id: 'u3', $set: { plan: 'pro', age: 30 } } },
]

t.test('definitions API', async (t) => {
  let server: TestServer = await startServer()
  const key = server.boot.personal_api_key!
  const dataDir = server.dataDir
  t.teardown(async () => {
    await server.stop()
    server.cleanup()
  })
  const base = `/api/projects/${server.boot.project_id}`
  const get = async (path: string) => server.api('GET', `${base}${path}`, undefined, key)
  const names = async (path: string) => (await get(path)).body.results.map((d: { name: string }) => d.name)
  const capture = async (batch: unknown[]) => {
    const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
    if (res.status !== 200) throw new Error(`batch answered ${res.status}`)
  }

  await capture(BATCH)
  await until('the definitions recorded', () => get('/event_definitions/'), (res) => res.body.count === 5)

  t.test('event definitions: every name once, in PostHog\'s shape', async (t) => {
    const res = await get('/event_definitions/')
    t.equal(res.status, 200)
    t.same(res.body.results.map((d: any) => d.name), ['$groupidentify', '$pageview', 'purchase', 'purchase_refunded', 'signed_up'], 'all seen today: by name')
    t.same(Object.keys(res.body).sort(), ['count', 'next', 'previous', 'results'])
    const pageview = res.body.results[1]
    t.match(pageview, { id: /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, name: '$pageview' })
    t.same(Object.keys(pageview).sort(), [
      'created_at', 'enforcement_mode', 'id', 'is_action', 'last_seen_at', 'name', 'post_to_slack', 'primary_property', 'query_usage_30_day', 'tags', 'volume_30_day',
    ])
    t.match(pageview, { tags: [], is_action: false, volume_30_day: null, query_usage_30_day: null, enforcement_mode: 'allow', primary_property: null })
    t.ok(Math.abs(Date.parse(pageview.last_seen_at) - Date.now()) < 60_000, 'last seen now')
    t.equal(pageview.created_at, pageview.last_seen_at)
    t.same((await get(`/event_definitions/${pageview.id}/`)).body, pageview, 'retrieve answers the same object')
  })

  t.test('event definitions filter as PostHog does', async (t) => {
    t.same(await names('/event_definitions/?search=purchase'), ['purchase', 'purchase_refunded'], 'shortest first')
    t.same(await names('/event_definitions/?search=PURCH%20ref'), ['purchase_refunded'], 'every term, in any case')
    t.same(await names('/event_definitions/?event_type=event_custom'), ['purchase', 'purchase_refunded', 'signed_up'])
    t.same(await names('/event_definitions/?event_type=event_posthog'), ['$groupidentify', '$pageview'])
    t.same(await names('/event_definitions/?names=purchase,signed_up&names=nope'), ['purchase', 'signed_up'])
    t.same(await names(`/event_definitions/?excluded_properties=${encodeURIComponent('["$pageview","$groupidentify"]')}`), ['purchase', 'purchase_refunded', 'signed_up'])
    t.same(await names('/event_definitions/?ordering=-name'), ['signed_up', 'purchase_refunded', 'purchase', '$pageview', '$groupidentify'])
    t.same(await names('/event_definitions/?ordering=bogus,-name'), ['signed_up', 'purchase_refunded', 'purchase', '$pageview', '$groupidentify'], 'unknown fields dropped')
    t.same(await names('/event_definitions/?exclude_stale=true&event_type=event_posthog'), ['$groupidentify', '$pageview'])
    const first = await get('/event_definitions/?limit=2')
    t.same(first.body.results.map((d: any) => d.name), ['$groupidentify', '$pageview'])
    t.match(first.body.next, /\/event_definitions\/\?limit=2&offset=2$/)
    const second = await get(`/event_definitions/?limit=2&offset=2`)
    t.same(second.body.results.map((d: any) => d.name), ['purchase', 'purchase_refunded'])
  })

  t.test('event property types are inferred from their first value', async (t) => {
    const res = await get('/property_definitions/?limit=100')
    t.equal(res.status, 200)
    const byName = Object.fromEntries(res.body.results.map((d: any) => [d.name, d]))
    t.match(byName.amount, { property_type: 'Numeric', is_numerical: true, tags: [], is_seen_on_filtered_events: null })
    t.same(Object.keys(byName.amount).sort(), ['id', 'is_numerical', 'is_seen_on_filtered_events', 'name', 'property_type', 'tags'])
    t.equal(byName.paid.property_type, 'Boolean')
    t.equal(byName.paid_at.property_type, 'DateTime')
    t.equal(byName.currency.property_type, 'String')
    t.equal(byName.utm_source.property_type, 'String', 'utm_* is text whatever its first value')
    t.equal(byName['$feature/beta'].property_type, 'String')
    t.equal(byName.note.property_type, null, 'only null seen yet')
    t.equal(byName.$screen_width.property_type, 'Numeric')
    for (const hidden of ['distinct_id', '$set', '$set_once', 'name', 'seats', 'email']) t.notOk(byName[hidden], `${hidden} is no listed event property`)
    t.same((await get(`/property_definitions/${byName.amount.id}/`)).body, byName.amount)
  })

  t.test('property definitions filter as PostHog does', async (t) => {
    t.same(await names('/property_definitions/?is_numerical=true'), ['$screen_width', 'amount'])
    t.same(await names('/property_definitions/?properties=amount,paid,nope'), ['amount', 'paid'])
    t.same(await names('/property_definitions/?search=paid'), ['paid', 'paid_at'])
    t.same(await names('/property_definitions/?is_feature_flag=true'), ['$feature/beta'])
    t.notOk((await names('/property_definitions/?is_feature_flag=false')).includes('$feature/beta'))
    // As in PostHog, this replaces the list always left out, so the distinct_id /batch/ events carry shows.
    t.same(await names('/property_definitions/?exclude_core_properties=true'), ['amount', 'distinct_id', 'note', 'paid', 'paid_at', 'reason'], 'no $ keys, no currency or utm_source')
    t.same(await names(`/property_definitions/?exclude_core_properties=1&excluded_properties=${encodeURIComponent('["note","reason","distinct_id"]')}`), ['amount', 'paid', 'paid_at'])

    const seen = await get(`/property_definitions/?search=a&event_names=${encodeURIComponent('["purchase"]')}`)
    t.same(
      seen.body.results.map((d: any) => [d.name, d.is_seen_on_filtered_events]),
      [['amount', true], ['paid', true], ['paid_at', true], ['$feature/beta', false], ['reason', false]],
      'those seen on the events first',
    )
    t.same(await names(`/property_definitions/?event_names=${encodeURIComponent('["purchase_refunded"]')}&filter_by_event_names=true`), ['$ip', 'amount', 'reason'])
    t.notOk(
      (await names(`/property_definitions/?event_names=${encodeURIComponent('["$pageview"]')}&filter_by_event_names=true`)).includes('$feature/beta'),
      'flag keys are not paired with events',
    )
  })

  t.test('person and group properties', async (t) => {
    const person = await get('/property_definitions/?type=person&limit=200')
    const byName = Object.fromEntries(person.body.results.map((d: any) => [d.name, d.property_type]))
    t.match(byName, { email: 'String', first_plan: 'String', plan: 'String', age: 'Numeric', $initial_current_url: 'String', $current_url: 'String' })
    t.same(await names('/property_definitions/?type=group&group_type_index=0'), ['name', 'seats'])
    t.same(await names('/property_definitions/?type=group&group_type_index=1'), [])
    t.same(await names('/property_definitions/?type=session'), [])
  })

  t.test('bad requests are refused in the contract envelope', async (t) => {
    const refused = async (path: string, detail: RegExp | string, attr: string | null, code = 'invalid') =>
      t.match(await get(path), { status: 400, body: { type: 'validation_error', code, detail, attr } }, path)
    await refused('/property_definitions/?type=group', '`group_type_index` must be set for `group` type', null)
    await refused('/property_definitions/?group_type_index=0', '`group_type_index` can only set for `group` type', null)
    await refused('/property_definitions/?type=group&group_type_index=5', 'Invalid value for `group_type_index`', null)
    await refused('/property_definitions/?type=group&group_type_index=x', 'A valid integer is required.', 'group_type_index')
    await refused('/property_definitions/?type=person&event_names=%5B%22a%22%5D', '`event_names` can only be set for `event` type', null)
    await refused('/property_definitions/?type=actions', '"actions" is not a valid choice.', 'type', 'invalid_choice')
    await refused('/property_definitions/?is_numerical=maybe', 'Must be a valid boolean.', 'is_numerical')
    await refused('/property_definitions/?event_names=not-json', /JSON-encoded list/, 'event_names')
    await refused('/event_definitions/?event_type=bogus', /Not a valid event type/, 'event_type')
    await refused('/event_definitions/?excluded_properties=%7B%7D', /JSON-encoded list/, 'excluded_properties')
    await refused('/event_definitions/?limit=x', /non-negative integer/, 'limit', 'invalid_input')
    for (const path of ['/event_definitions/00000000-0000-4000-8000-000000000000/', '/event_definitions/undefined/', '/property_definitions/42/']) {
      t.match(await get(path), { status: 404, body: { type: 'invalid_request', code: 'not_found', attr: null } }, path)
    }
    const other = foreignProject(dataDir)
    t.match(await server.api('GET', `/api/projects/${other}/event_definitions/`, undefined, key), { status: 404 }, "another organisation's project")
  })

  t.test('definitions persist across a restart; new keys and names are still recorded', async (t) => {
    const before = (await get('/event_definitions/')).body.results
    const properties = (await get('/property_definitions/?limit=100')).body.results
    await server.stop()
    server = await startServer({ dataDir })
    t.same((await get('/event_definitions/')).body.results, before, 'the same definitions, ids and times')
    t.same((await get('/property_definitions/?limit=100')).body.results, properties)

    await capture([{ event: 'purchase', properties: { distinct_id: 'u4', amount: 'a lot', coupon: 'SPRING', note: 5 } }, { event: 'after_restart', properties: { distinct_id: 'u4' } }])
    await until('the new definitions', () => get('/event_definitions/'), (res) => res.body.count === 6)
    const byName = Object.fromEntries((await get('/property_definitions/?limit=100')).body.results.map((d: any) => [d.name, d]))
    t.equal(byName.coupon.property_type, 'String')
    t.equal(byName.amount.property_type, 'Numeric', 'the first type stays')
    t.equal(byName.amount.id, properties.find((d: any) => d.name === 'amount').id)
    t.equal(byName.note.property_type, 'Numeric', 'a type found for a key seen only as null before')
    const purchase = (await get('/event_definitions/?names=purchase')).body.results[0]
    t.equal(purchase.created_at, before.find((d: any) => d.name === 'purchase').created_at, 'created_at kept')
  })
})
