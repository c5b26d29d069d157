/**
 * PostHog's read actions beside the lists, run once against each event store with events sent through
 * /batch/: one event by uuid, the distinct values of a property (events/values), and the groups API's
 * find, related, property_definitions and property_values. Both stores must answer the same.
 */
import type { Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { startServer, type TestServer } from '../../helpers/server.js'
import { waitForEvents, type StoreSetup } from '../ingestion/suite.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR

export function lookupsSuite(t: Test, setup: StoreSetup): void {
  let server: TestServer
  let base: string
  const now = Date.now()
  const at = (ms: number) => new Date(now - ms).toISOString()
  const known = randomUUID()
  const pagoMidnight = (Math.floor((now - 11 * HOUR) / DAY) - 7) * DAY + 11 * HOUR
  t.before(async () => {
    server = await startServer({ env: setup.env() })
    base = `/api/projects/${server.boot.project_id}`
    const groupSet = (type: string, key: string, set: object) => ({
      event: '$groupidentify',
      timestamp: at(5 * HOUR),
      properties: { distinct_id: 'admin', $group_type: type, $group_key: key, $group_set: set },
    })
    const batch = [
      // company is the project's group type 0, project type 1.
      groupSet('company', 'acme', { name: 'Acme', plan: 'pro', seats: 10 }),
      groupSet('company', 'beta', { name: 'Beta', plan: 'free' }),
      groupSet('company', 'gamma', { name: 'Gamma "G"', plan: 'pro' }),
      groupSet('project', 'p1', { name: 'P1' }),
      {
        event: 'view',
        uuid: known,
        timestamp: at(3 * HOUR),
        properties: {
          distinct_id: 'alice',
          $set: { email: 'alice@example.com' },
          $groups: { company: 'acme', project: 'p1' },
          plan: 'pro',
          tags: ['a', ['b']],
          n: 12,
          text12: '12',
          flag: true,
          shape: { b: 1, a: 'é' },
          none: null,
        },
      },
      { event: 'view', timestamp: at(2 * HOUR), properties: { distinct_id: 'bob', $groups: { company: 'acme' }, plan: 'free' } },
      { event: 'view', timestamp: at(1 * HOUR), properties: { distinct_id: 'carol', $groups: { company: 'beta' }, plan: 'enterprise' } },
      { event: 'other', timestamp: at(1 * HOUR), properties: { distinct_id: 'alice', plan: 'other-event' } },
      // A minute either side of midnight seven days back in Pago Pago (UTC-11 all year), for the values' window there.
      { event: 'boundary', timestamp: new Date(pagoMidnight - 60_000).toISOString(), properties: { distinct_id: 'erin', plan: 'early' } },
      { event: 'boundary', timestamp: new Date(pagoMidnight + 60_000).toISOString(), properties: { distinct_id: 'erin', plan: 'late' } },
      // Past the values' 7 days and the related actors' 90.
      { event: 'view', timestamp: at(9 * DAY), properties: { distinct_id: 'erin', plan: 'ancient' } },
      { event: 'view', timestamp: at(100 * DAY), properties: { distinct_id: 'dave', $groups: { company: 'acme', project: 'p2' }, plan: 'older' } },
    ]
    const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
    if (res.status !== 200) throw new Error(`batch answered ${res.status}`)
    await waitForEvents(server, `after=${at(200 * DAY)}`, batch.length)
    for (const deadline = Date.now() + 15_000; ; ) {
      const groups = await server.api('GET', `${base}/groups/?group_type_index=0`)
      const persons = await server.api('GET', `${base}/persons/?distinct_id=alice`)
      if (groups.body.count === 3 && persons.body.results?.[0]?.properties?.email) break
      if (Date.now() > deadline) throw new Error('groups and persons were not stored')
      await new Promise((r) => setTimeout(r, 100))
    }
  })
  t.teardown(async () => {
    await server?.stop()
    server?.cleanup()
  })
  const get = (path: string) => server.api('GET', `${base}/${path}`)
  const names = async (query: string) => {
    const res = await get(`events/values/?${query}`)
    return res.status === 200 ? res.body.results.map((r: { name: string }) => r.name) : res
  }

  t.test('events/:id/ answers the event as the list gives it, by uuid in any of its spellings', async (t) => {
    const listed = (await get('events/?event=view&distinct_id=alice')).body.results[0]
    t.equal(listed.id, known)
    for (const spelling of [known, known.toUpperCase(), known.replace(/-/g, ''), `{${known}}`, `urn:uuid:${known}`]) {
      const res = await get(`events/${encodeURIComponent(spelling)}/`)
      t.same([res.status, res.body], [200, listed], spelling)
    }
    t.match(listed, { event: 'view', distinct_id: 'alice', properties: { plan: 'pro', $group_0: 'acme' }, elements: [] })
  })

  t.test('events/:id/ of an unknown uuid is 404, and a malformed one 400, in the contract envelope', async (t) => {
    const missing = randomUUID()
    const res = await get(`events/${missing}/`)
    t.same([res.status, res.body], [404, { type: 'invalid_request', code: 'not_found', detail: `No events exist for event UUID ${missing}`, attr: null }])
    const bad = await get('events/not-a-uuid/')
    t.same([bad.status, bad.body], [400, { type: 'validation_error', code: 'invalid', detail: 'Invalid UUID', attr: null }])
  })

  t.test('events/values/ lists the values seen on the named events of the last 7 days, newest first', async (t) => {
    const res = await get('events/values/?key=plan&event_name=view')
    t.same(res.body, { results: [{ name: 'enterprise' }, { name: 'free' }, { name: 'pro' }], refreshing: false })
    t.equal(res.headers.get('cache-control'), 'max-age=10', 'cached 10 s, as PostHog')
    t.same(await names('key=plan&event_name=view&event_name=other'), ['enterprise', 'other-event', 'free', 'pro'], 'event_name repeats')
    t.same(await names('key=plan&event_name=nothing'), [])
  })

  t.test("events/values/ reads its 7 days from the project's midnight, as PostHog's runner does", async (t) => {
    t.equal((await server.api('PATCH', `${base}/`, { timezone: 'Pacific/Pago_Pago' })).status, 200)
    t.teardown(() => server.api('PATCH', `${base}/`, { timezone: 'UTC' }))
    // By UTC's midnight both or neither would be in, whatever the hour.
    t.same(await names('key=plan&event_name=boundary'), ['late'])
  })

  t.test('events/values/ with value keeps the values containing it in any case, shortest first', async (t) => {
    t.same(await names('key=plan&event_name=view&value=R'), ['pro', 'free', 'enterprise'])
    t.same(await names('key=plan&event_name=view&value=e'), ['free', 'enterprise'])
    t.same(await names('key=plan&event_name=view&value=%25'), [], 'a percent sign is text, not a wildcard')
  })

  t.test('events/values/ names values as PostHog does: lists flattened, JSON text parsed, Python text forms', async (t) => {
    t.same(await names('key=tags&event_name=view'), ['a', 'b'])
    t.same(await names('key=n&event_name=view'), ['12'])
    t.same(await names('key=text12&event_name=view'), ['12'])
    t.same(await names('key=flag&event_name=view'), ['true'])
    t.same(await names('key=shape&event_name=view'), ['{"a": "\\u00e9", "b": 1}'], 'json.dumps with sorted keys')
    t.same(await names('key=none&event_name=view'), [], 'null is no value')
  })

  t.test('events/values/ reads columns with is_column=true', async (t) => {
    t.same(await names('key=distinct_id&is_column=true&event_name=view'), ['carol', 'bob', 'alice'])
    t.same(await names('key=%24group_0&is_column=true&event_name=view'), ['beta', 'acme'])
    t.same(await names('key=%24group_1&is_column=true&event_name=view&value=P'), ['p1'])
  })

  t.test('events/values/ refusals are 400 in the contract envelope', async (t) => {
    const cases: Array<[string, string]> = [
      ['event_name=view', 'key'],
      ['key=plan', 'event_name'],
      ['key=custom_event&event_name=view', 'key'],
      ['key=plan&event_name=view&properties_plan=pro', 'properties_plan'],
      ['key=nope&is_column=true&event_name=view', 'key'],
    ]
    for (const [query, attr] of cases) {
      const res = await get(`events/values/?${query}`)
      t.match([res.status, res.body], [400, { type: 'validation_error', code: 'invalid', detail: String, attr }], query)
    }
  })

  t.test('groups/find/ answers one group by type and exact key', async (t) => {
    const res = await get('groups/find/?group_type_index=0&group_key=acme')
    t.same(res.body, {
      group_type_index: 0,
      group_key: 'acme',
      group_properties: { name: 'Acme', plan: 'pro', seats: 10 },
      created_at: res.body.created_at,
      notebook: null,
    })
    t.equal(res.status, 200)
    const miss = await get('groups/find/?group_type_index=0&group_key=ACME')
    t.same([miss.status, miss.body], [404, { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null }])
    t.same((await get('groups/find/?group_type_index=1&group_key=acme')).status, 404, 'another type')
    for (const [query, attr] of [['group_key=acme', 'group_type_index'], ['group_type_index=0', 'group_key'], ['group_type_index=x&group_key=acme', 'group_type_index']]) {
      const bad = await get(`groups/find/?${query}`)
      t.match([bad.status, bad.body], [400, { type: 'validation_error', code: 'invalid', attr }], query)
    }
  })

  t.test("groups/related/ of a group: the persons of its events, then the other types' groups, over 90 days", async (t) => {
    const res = await get('groups/related/?group_type_index=0&id=acme')
    t.equal(res.status, 200)
    t.same(
      res.body.map((a: any) => [a.type, a.type === 'person' ? a.distinct_ids : a.group_key]),
      [
        ['person', ['bob']],
        ['person', ['alice']],
        ['group', 'p1'],
      ],
      'dave and p2 are older than 90 days; persons newest first',
    )
    t.match(res.body[1], { type: 'person', id: String, uuid: String, name: 'alice@example.com', is_identified: false, matched_recordings: [], value_at_data_point: null })
    t.same(res.body[2], { id: 'p1', type: 'group', group_type_index: 1, group_key: 'p1', created_at: res.body[2].created_at, matched_recordings: [], properties: { name: 'P1' }, value_at_data_point: null })
    t.same(await get('groups/related/?group_type_index=0&id=gamma').then((r) => r.body), [], 'a group without events')
  })

  t.test('groups/related/ of a person (no group_type_index): the groups of every type on its events', async (t) => {
    const alice = (await get('persons/?distinct_id=alice')).body.results[0]
    const res = await get(`groups/related/?id=${alice.uuid}`)
    t.same(res.body.map((a: any) => [a.group_type_index, a.group_key]), [[0, 'acme'], [1, 'p1']])
    t.same((await get(`groups/related/?id=${randomUUID()}`)).body, [], 'an unknown person')
    const bad = await get('groups/related/?group_type_index=5&id=acme')
    t.same([bad.status, bad.body], [400, { type: 'validation_error', code: 'invalid', detail: 'group_type_index is required to be at least 0 and less than 5', attr: null }])
    const noId = await get('groups/related/?group_type_index=0')
    t.match([noId.status, noId.body], [400, { code: 'invalid', detail: 'This query parameter is required.', attr: 'id' }])
  })

  t.test('groups/property_definitions/ counts the groups carrying each key, per type, most common first', async (t) => {
    const res = await get('groups/property_definitions/')
    t.same(res.body, {
      0: [{ name: 'name', count: 3 }, { name: 'plan', count: 3 }, { name: 'seats', count: 1 }],
      1: [{ name: 'name', count: 1 }],
    })
  })

  t.test('groups/property_values/ answers the most common values as PostHog reads them from the raw JSON', async (t) => {
    const res = await get('groups/property_values/?group_type_index=0&key=plan')
    t.same(res.body, { results: [{ name: 'pro', count: 2 }, { name: 'free', count: 1 }], refreshing: false })
    t.same((await get('groups/property_values/?group_type_index=0&key=name&value=g')).body.results, [{ name: 'Gamma \\"G\\"', count: 1 }], 'the quotes keep their escapes')
    t.same((await get('groups/property_values/?group_type_index=0&key=seats')).body.results, [{ name: '10', count: 1 }])
    const bad = await get('groups/property_values/?group_type_index=0')
    t.match([bad.status, bad.body], [400, { code: 'invalid', attr: 'key' }])
  })
}
