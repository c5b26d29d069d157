/**
 * Dynamic cohorts' counts over HTTP, as PostHog's API shows them: calculating after a write, then the count of
 * the persons they hold (behavioural conditions read from the events), the calculation history newest first with
 * PostHog's relative links, and a count skylark can't make recorded as a failed calculation. Static cohorts
 * count their members.
 */
import t from 'tap'
import { uuidv7 } from '../../../src/common/ids.js'
import { seedPersons } from '../../helpers/seed.js'
import { bootstrapDataDir, serverFor, tempDir } from '../../helpers/server.js'
import { readUntil } from '../../helpers/wait.js'
import { waitForEvents } from '../ingestion/suite.js'

t.test('cohort calculations', async (t) => {
  const dataDir = tempDir()
  const boot = bootstrapDataDir(dataDir)
  const team = boot.project_id
  let i = 0
  const event = (distinctId: string, properties: Record<string, unknown>) => {
    const at = Date.parse('2024-05-01T00:00:00Z') + ++i * 1000
    return { uuid: uuidv7(at), event: '$pageview', distinct_id: distinctId, properties, timestamp: at, team_id: team, now: at }
  }
  seedPersons(dataDir, [event('ada', { $set: { plan: 'pro' } }), event('bob', { $set: { plan: 'free' } }), event('cy', { $set: { plan: 'pro' } }), event('dee', {})])
  const server = await serverFor(t, { dataDir })
  const cohorts = `/api/projects/${team}/cohorts/`
  const person = (value: string) => ({ type: 'person', key: 'plan', value, operator: 'exact' })
  const conditions = (...values: unknown[]) => ({ properties: { type: 'AND', values: [{ type: 'AND', values }] } })
  const calculated = (id: number) => readUntil(`cohort ${id} calculated`, async () => (await server.api('GET', `${cohorts}${id}/`)).body, (c) => c.is_calculating === false)
  const history = async (id: number, query = '') => (await server.api('GET', `${cohorts}${id}/calculation_history/${query}`)).body

  t.test('a new dynamic cohort calculates, then shows how many persons it holds', async (t) => {
    const created = await server.api('POST', cohorts, { name: 'Pro', filters: conditions(person('pro')) })
    t.match(created, { status: 201, body: { is_calculating: true, count: null, last_calculation: null } })
    const cohort = await calculated(created.body.id)
    t.match(cohort, { count: 2, errors_calculating: 0, last_error_message: null })
    t.ok(Date.now() - Date.parse(cohort.last_calculation) < 60_000, 'last_calculation is now')
    const listed = (await server.api('GET', cohorts)).body.results.find((c: { id: number }) => c.id === cohort.id)
    t.equal(listed.count, 2, 'in the list too')
    const { count, results, next, previous } = await history(cohort.id)
    t.same([count, next, previous], [1, null, null])
    t.match(results[0], { filters: conditions(person('pro')), count: 2, error: null, is_completed: true, is_successful: true })
    t.ok(results[0].duration_seconds >= 0)
  })

  t.test('a change recalculates with the new filters, and the history pages with relative links', async (t) => {
    const id = (await server.api('POST', cohorts, { name: 'Plan', filters: conditions(person('pro')) })).body.id
    await calculated(id)
    t.equal((await server.api('PATCH', `${cohorts}${id}/`, { filters: conditions(person('free')) })).body.is_calculating, true)
    t.equal((await calculated(id)).count, 1)
    const first = await history(id, '?limit=1')
    t.same([first.count, first.next, first.previous], [2, '?limit=1&offset=1', null])
    t.same(first.results[0].filters, conditions(person('free')), 'newest first')
    const second = await history(id, '?limit=1&offset=1')
    t.same([second.next, second.previous, second.results[0].count], [null, '?limit=1&offset=0', 2])
  })

  t.test('a behavioural cohort counts from the events; one naming a missing action is a failed calculation', async (t) => {
    const batch = [{ event: 'signed_up', distinct_id: 'bob', timestamp: new Date(Date.now() - 86_400_000).toISOString(), properties: {} }]
    t.equal((await server.request('POST', '/batch/', { body: { api_key: boot.project_api_key, batch } })).status, 200)
    await waitForEvents(server, 'event=signed_up&after=2000-01-01T00:00:00Z', 1)
    const performed = (value: string) => ({ type: 'behavioral', key: 'signed_up', value, event_type: 'events', time_value: 30, time_interval: 'day', operator: 'gte', operator_value: 2 })
    const signedUp = (await server.api('POST', cohorts, { name: 'Signed up', filters: conditions(performed('performed_event')) })).body.id
    t.equal((await calculated(signedUp)).count, 1)
    const twice = (await server.api('POST', cohorts, { name: 'Twice', filters: conditions(performed('performed_event_multiple')) })).body.id
    t.equal((await calculated(twice)).count, 0, 'bob signed up once, not twice')
    const sequence = (await server.api('POST', cohorts, { name: 'Then', filters: conditions({ ...performed('performed_event_sequence'), seq_event: 'paid', seq_time_value: 1, seq_time_interval: 'day' }) })).body.id
    t.equal((await calculated(sequence)).count, 0, 'bob signed up and never paid')
    const action = (await server.api('POST', cohorts, { name: 'Did the action', filters: conditions({ ...performed('performed_event'), event_type: 'actions', key: 999_999 }) })).body.id
    const failed = await calculated(action)
    t.match(failed, { count: null, errors_calculating: 1, last_error_message: 'The behavioural condition names action 999999, which does not exist.' })
    t.match((await history(action)).results[0], { count: null, error: /names action 999999/, is_completed: true, is_successful: false })
  })

  t.test('a static cohort counts its members and has no calculations to list; a missing cohort is 404', async (t) => {
    const uuid = (await server.api('GET', `/api/projects/${team}/persons/?distinct_id=dee`)).body.results[0].uuid
    const created = await server.api('POST', cohorts, { name: 'Picked', is_static: true, _create_static_person_ids: [uuid] })
    t.match(created.body, { is_calculating: false, count: 1, last_calculation: String })
    t.same(await history(created.body.id), { results: [], count: 0, next: null, previous: null })
    t.equal((await server.api('GET', `${cohorts}999999/calculation_history/`)).status, 404)
  })
})
