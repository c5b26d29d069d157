import t from 'tap'
import { uuidv7 } from '../../../src/common/ids.js'
import type { CapturedEvent } from '../../../src/ingestion/types.js'
import { foreignProject, projectIn, seedPersons } from '../../helpers/seed.js'
import { bootstrapDataDir, runCli, serverFor, tempDir } from '../../helpers/server.js'

const T0 = Date.parse('2024-05-01T00:00:00.000Z')
let seq = 0
function ev(teamId: number, event: string, distinctId: string, properties: Record<string, unknown> = {}): CapturedEvent {
  const timestamp = T0 + 1000 * seq++
  return { uuid: uuidv7(timestamp), event, distinct_id: distinctId, properties, timestamp, team_id: teamId, now: timestamp }
}

t.test('persons and groups read API', async (t) => {
  const dataDir = tempDir()
  const boot = bootstrapDataDir(dataDir)
  const team = boot.project_id

  // A project of another organisation: its persons must stay invisible to the bootstrap key.
  const otherProject = foreignProject(dataDir)
  // A second project of the key's organisation, for display names and the order of persons.
  const namesProject = projectIn(dataDir, boot.organization_id, 'Names')
  const generatedId = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'
  seedPersons(dataDir, [
    ev(team, '$pageview', 'anon-1', { $set: { plan: 'free' } }),
    ev(team, '$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { email: 'one@example.com' } }),
    ev(team, '$pageview', 'user-2', { $set: { name: 'Two', address: { city: 'Oslo' } } }),
    ev(team, '$pageview', 'user-3'),
    ev(team, '$groupidentify', 'user-1', { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } }),
    ev(team, '$groupidentify', 'user-1', { $group_type: 'company', $group_key: 'beta', $group_set: { name: 'Beta' } }),
    ev(team, '$pageview', 'user-1', { $groups: { company: 'acme', project: 'p-1' } }),
    ev(otherProject, '$pageview', 'secret-user'),
    ev(namesProject, '$pageview', generatedId),
    ev(namesProject, '$identify', 'zed', { $anon_distinct_id: generatedId }),
    ev(namesProject, '$pageview', 'x', { $set: { Email: 'cap@example.com' } }),
    // Created last, stamped first: the list follows created_at, not the row id.
    { ...ev(namesProject, '$pageview', 'early'), timestamp: T0 - 86_400_000 },
  ])

  const server = await serverFor(t, { dataDir })
  const persons = `/api/projects/${team}/persons/`
  const groups = `/api/projects/${team}/groups/`

  t.test('lists persons as PostHog does, newest first', async (t) => {
    const res = await server.api('GET', persons)
    t.equal(res.status, 200)
    t.equal(res.body.count, 3)
    t.same(res.body.results.map((p: any) => p.distinct_ids), [['user-3'], ['user-2'], ['anon-1', 'user-1']])
    const identified = res.body.results[2]
    t.match(identified, {
      id: /^[0-9a-f-]{36}$/,
      name: 'one@example.com',
      properties: { plan: 'free', email: 'one@example.com' },
      is_identified: true,
      created_at: new Date(T0).toISOString(),
    })
    t.equal(identified.id, identified.uuid)
    t.equal(res.body.results[1].name, 'Two')
    t.equal(res.body.results[0].name, 'user-3')
  })

  t.test('paginates with limit and offset links', async (t) => {
    const first = await server.api('GET', `${persons}?limit=2`)
    t.equal(first.body.results.length, 2)
    t.equal(first.body.previous, null)
    t.match(first.body.next, new RegExp(`/api/projects/${team}/persons/\\?limit=2&offset=2$`))
    const second = await server.api('GET', new URL(first.body.next).pathname + new URL(first.body.next).search)
    t.same(second.body.results.map((p: any) => p.distinct_ids), [['anon-1', 'user-1']])
    t.equal(second.body.next, null)
    t.match(second.body.previous, /limit=2$/)
  })

  t.test('filters by distinct_id', async (t) => {
    const res = await server.api('GET', `${persons}?distinct_id=anon-1`)
    t.equal(res.body.count, 1)
    t.same(res.body.results[0].distinct_ids, ['anon-1', 'user-1'])
    const none = await server.api('GET', `${persons}?distinct_id=nobody`)
    t.same([none.status, none.body.count, none.body.results], [200, 0, []])
  })

  const names = async (query: string) => {
    const res = await server.api('GET', `${persons}?${query}`)
    t.equal(res.status, 200, query)
    t.equal(res.body.count, res.body.results.length, `${query}: count agrees`)
    return res.body.results.map((p: any) => p.distinct_ids.at(-1))
  }
  const props = (filters: unknown) => `properties=${encodeURIComponent(JSON.stringify(filters))}`

  t.test('email matches the email property exactly', async (t) => {
    t.same(await names('email=one@example.com'), ['user-1'])
    t.same(await names('email=ONE@example.com'), [])
    t.same(await names('email=one@'), [])
  })

  t.test('search matches part of the email in any case, or a whole distinct id or uuid', async (t) => {
    t.same(await names('search=EXAMPLE'), ['user-1'])
    t.same(await names('search=anon-1'), ['user-1'])
    t.same(await names('search=user'), [], 'part of a distinct id is not enough')
    const [three] = (await server.api('GET', `${persons}?distinct_id=user-3`)).body.results
    t.same(await names(`search=${three.uuid}`), ['user-3'])
  })

  t.test('properties filter on person properties, AND/OR groups included', async (t) => {
    t.same(await names(props([{ key: 'plan', value: 'free' }])), ['user-1'])
    t.same(await names(props([{ key: 'plan', value: 'free', type: 'person' }, { key: 'email', operator: 'icontains', value: 'one' }])), ['user-1'])
    t.same(await names(props({ type: 'OR', values: [{ key: 'name', value: 'Two' }, { key: 'email', operator: 'is_set' }] })), ['user-2', 'user-1'])
    t.same(await names(props([{ key: 'plan', operator: 'is_not_set' }])), ['user-3', 'user-2'])
    const event = await server.api('GET', `${persons}?${props([{ key: 'plan', value: 'free', type: 'event' }])}`)
    t.match([event.status, event.body], [400, { type: 'validation_error', attr: 'properties' }], 'an event filter')
    const cohort = await server.api('GET', `${persons}?${props([{ key: 'plan', value: 'free', type: 'cohort' }])}`)
    t.match([cohort.status, cohort.body], [400, { type: 'validation_error', detail: 'A cohort filter needs the id of a cohort as its value.', attr: 'properties' }], 'a cohort filter naming no cohort')
  })

  t.test("HogQL filters read the person's properties, as properties.<key> or person.properties.<key>", async (t) => {
    const hogql = (key: string) => ({ key, type: 'hogql' })
    t.same(await names(props([hogql("properties.plan in ('free', 'team')")])), ['user-1'])
    t.same(await names(props([hogql("person.properties.email like '%@example.com' or properties.name = 'Two'")])), ['user-2', 'user-1'])
    t.same(await names(props([hogql('isNull(properties.plan)')])), ['user-3', 'user-2'])
    t.same(await names(props([hogql("match(person.properties.email, '^on.@')")])), ['user-1'], 'match()')
    t.same(await names(props([hogql("person.properties.address.city = 'Oslo' and isNull(properties.name.city)")])), ['user-2'], 'a path within an object')
    const bad = await server.api('GET', `${persons}?${props([hogql('properties.plan')])}`)
    t.match([bad.status, bad.body], [400, { type: 'validation_error', attr: 'properties', detail: /^The HogQL filter "properties.plan": The expression is a text/ }])
    const field = await server.api('GET', `${persons}?${props([hogql("distinct_id = 'user-1'")])}`)
    t.match([field.status, field.body], [400, { type: 'validation_error', attr: 'properties', detail: /reads properties, not the fields of events \(event, distinct_id\)/ }])
  })

  t.test("regex and not_regex search a person property's text; a pattern the stores cannot all run answers 400", async (t) => {
    t.same(await names(props([{ key: 'email', operator: 'regex', value: '^on.@example\\.com$' }])), ['user-1'])
    t.same(await names(props([{ key: 'name', operator: 'not_regex', value: '^T', type: 'person' }])), ['user-3', 'user-1'], 'a missing name passes not_regex')
    const bad = await server.api('GET', `${persons}?${props([{ key: 'email', operator: 'regex', value: '(?=o)' }])}`)
    t.match([bad.status, bad.body], [400, { type: 'validation_error', attr: 'properties', detail: /is a regex skylark's stores can't run/ }])
  })

  t.test('groups filter by part of the key, and search their properties', async (t) => {
    const keys = async (query: string) => {
      const res = await server.api('GET', `${groups}?group_type_index=0&${query}`)
      t.equal(res.body.count, res.body.results.length)
      return res.body.results.map((g: any) => g.group_key)
    }
    t.same(await keys('group_key=AC'), ['acme'])
    t.same(await keys('group_key=nope'), [])
    t.same(await keys('search=eta'), ['beta'], 'the name Beta')
    t.same(await keys('search=ACME'), ['acme'])
    t.same(await keys('search=nothing'), [])
  })

  t.test('lists groups of a type; the type index is required', async (t) => {
    const res = await server.api('GET', `${groups}?group_type_index=0`)
    t.equal(res.status, 200)
    t.equal(res.body.count, 2)
    t.match(res.body.results, [
      { group_type_index: 0, group_key: 'beta', group_properties: { name: 'Beta' }, created_at: String },
      { group_type_index: 0, group_key: 'acme', group_properties: { name: 'Acme' } },
    ])
    const paged = await server.api('GET', `${groups}?group_type_index=0&limit=1&offset=1`)
    t.same(paged.body.results.map((g: any) => g.group_key), ['acme'])
    t.same((await server.api('GET', `${groups}?group_type_index=1`)).body.results, [], '$groups never creates a group')
    for (const query of ['', '?group_type_index=', '?group_type_index=abc']) {
      const bad = await server.api('GET', `${groups}${query}`)
      t.equal(bad.status, 400, query || 'no query')
      t.match(bad.body, { type: 'validation_error', code: 'invalid', attr: 'group_type_index' })
    }
  })

  t.test('lists group types with the fields PostHog has, null where skylark keeps none', async (t) => {
    const res = await server.api('GET', `/api/projects/${team}/groups_types/`)
    t.equal(res.status, 200)
    const unknown = { name_singular: null, name_plural: null, detail_dashboard: null, default_columns: null, created_at: null }
    t.same(res.body, [
      { group_type: 'company', group_type_index: 0, ...unknown },
      { group_type: 'project', group_type_index: 1, ...unknown },
    ])
  })

  t.test('persons come newest created first, named by a chosen distinct id before a generated one', async (t) => {
    const res = await server.api('GET', `/api/projects/${namesProject}/persons/`)
    t.same(
      res.body.results.map((p: any) => [p.name, p.distinct_ids]),
      [
        ['cap@example.com', ['x']],
        ['zed', ['zed', generatedId]],
        ['early', ['early']],
      ],
    )
    t.match(res.body.results[0], { type: 'person', last_seen_at: null, matched_recordings: [], value_at_data_point: null })
  })

  t.test('needs person:read and group:read', async (t) => {
    const env = { DATA_DIR: dataDir }
    const projectOnly = JSON.parse((await runCli(['keys', 'create', '--scopes', 'project:read', '--json'], env)).stdout).personal_api_key
    const groupOnly = JSON.parse((await runCli(['keys', 'create', '--scopes', 'group:read', '--json'], env)).stdout).personal_api_key
    const denied = await server.api('GET', persons, undefined, projectOnly)
    t.equal(denied.status, 403)
    t.equal(denied.body.detail, "API key missing required scope 'person:read'")
    t.equal((await server.api('GET', `${groups}?group_type_index=0`, undefined, projectOnly)).status, 403)
    t.equal((await server.api('GET', `/api/projects/${team}/groups_types/`, undefined, projectOnly)).status, 403)
    t.equal((await server.api('GET', `${groups}?group_type_index=0`, undefined, groupOnly)).status, 200)
    t.equal((await server.api('GET', persons, undefined, groupOnly)).status, 403)
    t.equal((await server.request('GET', persons)).status, 401, 'no key at all')
  })

  t.test('a project the key cannot see is 404', async (t) => {
    for (const path of [`/api/projects/${otherProject}/persons/`, `/api/projects/${otherProject}/groups/?group_type_index=0`, '/api/projects/999999/persons/']) {
      const res = await server.api('GET', path)
      t.equal(res.status, 404, path)
    }
  })
})
