/**
 * PostHog's exports API over HTTP on the embedded store: an events list exported as CSV across several pages,
 * with its `columns` and `filename`; a persons export; the key's scopes for the list recorded as the export's
 * exception; the caller's own exports listed and filtered; expired and other projects' exports not found; and
 * bad bodies answered in the contract's envelope with DRF's messages.
 */
import t from 'tap'
import { parseCsv } from '../../src/common/csv.js'
import { flagServer } from './flags-management/fixture.js'
import { waitForEvents } from './ingestion/suite.js'

t.test('exports API', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server, base } = f
  const exportsPath = `${base}/exports/`
  const api = (method: string, path: string, body?: unknown) => server.api(method, path, body)
  const csvOf = (context: Record<string, unknown>) => api('POST', exportsPath, { export_format: 'text/csv', export_context: context })

  const batch = Array.from({ length: 2_300 }, (_, i) => ({
    event: 'exported',
    timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    properties: { distinct_id: `user-${i % 50}`, n: i, $set: { email: `user-${i % 50}@example.com` } },
  }))
  t.equal((await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })).status, 200)
  await waitForEvents(server, 'event=exported', batch.length, 60_000)

  t.test('an events list is exported whole, page after page, newest first', async (t) => {
    const res = await csvOf({ path: `${base}/events/?event=exported`, filename: 'January events!' })
    t.equal(res.status, 201)
    t.same(Object.keys(res.body), ['id', 'dashboard', 'insight', 'export_format', 'created_at', 'has_content', 'export_context', 'filename', 'expires_after', 'exception'])
    t.match(res.body, { dashboard: null, insight: null, export_format: 'text/csv', has_content: true, filename: 'january-events.csv', exception: null })
    t.ok(Date.parse(res.body.expires_after) - Date.now() > 180 * 86_400_000, 'kept for six months')
    const content = await server.request('GET', `${exportsPath}${res.body.id}/content/?download=true`, { headers: { authorization: `Bearer ${server.boot.personal_api_key}` } })
    t.equal(content.status, 200)
    t.equal(content.headers.get('content-type'), 'text/csv')
    t.equal(content.headers.get('content-disposition'), 'attachment; filename="january-events.csv"')
    const [header, ...rows] = parseCsv(content.text)
    t.equal(rows.length, batch.length)
    const n = header!.indexOf('properties.n')
    t.same([rows[0]![n], rows.at(-1)![n]], ['2299', '0'])
    t.equal(new Set(rows.map((row) => row[header!.indexOf('distinct_id')])).size, 50)
  })

  t.test('columns pick and order the CSV columns', async (t) => {
    const res = await csvOf({ path: `${base}/events/?event=exported&distinct_id=user-7`, columns: ['distinct_id', 'properties.n', 'event'] })
    const content = await api('GET', `${exportsPath}${res.body.id}/content/`)
    const [header, ...rows] = parseCsv(content.text)
    t.same(header, ['distinct_id', 'properties.n', 'event'])
    t.equal(rows.length, batch.length / 50)
    t.same(rows[0], ['user-7', '2257', 'exported'])
  })

  t.test('a persons list is exported with its properties', async (t) => {
    const res = await csvOf({ path: `${base}/persons/?search=example.com`, columns: ['properties.email'] })
    t.equal(res.body.has_content, true)
    const [, ...rows] = parseCsv((await api('GET', `${exportsPath}${res.body.id}/content/`)).text)
    t.same(rows.map((row) => row[0]).sort(), Array.from({ length: 50 }, (_, i) => `user-${i}@example.com`).sort())
  })

  t.test("a HogQL query's rows are exported as PostHog's exporter writes them, 50,000 without LIMIT", async (t) => {
    const query = "SELECT distinct_id, count() AS n, max(timestamp) AS last FROM events WHERE event = 'exported' GROUP BY distinct_id ORDER BY distinct_id"
    const res = await csvOf({ source: { kind: 'HogQLQuery', query } })
    t.match(res.body, { has_content: true, exception: null, export_context: { source: { kind: 'HogQLQuery' } } })
    const [header, ...rows] = parseCsv((await api('GET', `${exportsPath}${res.body.id}/content/`)).text)
    t.same(header, ['distinct_id', 'n', 'last'])
    t.equal(rows.length, 50, 'more than the API\'s 100 rows would allow is not needed here, but every group is there')
    // user-0 sent events 0, 50 … 2250; the last at 2250 s after 2024-01-01, written as Python's str(datetime)
    t.same(rows[0], ['user-0', '46', '2024-01-01 00:37:30+00:00'])
    const all = await csvOf({ source: { kind: 'HogQLQuery', query: "select properties.n from events where event = 'exported'" } })
    t.equal(parseCsv((await api('GET', `${exportsPath}${all.body.id}/content/`)).text).length, batch.length + 1, 'no LIMIT: every row, past the 100 the API answers')
    const persons = await csvOf({ source: { kind: 'HogQLQuery', query: "select properties.email as email from persons where properties.email like '%@example.com' order by email" } })
    const [personsHeader, ...emails] = parseCsv((await api('GET', `${exportsPath}${persons.body.id}/content/`)).text)
    t.same([personsHeader, emails.length, emails[0]], [['email'], 50, ['user-0@example.com']], 'a query of the persons table')
    const refused = await csvOf({ source: { kind: 'HogQLQuery', query: 'select person_mode from events' } })
    t.match(refused.body, { has_content: false, exception: /Unknown field "person_mode"/ })
  })

  t.test("a key without the list's scope makes an export that says why it has no content", async (t) => {
    const member = f.member(undefined, ['export:write'])
    const res = await member.call('POST', exportsPath, { export_format: 'text/csv', export_context: { path: `${base}/events/` } })
    t.equal(res.status, 201)
    t.match(res.body, { has_content: false, exception: /answered 403/ })
    const content = await member.call('GET', `${exportsPath}${res.body.id}/content/`)
    t.same([content.status, content.body.type], [404, 'invalid_request'])
  })

  t.test("the list is the caller's own exports, narrowed by path and format", async (t) => {
    const member = f.member()
    const mine = await member.call('POST', exportsPath, { export_format: 'text/csv', export_context: { path: `${base}/persons/` } })
    const listed = await member.call('GET', exportsPath)
    t.same(listed.body.results.map((a: { id: number }) => a.id), [mine.body.id], "another user's exports are not listed")
    t.equal((await member.call('GET', `${exportsPath}?context_path=PERSONS`)).body.count, 1)
    t.equal((await member.call('GET', `${exportsPath}?context_path=events`)).body.count, 0)
    t.equal((await member.call('GET', `${exportsPath}?export_format=image/png`)).body.count, 0)
    t.equal((await api('GET', `${exportsPath}${mine.body.id}/`)).status, 200, 'read by id from any key of the project')
  })

  t.test('an expired export and another project\'s are not found', async (t) => {
    const old = await api('POST', exportsPath, { export_format: 'text/csv', export_context: { path: `${base}/persons/` }, expires_after: '2020-01-01T00:00:00Z' })
    t.equal(old.status, 201)
    t.equal((await api('GET', `${exportsPath}${old.body.id}/`)).status, 404)
    t.equal((await api('GET', `${exportsPath}${old.body.id}/content/`)).status, 404)
    const sibling = f.m.accounts.createProject(f.orgId, 'Sibling')
    const theirs = await api('POST', `/api/projects/${sibling.id}/exports/`, { export_format: 'text/csv', export_context: { path: `/api/projects/${sibling.id}/persons/` } })
    t.equal((await api('GET', `${exportsPath}${theirs.body.id}/`)).status, 404)
  })

  t.test('bad bodies are answered in the envelope with the field', async (t) => {
    const cases: Array<[unknown, string | null, string]> = [
      [{ export_context: { path: `${base}/events/` } }, 'export_format', 'required'],
      [{ export_format: 'text/plain', export_context: { path: `${base}/events/` } }, 'export_format', 'invalid_choice'],
      [{ export_format: 'image/png', export_context: { path: `${base}/events/` } }, 'export_format', 'invalid'],
      [{ export_format: 'text/csv' }, null, 'invalid'],
      [{ export_format: 'text/csv', export_context: { path: 'https://elsewhere.test/x' } }, 'export_context', 'invalid'],
      [{ export_format: 'text/csv', export_context: { source: { kind: 'TrendsQuery', series: [] } } }, 'export_context', 'invalid'],
      [{ export_format: 'text/csv', export_context: { path: `${base}/events/`, method: 'POST' } }, 'export_context', 'invalid'],
      [{ export_format: 'text/csv', export_context: { path: `${base}/events/`, columns: 'event' } }, 'export_context', 'invalid'],
      [{ export_format: 'text/csv', export_context: { path: `${base}/events/` }, dashboard: 1 }, 'dashboard', 'invalid'],
      [{ export_format: 'text/csv', export_context: { path: `${base}/events/` }, expires_after: 'soon' }, 'expires_after', 'invalid'],
      [[1], null, 'invalid'],
    ]
    for (const [body, attr, code] of cases) {
      const res = await api('POST', exportsPath, body)
      t.same([res.status, res.body.type, res.body.attr, res.body.code], [400, 'validation_error', attr, code], JSON.stringify(body))
    }
    t.equal((await api('GET', exportsPath)).body.results.every((a: { has_content: boolean; exception: string | null }) => a.has_content || a.exception !== null), true, 'a refused body stores nothing')
  })
})
