/**
 * GET /events/ as PostHog's events list reads its query, run once against each event store: the same
 * requests must give the same answers on SQLite and on ClickHouse (18.16 included).
 */
import type { Test } from 'tap'
import { startServer, type TestServer } from '../../helpers/server.js'
import { waitForEvents, type StoreSetup } from '../ingestion/suite.js'

const HOUR = 3_600_000

export function eventsReadSuite(t: Test, setup: StoreSetup): void {
  let server: TestServer
  const now = Date.now()
  t.before(async () => {
    server = await startServer({ env: setup.env() })
    const batch = [
      { event: 'read', timestamp: '2023-05-01T00:00:00Z', properties: { distinct_id: 'anon-r', color: 'red', size: 3, $set: { plan: 'pro' } } },
      { event: '$identify', timestamp: '2023-05-01T00:00:01Z', properties: { distinct_id: 'user-r', $anon_distinct_id: 'anon-r' } },
      { event: 'read', timestamp: '2023-05-02T00:00:00Z', properties: { distinct_id: 'user-r', color: 'blue', size: 10, note: null } },
      // A nested key of the same name comes first in the text: only the top-level one counts.
      { event: 'read', timestamp: '2023-05-03T00:00:00Z', properties: { distinct_id: 'other', shop: { color: 'red' }, color: 'green' } },
      { event: 'read', timestamp: '2023-05-04T00:00:00Z', properties: { distinct_id: 'other', shop: { color: 'red', deep: [{ color: 'red' }] } } },
      { event: 'read', timestamp: new Date(now - HOUR).toISOString(), properties: { distinct_id: 'other', color: 'recent' } },
      { event: 'read', timestamp: new Date(now + HOUR).toISOString(), properties: { distinct_id: 'other', color: 'future' } },
    ]
    const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
    if (res.status !== 200) throw new Error(`batch answered ${res.status}`)
    await waitForEvents(server, `event=read&before=${encodeURIComponent(new Date(now + 2 * HOUR).toISOString())}`, 6)
    await waitForEvents(server, 'event=%24identify', 1)
  })
  t.teardown(async () => {
    await server?.stop()
    server?.cleanup()
  })
  const list = async (query: string) => {
    const res = await server.api('GET', `/api/projects/${server.boot.project_id}/events/?event=read&${query}`)
    return res.status === 200 ? { ...res.body, colors: res.body.results.map((e: any) => e.properties.color ?? null) } : res
  }
  const props = (filters: unknown) => list(`properties=${encodeURIComponent(JSON.stringify(filters))}`)

  t.test('OR groups, nested in AND, match any of their filters', async (t) => {
    const or = { type: 'OR', values: [{ key: 'color', value: 'red' }, { key: 'color', value: 'blue' }] }
    t.same((await props(or)).colors, ['blue', 'red'])
    const nested = { type: 'AND', values: [or, { type: 'OR', values: [{ key: 'size', value: 5, operator: 'gt' }, { key: 'nope', operator: 'is_set' }] }] }
    t.same((await props(nested)).colors, ['blue'])
    t.same((await props([or, { key: 'size', value: 3 }])).colors, ['red'], 'a list is an AND of its filters and groups')
  })

  t.test('person property filters list the events of the persons they match now', async (t) => {
    t.same((await props([{ key: 'plan', value: 'pro', type: 'person' }])).colors, ['blue', 'red'], 'both ids of the merged person')
    t.same((await props([{ key: 'plan', value: 'pro' }])).colors, [], 'an event filter does not read $set')
    const either = { type: 'OR', values: [{ key: 'plan', value: 'pro', type: 'person' }, { key: 'color', value: 'green' }] }
    t.same((await props(either)).colors, ['green', 'blue', 'red'])
    t.same((await props([{ key: 'plan', value: 'free', type: 'person' }])).colors, [])
    t.same((await props([{ key: 'plan', value: '^p', operator: 'regex', type: 'person' }])).colors, ['blue', 'red'], 'a regex on a person property')
  })

  t.test("cohort filters list the events of the cohort's persons now, behavioural conditions read from this store", async (t) => {
    const cohort = async (filters: unknown) => (await server.api('POST', `/api/projects/${server.boot.project_id}/cohorts/`, { name: 'c', filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [filters] }] } } })).body.id as number
    const pro = await cohort({ key: 'plan', value: 'pro', type: 'person', operator: 'exact' })
    t.same((await props([{ key: 'id', value: pro, type: 'cohort' }])).colors, ['blue', 'red'], 'both ids of the merged person')
    t.same((await props([{ key: 'id', value: pro, type: 'cohort', operator: 'not_in' }])).colors, ['recent', null, 'green'], 'not_in: the other persons')
    const recent = await cohort({ type: 'behavioral', key: 'read', value: 'performed_event', event_type: 'events', explicit_datetime: '-1d' })
    t.same((await props([{ key: 'id', value: recent, type: 'cohort' }])).colors, ['recent', null, 'green'], 'who read in the last day: other')
    const res: any = await props([{ key: 'id', value: 999_999, type: 'cohort' }])
    t.same([res.status, res.body.attr], [400, 'properties'], 'a missing cohort')
  })

  t.test('format=csv lists the events as CSV, properties in dotted columns, up to 10,000 rows', async (t) => {
    const res = await server.api('GET', `/api/projects/${server.boot.project_id}/events/?event=read&format=csv&properties=${encodeURIComponent(JSON.stringify([{ key: 'size', operator: 'is_set' }]))}`)
    t.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8')
    const [header, ...lines] = res.text.trimEnd().split('\r\n').map((line) => line.split(','))
    const column = (name: string) => lines.map((line) => line[header!.indexOf(name)])
    t.same([column('distinct_id'), column('properties.color'), column('properties.size')], [['user-r', 'anon-r'], ['blue', 'red'], ['10', '3']], 'newest first')
    t.same(column('event'), ['read', 'read'])
  })

  t.test('a person filter matching more than 128 KB of distinct ids answers 400, never a partial list', async (t) => {
    // 3,300 persons with 41-character ids: 135 KB of ids.
    const batch = Array.from({ length: 3300 }, (_, i) => ({
      event: 'bulk',
      timestamp: '2023-06-01T00:00:00Z',
      properties: { distinct_id: `bulk-${String(i).padStart(36, '0')}`, $set: { tier: 'many' } },
    }))
    t.equal((await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })).status, 200)
    await waitForEvents(server, 'event=bulk', 3300, 60_000)
    const res: any = await props([{ key: 'tier', value: 'many', type: 'person' }])
    t.same([res.status, res.body.type, res.body.attr], [400, 'validation_error', 'properties'])
  })

  t.test('property filters of a type the events list does not evaluate answer 400', async (t) => {
    for (const type of ['group', 'element', 'session']) {
      const res: any = await props([{ key: 'email', value: 'x', type }])
      t.equal(res.status, 400, type)
      t.match(res.body, { type: 'validation_error', attr: 'properties' })
    }
    t.same((await props([{ key: 'color', value: 'red', type: 'event' }])).colors, ['red'], 'type event is evaluated')
  })

  t.test('HogQL filters list the events their expression holds for; one skylark cannot read answers 400 naming it', async (t) => {
    const hogql = (key: string) => ({ type: 'hogql', key, value: null })
    t.same((await props([hogql("properties.color in ('red', 'blue') and properties.size > 5")])).colors, ['blue'])
    t.same((await props({ type: 'OR', values: [hogql("properties.color like 'gr%'"), { key: 'size', value: 3 }] })).colors, ['green', 'red'], 'in a group')
    t.same((await props([hogql("person.properties.plan = 'pro'")])).colors, ['blue', 'red'], "on a person's properties: both ids of the merged person")
    t.same((await props([hogql("match(properties.color, '^(gr|red)')")])).colors, ['green', 'red'], 'match()')
    t.same((await props([hogql("match(person.properties.plan, '^p')")])).colors, ['blue', 'red'], "match() on a person's properties")
    t.same((await props([hogql("person.properties.plan = 'pro'"), hogql("properties.color = 'red'")])).colors, ['red'])
    t.same((await props([hogql("distinct_id like '%-r' and event = 'read'")])).colors, ['blue', 'red'], "the event's fields")
    const both: any = await props([hogql("person.properties.plan = 'pro' and distinct_id = 'user-r'")])
    t.match([both.status, both.body.detail], [400, /reads both the event \(its properties or fields\) and the person's properties/])
    const res: any = await props([hogql('properties.color')])
    t.same([res.status, res.body.type, res.body.attr], [400, 'validation_error', 'properties'])
    t.match(res.body.detail, /^The HogQL filter "properties.color": The expression is a text, not a condition/)
  })

  t.test("regex and not_regex search a property's text; a pattern the stores cannot all run answers 400", async (t) => {
    t.same((await props([{ key: 'color', value: '^(red|blu)', operator: 'regex' }])).colors, ['blue', 'red'])
    t.same((await props([{ key: 'color', value: 'e', operator: 'not_regex' }])).colors, [null], 'a missing color passes not_regex')
    const res: any = await props([{ key: 'color', value: '(?<=r)ed', operator: 'regex' }])
    t.same([res.status, res.body.type, res.body.attr], [400, 'validation_error', 'properties'])
    t.match(res.body.detail, /is a regex skylark's stores can't run/)
  })

  t.test('is_set counts a key whose value is null; is_not_set does not', async (t) => {
    t.same((await props([{ key: 'note', operator: 'is_set' }])).colors, ['blue'])
    t.equal((await props([{ key: 'note', operator: 'is_not_set' }])).count, 4)
  })

  t.test('properties match top-level keys only, never a nested key of the same name', async (t) => {
    t.same((await props([{ key: 'color', value: 'red' }])).colors, ['red'])
    t.same((await props([{ key: 'color', value: 'green' }])).colors, ['green'])
    t.equal((await props([{ key: 'color', operator: 'is_set' }])).count, 4)
    t.same((await props([{ key: 'color', operator: 'is_not_set' }])).results.map((e: any) => e.timestamp), ['2023-05-04T00:00:00.000Z'])
    t.equal((await props([{ key: 'deep', operator: 'is_set' }])).count, 0)
    t.equal((await props([{ key: 'shop', operator: 'is_set' }])).count, 2)
  })

  t.test('person_id lists the events of all the distinct ids of that person', async (t) => {
    const persons = await server.api('GET', `/api/projects/${server.boot.project_id}/persons/?distinct_id=user-r`)
    t.same(persons.body.results[0].distinct_ids, ['anon-r', 'user-r'])
    t.same((await list(`person_id=${persons.body.results[0].uuid}`)).colors, ['blue', 'red'])
    const unknown = await list('person_id=00000000-0000-4000-8000-000000000000')
    t.same([unknown.count, unknown.results], [0, []], 'an unknown person has no events')
  })

  t.test("action_id lists the events matching the project's action, on both stores", async (t) => {
    const actions = `/api/projects/${server.boot.project_id}/actions/`
    const create = async (body: object) => (await server.api('POST', actions, body)).body.id as number
    const warm = await create({ name: 'Warm reads', steps: [{ event: 'read', properties: [{ key: 'color', value: ['red', 'recent'] }] }, { event: '$identify' }] })
    const all = await server.api('GET', `/api/projects/${server.boot.project_id}/events/?action_id=${warm}&orderBy=${encodeURIComponent('["timestamp"]')}`)
    t.same(all.body.results.map((e: any) => [e.event, e.properties.color ?? null]), [['read', 'red'], ['$identify', null], ['read', 'recent']], 'either step, in the order asked')
    t.same((await list(`action_id=${warm}&distinct_id=other`)).colors, ['recent'], 'with the other filters (here event=read)')
    const empty = await create({ name: 'No steps' })
    t.same([(await list(`action_id=${empty}`)).count, (await list('action_id=999999')).count], [0, 0], 'no steps, or no such action: nothing')
    const bad: any = await list('action_id=x')
    t.same([bad.status, bad.body.attr], [400, 'action_id'])
  })

  t.test('filters PostHog has and skylark does not evaluate answer 400 naming them', async (t) => {
    for (const name of ['where', 'select']) {
      const res: any = await list(`${name}=1`)
      t.equal(res.status, 400, name)
      t.match(res.body, { type: 'validation_error', attr: name })
    }
  })

  t.test('after is strict, and both bounds take relative dates', async (t) => {
    t.same((await list('after=2023-05-02T00:00:00Z&before=2023-05-04T00:00:00Z')).colors, ['green'])
    t.same((await list('after=-1d')).colors, ['recent'])
    t.same((await list('after=-2h&before=-30M')).colors, ['recent'])
    const bad: any = await list('after=yesterday')
    t.same([bad.status, bad.body.attr], [400, 'after'])
  })

  t.test("dates without an offset are read on the project's wall clock, as relative_date_parse reads them", async (t) => {
    const project = `/api/projects/${server.boot.project_id}/`
    t.equal((await server.api('PATCH', project, { timezone: 'Asia/Tokyo' })).status, 200)
    t.teardown(() => server.api('PATCH', project, { timezone: 'UTC' }))
    // 2 May in Tokyo is 1 May 15:00 to 2 May 15:00 UTC: the event at 2 May 00:00 UTC, and only it.
    t.same((await list('after=2023-05-02&before=2023-05-03')).colors, ['blue'])
    t.same((await list('after=2023-05-02T08:59:59&before=2023-05-02T09:00:01')).colors, ['blue'], 'date-times too')
    t.same((await list('after=2023-05-01T23:00:00Z&before=2023-05-02T01:00:00%2B00:00')).colors, ['blue'], 'an offset given is kept')
    t.same((await list('after=-2h&before=-30M')).colors, ['recent'], 'relative dates are still counted back from now')
  })

  t.test('without before, events stamped more than 5 s ahead are left out', async (t) => {
    t.equal((await list('')).count, 5)
    t.same((await list(`before=${encodeURIComponent(new Date(now + 2 * HOUR).toISOString())}&limit=1`)).colors, ['future'])
  })

  t.test('orderBy reads oldest or newest first', async (t) => {
    t.same((await list('orderBy=%5B%22timestamp%22%5D&limit=2')).colors, ['red', 'blue'])
    t.same((await list('orderBy=%5B%22-timestamp%22%5D&limit=2')).colors, ['recent', null])
    const bad: any = await list('orderBy=%5B%22event%22%5D')
    t.same([bad.status, bad.body.attr], [400, 'orderBy'])
  })

  t.test('next goes on from the last event of the page, so later events do not shift the pages', async (t) => {
    const first = await list('limit=2')
    const next = new URL(first.next)
    const bound = Date.parse(next.searchParams.get('before')!)
    t.equal(bound, Date.parse(first.results[1].timestamp) + 1, 'before the millisecond after the last event listed')
    t.equal(next.searchParams.get('offset'), '1', 'that event is counted as listed')
    t.equal(first.previous, null)
    // An event sent later is stamped later than the bound.
    const late = { event: 'read', timestamp: new Date(bound + 1000).toISOString(), properties: { distinct_id: 'late', color: 'late' } }
    await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch: [late] } })
    const far = encodeURIComponent(new Date(now + 2 * HOUR).toISOString())
    await waitForEvents(server, `event=read&before=${far}&properties=${encodeURIComponent(JSON.stringify([{ key: 'color', value: 'late' }]))}`, 1)
    const second = await server.api('GET', next.pathname + next.search)
    t.same(second.body.results.map((e: any) => e.properties.color ?? null), ['green', 'blue'])
  })

  t.test('paging through events of the same millisecond lists each once, in both orders', async (t) => {
    const at = (ms: number) => new Date(Date.UTC(2022, 0, 1) + ms).toISOString()
    // Runs of equal times longer than a page, at a page's edge and inside one.
    const times = [0, 5, 5, 5, 5, 5, 7, 9, 9, 9, 12]
    const batch = times.map((ms, i) => ({ event: 'tied', timestamp: at(ms), properties: { distinct_id: `tie-${i}`, i } }))
    t.equal((await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })).status, 200)
    await waitForEvents(server, 'event=tied', times.length)
    for (const [order, orderBy] of [['newest first', '-timestamp'], ['oldest first', 'timestamp']] as const) {
      for (const [limit, offset] of [[2, 0], [3, 0], [4, 1], [2, 3]]) {
        const seen: Array<{ i: number; ms: number }> = []
        let url: string | null = `/api/projects/${server.boot.project_id}/events/?event=tied&limit=${limit}&offset=${offset}&orderBy=${encodeURIComponent(JSON.stringify([orderBy]))}`
        for (let pages = 0; url && pages < 20; pages++) {
          const res: any = await server.api('GET', url)
          seen.push(...res.body.results.map((e: any) => ({ i: e.properties.i, ms: Date.parse(e.timestamp) - Date.UTC(2022, 0, 1) })))
          url = res.body.next ? new URL(res.body.next).pathname + new URL(res.body.next).search : null
        }
        const ms = seen.map((e) => e.ms)
        t.equal(new Set(seen.map((e) => e.i)).size, seen.length, `${order}, limit ${limit}, offset ${offset}: none repeated`)
        t.equal(seen.length, times.length - offset, `${order}, limit ${limit}, offset ${offset}: none lost`)
        t.same(ms, [...ms].sort((a, b) => (order === 'oldest first' ? a - b : b - a)), `${order}, limit ${limit}, offset ${offset}: in order`)
      }
    }
  })
}
