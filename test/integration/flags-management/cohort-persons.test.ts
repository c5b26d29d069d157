/**
 * A cohort's persons over HTTP, as PostHog's cohorts/:id/persons/ lists them (newest first, limit and offset
 * without a count, at most 10 distinct ids a person, `search` and `properties` narrowing) and
 * duplicate_as_static_cohort copies them, and cohort filters in the persons list: static members, dynamic conditions evaluated now (nested and negated cohorts
 * included), and a 400 for what skylark can't evaluate.
 */
import t from 'tap'
import { systemClock } from '../../../src/common/clock.js'
import { uuidv7 } from '../../../src/common/ids.js'
import { createManagement } from '../../../src/management/index.js'
import { dataPaths, openManagementDb } from '../../../src/storage/index.js'
import { foreignProject, seedPersons } from '../../helpers/seed.js'
import { bootstrapDataDir, serverFor, tempDir } from '../../helpers/server.js'
import { waitForEvents } from '../ingestion/suite.js'

t.test('cohort persons', async (t) => {
  const dataDir = tempDir()
  const boot = bootstrapDataDir(dataDir)
  const team = boot.project_id
  const elsewhere = foreignProject(dataDir)
  const db = openManagementDb(dataPaths(dataDir))
  const m = createManagement(db, systemClock)
  const owner = m.accounts.userByEmail('admin@skylark.local')!
  const cohortsOnly = m.keys.create({ userId: owner.id, label: 'cohorts only', scopes: ['cohort:read'] }).key
  db.close()

  let i = 0
  const event = (teamId: number, distinctId: string, properties: Record<string, unknown>, name = '$pageview') => {
    const at = Date.parse('2024-05-01T00:00:00Z') + ++i * 1000
    return { uuid: uuidv7(at), event: name, distinct_id: distinctId, properties, timestamp: at, team_id: teamId, now: at }
  }
  // Created in this order: ada first, dee last. Ada also gets 11 anonymous ids, one more than a page shows.
  seedPersons(dataDir, [
    event(team, 'ada', { $set: { plan: 'pro', email: 'ada@example.com' } }),
    event(team, 'bob', { $set: { plan: 'free' } }),
    event(team, 'cy', { $set: { plan: 'pro', email: 'cy@example.com' } }),
    event(team, 'dee', {}),
    event(elsewhere, 'eve', { $set: { plan: 'pro' } }),
    ...Array.from({ length: 11 }, (_, n) => event(team, 'ada', { $anon_distinct_id: `anon-${String(n).padStart(2, '0')}` }, '$identify')),
  ])

  const server = await serverFor(t, { dataDir })
  const base = `/api/projects/${team}`
  const cohort = async (body: Record<string, unknown>) => {
    const res = await server.api('POST', `${base}/cohorts/`, body)
    t.equal(res.status, 201, `cohort ${String(body.name)} created`)
    return res.body.id as number
  }
  const person = (key: string, value: unknown) => ({ type: 'person', key, value, operator: 'exact' })
  const conditions = (...values: unknown[]) => ({ properties: { type: 'AND', values: [{ type: 'AND', values }] } })
  const pro = await cohort({ name: 'Pro', filters: conditions(person('plan', 'pro')) })
  const uuidOf = async (distinctId: string) => (await server.api('GET', `${base}/persons/?distinct_id=${distinctId}`)).body.results[0].uuid as string
  const picked = await cohort({ name: 'Picked', is_static: true, _create_static_person_ids: [await uuidOf('bob'), await uuidOf('dee')] })
  const notPro = await cohort({ name: 'Not pro', filters: conditions({ type: 'cohort', key: 'id', value: pro, negation: true }) })
  const proOrPicked = await cohort({
    name: 'Pro or picked',
    filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ type: 'cohort', key: 'id', value: pro }] }, { type: 'AND', values: [{ type: 'cohort', key: 'id', value: picked }] }] } },
  })
  const performed = (extra: Record<string, unknown> = {}) => ({ type: 'behavioral', key: '$pageview', value: 'performed_event', event_type: 'events', time_value: 30, time_interval: 'day', ...extra })
  const behavioural = await cohort({ name: 'Active', filters: conditions(performed()) })

  const personsOf = (id: number, query = '') => server.api('GET', `${base}/cohorts/${id}/persons/${query}`)
  const names = (res: { body: { results: Array<{ distinct_ids: string[] }> } }) =>
    res.body.results.map((p) => p.distinct_ids.find((d) => !d.startsWith('anon-')) ?? p.distinct_ids[0])

  t.test("a dynamic cohort's persons are those its conditions match now, newest first, in PostHog's person shape", async (t) => {
    const res = await personsOf(pro)
    t.equal(res.status, 200)
    t.same(names(res), ['cy', 'ada'], 'the other project’s pro person is not listed')
    t.same(Object.keys(res.body).sort(), ['next', 'previous', 'results'], 'no count, as PostHog')
    const ada = res.body.results[1]
    t.match(ada, { type: 'person', id: ada.uuid, name: 'ada@example.com', properties: { plan: 'pro' }, is_identified: true, matched_recordings: [], value_at_data_point: null })
    t.equal(ada.distinct_ids.length, 10, 'at most 10 distinct ids of the 12')
    t.same([res.body.next, res.body.previous], [null, null])
  })

  t.test("format=csv exports a cohort's persons as PostHog's cohort export: id, email, name first, the properties and ids in columns", async (t) => {
    const res = await personsOf(pro, '?format=csv')
    t.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8')
    const [header, ...lines] = res.text.trimEnd().split('\r\n')
    t.match(header, /^id,email,name,created_at,properties\.plan,properties\.\$creator_event_uuid,distinct_ids\.0,last_seen_at,distinct_ids\.1,/, "cy's columns, then those ada adds")
    const ada = await uuidOf('ada')
    t.same(lines.map((line) => line.split(',').slice(0, 3)), [[await uuidOf('cy'), 'cy@example.com', 'cy@example.com'], [ada, 'ada@example.com', 'ada@example.com']])
    t.notOk(header!.includes('properties.email'), 'the email has a column of its own')
    t.equal((await personsOf(pro, '?format=csv&limit=1')).text.trimEnd().split('\r\n').length, 2, 'limit still pages')
    const accepted = await server.request('GET', `${base}/cohorts/${pro}/persons/`, { headers: { authorization: `Bearer ${boot.personal_api_key}`, accept: 'text/csv' } })
    t.equal(accepted.text, res.text, 'Accept: text/csv asks the same')
    t.equal((await personsOf(pro, '?format=xml')).status, 404, 'a format with no renderer, as DRF')
    const listed = await server.api('GET', `${base}/persons/?format=csv&search=ada`)
    t.match(listed.text, new RegExp(`^type,id,uuid,name,distinct_ids\\.0,.*\\r\\nperson,${ada},${ada},ada@example\\.com,ada,`), 'the persons list as CSV: its JSON flattened')
  })

  t.test("a static cohort's persons are its members; nested and negated cohorts read as PostHog's", async (t) => {
    t.same(names(await personsOf(picked)), ['dee', 'bob'])
    t.same(names(await personsOf(notPro)), ['dee', 'bob'], 'negation: the persons outside the cohort, one without the property too')
    t.same(names(await personsOf(proOrPicked)), ['dee', 'cy', 'bob', 'ada'])
    t.same(names(await personsOf(await cohort({ name: 'No criteria yet' }))), [], 'a dynamic cohort without criteria holds no one')
  })

  t.test('limit and offset page without a count: next while a page is full, previous once a whole page lies before', async (t) => {
    const first = await personsOf(proOrPicked, '?limit=2')
    t.same(names(first), ['dee', 'cy'])
    t.equal(first.body.previous, null)
    const next = new URL(first.body.next)
    t.same([next.searchParams.get('limit'), next.searchParams.get('offset')], ['2', '2'])
    const second = await server.api('GET', `${next.pathname}${next.search}`)
    t.same(names(second), ['bob', 'ada'])
    t.equal(new URL(second.body.previous).searchParams.get('offset'), '0')
    t.ok(second.body.next, 'a full page has a next link, as PostHog')
    const past = await personsOf(proOrPicked, '?limit=2&offset=4')
    t.same([past.body.results, past.body.next], [[], null])
    t.equal((await personsOf(proOrPicked, '?limit=3&offset=1')).body.previous, null, 'less than a page before: no previous, as PostHog')
  })

  t.test('search and properties narrow the cohort as they narrow the persons list', async (t) => {
    t.same(names(await personsOf(pro, '?search=CY@')), ['cy'])
    const email = encodeURIComponent(JSON.stringify([{ key: 'email', value: 'ada@example.com' }]))
    t.same(names(await personsOf(proOrPicked, `?properties=${email}`)), ['ada'])
    const inPicked = encodeURIComponent(JSON.stringify([{ type: 'cohort', key: 'id', value: picked }]))
    t.same(names(await personsOf(proOrPicked, `?properties=${inPicked}`)), ['dee', 'bob'])
  })

  t.test('the persons list takes cohort filters: in, not_in, and a 400 for a cohort that does not exist', async (t) => {
    const list = (filters: unknown) => server.api('GET', `${base}/persons/?properties=${encodeURIComponent(JSON.stringify(filters))}`)
    const inPro = await list([{ type: 'cohort', key: 'id', value: pro }])
    t.same([inPro.body.count, names(inPro)], [2, ['cy', 'ada']])
    t.same(names(await list([{ type: 'cohort', key: 'id', value: String(pro), operator: 'not_in' }])), ['dee', 'bob'], 'a numeric text names the cohort too')
    t.same(names(await list({ type: 'OR', values: [{ type: 'cohort', key: 'id', value: picked }, { key: 'email', value: 'cy@example.com' }] })), ['dee', 'cy', 'bob'])
    t.match(await list([{ type: 'cohort', key: 'id', value: 999_999 }]), { status: 400, body: { type: 'validation_error', detail: 'The cohort filter names cohort 999999, which does not exist.' } })
    t.match(await list([{ type: 'group', key: 'id', value: 1 }]), { status: 400, body: { detail: /filters on person or hogql or cohort properties only/ } })
  })

  t.test('a static cohort takes an uploaded CSV of persons on create and update, as a form, as PostHog\'s', async (t) => {
    const upload = async (method: string, path: string, fields: Record<string, string>, csv?: string | Uint8Array) => {
      const form = new FormData()
      for (const [name, value] of Object.entries(fields)) form.append(name, value)
      if (csv !== undefined) form.append('csv', new Blob([csv], { type: 'text/csv' }), 'persons.csv')
      const request = new Request('http://upload/', { method, body: form })
      const rawBody = Buffer.from(await request.arrayBuffer())
      return server.request(method, path, { rawBody, headers: { authorization: `Bearer ${boot.personal_api_key}`, 'content-type': request.headers.get('content-type')! } })
    }
    const created = await upload('POST', `${base}/cohorts/`, { name: 'Uploaded', is_static: 'true' }, 'ada\nbob\nnobody\n')
    t.equal(created.status, 201, created.text)
    t.match(created.body, { name: 'Uploaded', is_static: true, count: 2 })
    t.same(names(await personsOf(created.body.id)), ['bob', 'ada'], 'the distinct ids of two persons; an unknown one skipped')
    const byEmail = await upload('PATCH', `${base}/cohorts/${created.body.id}/`, { description: 'and cy' }, 'name,Email\nCy,cy@example.com\n')
    t.match([byEmail.status, byEmail.body], [200, { description: 'and cy', count: 3 }], 'an email column adds by the email property')
    const byId = await upload('PATCH', `${base}/cohorts/${created.body.id}/`, {}, `person_id\n${(await uuidOf('dee')).toUpperCase()}\n`)
    t.equal(byId.body.count, 4, 'a person_id column adds by uuid')
    t.same(names(await personsOf(created.body.id)), ['dee', 'cy', 'bob', 'ada'])
    const before = (await server.api('GET', `${base}/cohorts/?limit=1`)).body.count
    t.match(await upload('POST', `${base}/cohorts/`, { name: 'Bad', is_static: 'true' }, 'name,plan\nAda,pro\n'), { status: 400, body: { type: 'validation_error', attr: 'csv', detail: /Found columns: name, plan$/ } })
    t.match(await upload('POST', `${base}/cohorts/`, { name: 'Bad', is_static: 'true' }, new Uint8Array([0xff, 0x0a])), { status: 400, body: { attr: 'csv', detail: /encoding is not supported/ } })
    t.match(await upload('POST', `${base}/cohorts/`, { name: 'Bad', is_static: 'maybe' }), { status: 400, body: { attr: 'is_static', detail: 'Must be a valid boolean.' } })
    t.equal((await server.api('GET', `${base}/cohorts/?limit=1`)).body.count, before, 'a refused upload creates nothing')
    const dynamic = await upload('POST', `${base}/cohorts/`, { name: 'From a form', filters: JSON.stringify(conditions(person('plan', 'pro'))) })
    t.match([dynamic.status, dynamic.body], [201, { is_static: false, filters: conditions(person('plan', 'pro')) }], 'JSON fields are read from their text')
  })

  t.test('duplicate_as_static_cohort makes a static cohort of the persons a dynamic cohort matches now', async (t) => {
    const res = await server.api('GET', `${base}/cohorts/${proOrPicked}/duplicate_as_static_cohort/`)
    t.equal(res.status, 200)
    t.match(res.body, { name: 'Pro or picked (static copy)', is_static: true, count: 4, deleted: false })
    t.not(res.body.id, proOrPicked)
    t.same(names(await personsOf(res.body.id)), ['dee', 'cy', 'bob', 'ada'])
    const flag = await server.api('POST', `${base}/feature_flags/`, { key: 'copied', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: res.body.id }], rollout_percentage: 100 }] } })
    t.equal(flag.status, 201, 'a flag may target the copy')
    const decide = await server.request('POST', '/decide/?v=3', { body: { token: boot.project_api_key, distinct_id: 'anon-03' } })
    t.equal(decide.body.featureFlags.copied, true, "the copy holds persons, so each of their distinct ids")
    t.match(await server.api('GET', `${base}/cohorts/${picked}/duplicate_as_static_cohort/`), { status: 400, body: { detail: 'Cannot duplicate a static cohort as a static cohort.' } })
    const copy = await server.api('GET', `${base}/cohorts/${behavioural}/duplicate_as_static_cohort/`)
    t.match(copy.body, { name: 'Active (static copy)', count: 0 }, 'a behavioural cohort is copied too (no events yet)')
    t.equal((await server.api('GET', `${base}/cohorts/999999/duplicate_as_static_cohort/`)).status, 404)
  })

  t.test("used_in lists the live flags that evaluate a cohort, through other cohorts too, and the cohorts naming it", async (t) => {
    const flag = (key: string, cohortId: number, extra: Record<string, unknown> = {}) =>
      server.api('POST', `${base}/feature_flags/`, { key, name: `Flag ${key}`, filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohortId }], rollout_percentage: 100 }] }, ...extra })
    const through = await flag('through-not-pro', notPro)
    const off = await flag('off-on-pro', pro, { active: false })
    const gone = await flag('gone-on-pro', pro)
    t.equal((await server.api('PATCH', `${base}/feature_flags/${gone.body.id}/`, { deleted: true })).status, 200)
    const used = await server.api('GET', `${base}/cohorts/${pro}/used_in/`)
    t.equal(used.status, 200)
    t.same(used.body, {
      feature_flags: { results: [{ id: through.body.id, key: 'through-not-pro', name: 'Flag through-not-pro' }, { id: off.body.id, key: 'off-on-pro', name: 'Flag off-on-pro' }], total: 2, has_more: false },
      insights: { results: [], total: 0, has_more: false },
      cohorts: { results: [{ id: notPro, name: 'Not pro' }, { id: proOrPicked, name: 'Pro or picked' }], total: 2, has_more: false },
    }, 'an inactive flag counts, a deleted one does not')
    t.same((await server.api('GET', `${base}/cohorts/${picked}/used_in/`)).body.feature_flags.total, 0, 'a flag on a cohort that does not name it')
    t.equal((await server.api('GET', `${base}/cohorts/999999/used_in/`)).status, 404)
  })

  t.test("a performed_event cohort holds the persons who sent the event in its window, by any of their distinct ids", async (t) => {
    const day = 86_400_000
    const pageview = (distinctId: string, daysAgo: number, $browser: string, event = '$pageview') => ({ event, distinct_id: distinctId, timestamp: new Date(Date.now() - daysAgo * day).toISOString(), properties: { $browser } })
    const batch = [pageview('anon-03', 1, 'Firefox'), pageview('ada', 3, 'Chrome'), pageview('bob', 2, 'Chrome'), pageview('cy', 40, 'Firefox'), pageview('dee', 1, 'Firefox', 'purchase')]
    t.equal((await server.request('POST', '/batch/', { body: { api_key: boot.project_api_key, batch } })).status, 200)
    await waitForEvents(server, 'after=2000-01-01T00:00:00Z', batch.length)
    t.same(names(await personsOf(behavioural)), ['bob', 'ada'], "ada through an anonymous id; cy's pageview is 40 days old")
    const onFirefox = await cohort({ name: 'Active on Firefox', filters: conditions(performed({ event_filters: [{ key: '$browser', value: 'Firefox', type: 'event', operator: 'exact' }] })) })
    t.same(names(await personsOf(onFirefox)), ['ada'])
    const twoMonths = await cohort({ name: 'Two months', filters: conditions(performed({ time_value: undefined, time_interval: undefined, explicit_datetime: '-60d' })) })
    t.same(names(await personsOf(twoMonths)), ['cy', 'bob', 'ada'])
    const inactive = await cohort({ name: 'Inactive', filters: conditions(performed({ negation: true })) })
    t.same(names(await personsOf(inactive)), ['dee', 'cy'], 'negated: the persons who did not')
    const copy = await server.api('GET', `${base}/cohorts/${behavioural}/duplicate_as_static_cohort/`)
    t.same([copy.body.count, names(await personsOf(copy.body.id))], [2, ['bob', 'ada']])
  })

  t.test("a performed_event_multiple cohort holds the persons whose count of the event in its window compares so, over all their ids", async (t) => {
    const times = async (operator: string, operator_value: number, negation = false) =>
      names(await personsOf(await cohort({ name: `${operator} ${operator_value}`, filters: conditions(performed({ value: 'performed_event_multiple', operator, operator_value, negation })) })))
    t.same(await times('gte', 2), ['ada'], "ada's two pageviews were sent by two of her ids")
    t.same(await times('exact', 2), ['ada'])
    t.same(await times('lte', 1), ['bob'], "as PostHog's: a person who sent none is not counted (dee), nor one whose pageview is older (cy)")
    t.same(await times('lt', 1), [])
    t.same(await times('gte', 2, true), ['dee', 'cy', 'bob'], 'negated: everyone else')
    t.match(await personsOf(await cohort({ name: 'Between', filters: conditions(performed({ value: 'performed_event_multiple', operator: 'between', operator_value: 1 })) })), { status: 400, body: { detail: 'count_operator must be gte, lte, eq, or None' } })
  })

  t.test('first-time, stopped, restarted and regular behaviour read each person’s logins over all its ids', async (t) => {
    const day = 86_400_000
    const login = (distinctId: string, daysAgo: number) => ({ event: 'logged_in', distinct_id: distinctId, timestamp: new Date(Date.now() - daysAgo * day).toISOString(), properties: {} })
    // ada logged in long ago (by an anonymous id) and again yesterday; bob and dee stopped; cy is new, weekly.
    const batch = [login('anon-05', 60), login('ada', 1), login('bob', 20), login('cy', 8), login('cy', 2), login('dee', 50), login('dee', 10)]
    t.equal((await server.request('POST', '/batch/', { body: { api_key: boot.project_api_key, batch } })).status, 200)
    await waitForEvents(server, 'event=logged_in&after=2000-01-01T00:00:00Z', batch.length)
    const who = async (extra: Record<string, unknown>) => {
      const id = await cohort({ name: String(extra.value), filters: conditions(performed({ key: 'logged_in', ...extra })) })
      return names(await personsOf(id))
    }
    const recently = { seq_time_value: 7, seq_time_interval: 'day' }
    t.same(await who({ value: 'performed_event_first_time' }), ['cy', 'bob'], 'their first login within 30 days')
    t.same(await who({ value: 'stopped_performing_event', ...recently }), ['dee', 'bob'], 'in the 30 days, none in the last 7')
    t.same(await who({ value: 'restarted_performing_event', ...recently }), ['ada'], 'before the 30 days, none until the last 7, then again')
    t.same(await who({ value: 'stopped_performing_event', ...recently, negation: true }), ['cy', 'ada'])
    t.same(await who({ value: 'performed_event_regularly', time_value: 1, time_interval: 'week', total_periods: 3, min_periods: 2, operator: 'gte', operator_value: 1 }), ['cy'], 'in two of the last three weeks')
  })

  t.test('a sequence cohort holds the persons who sent one event and then the other within its window, by any of their ids; actions too', async (t) => {
    const hour = 3_600_000
    const sent = (event: string, distinctId: string, hoursAgo: number) => ({ event, distinct_id: distinctId, timestamp: new Date(Date.now() - hoursAgo * hour).toISOString(), properties: {} })
    // ada saw pricing anonymously and upgraded an hour later; bob upgraded 3 days after; cy upgraded first; dee looked twice.
    const batch = [sent('viewed_pricing', 'anon-07', 73), sent('upgraded', 'ada', 72), sent('viewed_pricing', 'bob', 120), sent('upgraded', 'bob', 48), sent('upgraded', 'cy', 96), sent('viewed_pricing', 'cy', 72), sent('viewed_pricing', 'dee', 10), sent('viewed_pricing', 'dee', 9)]
    t.equal((await server.request('POST', '/batch/', { body: { api_key: boot.project_api_key, batch } })).status, 200)
    await waitForEvents(server, `event=viewed_pricing&after=2000-01-01T00:00:00Z`, 5)
    await waitForEvents(server, `event=upgraded&after=2000-01-01T00:00:00Z`, 3)
    const who = async (extra: Record<string, unknown>) => {
      const id = await cohort({ name: 'Upgraded after pricing', filters: conditions(performed({ key: 'viewed_pricing', value: 'performed_event_sequence', seq_event: 'upgraded', seq_time_value: 1, seq_time_interval: 'day', ...extra })) })
      return names(await personsOf(id))
    }
    t.same(await who({}), ['ada'], "within a day: ada, whose pricing view came from her anonymous id")
    t.same(await who({ seq_time_value: 1, seq_time_interval: 'week' }), ['bob', 'ada'], 'within a week: bob too; cy upgraded before she looked')
    t.same(await who({ negation: true }), ['dee', 'cy', 'bob'], 'negated: the other persons')
    t.same(await who({ seq_event: 'viewed_pricing', seq_time_value: 2, seq_time_interval: 'hour' }), ['dee'], 'one event twice within two hours')
    t.same(await who({ time_value: 3, time_interval: 'day', seq_time_value: 1, seq_time_interval: 'week' }), [], "in the last 3 days only ada's upgrade falls, without her view")
    // The same read through an action: its steps' events, as the action matches them.
    const action = await server.api('POST', `${base}/actions/`, { name: 'Upgraded', steps: [{ event: 'upgraded' }] })
    t.equal(action.status, 201, action.text)
    t.same(await who({ seq_event_type: 'actions', seq_event: action.body.id }), ['ada'], 'a pricing view, then the action')
    const upgraders = await cohort({ name: 'Did the action', filters: conditions(performed({ event_type: 'actions', key: action.body.id })) })
    t.same(names(await personsOf(upgraders)), ['cy', 'bob', 'ada'], 'performed the action in 30 days')
  })

  t.test('what skylark cannot evaluate is a 400, a missing cohort a 404, and both scopes are needed', async (t) => {
    const sequence = await cohort({ name: 'Then', filters: conditions({ ...performed(), value: 'performed_event_sequence', seq_event_type: 'actions', seq_event: 999_999, seq_time_value: 7, seq_time_interval: 'day' }) })
    t.match(await personsOf(sequence), { status: 400, body: { type: 'validation_error', detail: 'The behavioural condition names action 999999, which does not exist.' } })
    const inList = await server.api('GET', `${base}/persons/?properties=${encodeURIComponent(JSON.stringify([{ type: 'cohort', key: 'id', value: behavioural }]))}`)
    t.same([inList.body.count, names(inList)], [2, ['bob', 'ada']], 'the persons list reads a behavioural cohort filter from the events too')
    t.equal((await personsOf(999_999)).status, 404)
    const cohortsOnlyKey = await server.api('GET', `${base}/cohorts/${pro}/persons/`, undefined, cohortsOnly)
    t.match(cohortsOnlyKey, { status: 403, body: { code: 'permission_denied', detail: "API key missing required scope 'person:read'" } })
  })
})
