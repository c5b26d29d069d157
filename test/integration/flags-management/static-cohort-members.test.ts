/**
 * Filling a static cohort through the API, as PostHog's: person UUIDs on create, add and remove actions.
 * Flags on the cohort must see the change at once, and `count` must follow it.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { uuidv7 } from '../../../src/common/ids.js'
import { foreignProject, seedPersons } from '../../helpers/seed.js'
import { bootstrapDataDir, serverFor, tempDir } from '../../helpers/server.js'

const refusal = (detail: string) => ({ type: 'validation_error', code: 'invalid', detail, attr: null })

t.test('static cohort members', async (t) => {
  const dataDir = tempDir()
  const boot = bootstrapDataDir(dataDir)
  const team = boot.project_id
  const elsewhere = foreignProject(dataDir)
  const seen = (teamId: number, distinctId: string, i: number) => {
    const at = Date.parse('2024-05-01T00:00:00Z') + i * 1000
    return { uuid: uuidv7(at), event: '$pageview', distinct_id: distinctId, properties: {}, timestamp: at, team_id: teamId, now: at }
  }
  const strangerUuid = seedPersons(
    dataDir,
    [seen(team, 'user-1', 1), seen(team, 'user-2', 2), seen(team, 'user-3', 3), seen(elsewhere, 'stranger', 4)],
    (db) => (db.prepare('SELECT uuid FROM persons WHERE team_id = ?').get(elsewhere) as { uuid: string }).uuid,
  )

  const server = await serverFor(t, { dataDir })
  const cohorts = `/api/projects/${team}/cohorts/`
  const uuidOf = async (distinctId: string): Promise<string> =>
    (await server.api('GET', `/api/projects/${team}/persons/?distinct_id=${distinctId}`)).body.results[0].uuid
  const [one, two, three] = [await uuidOf('user-1'), await uuidOf('user-2'), await uuidOf('user-3')]
  const countOf = async (id: number) => (await server.api('GET', `${cohorts}${id}/`)).body.count
  /** The persons /decide gives the flag to. */
  const members = async (key: string) => {
    const holders: string[] = []
    for (const distinctId of ['user-1', 'user-2', 'user-3']) {
      const res = await server.request('POST', '/decide/?v=3', { body: { token: boot.project_api_key, distinct_id: distinctId } })
      if (res.body.featureFlags[key] === true) holders.push(distinctId)
    }
    return holders
  }

  const created = await server.api('POST', cohorts, {
    name: 'Hand-picked',
    is_static: true,
    _create_static_person_ids: [one, two.toUpperCase(), randomUUID(), strangerUuid, 'not-a-uuid'],
  })
  t.equal(created.status, 201)
  const id = created.body.id as number
  const flag = await server.api('POST', `/api/projects/${team}/feature_flags/`, {
    key: 'hand-picked',
    filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: id }], rollout_percentage: 100 }] },
  })
  t.equal(flag.status, 201)

  t.test('a static cohort created with person UUIDs holds the project persons among them', async (t) => {
    t.equal(created.body.count, 2)
    t.equal(await countOf(id), 2, 'GET shows the count')
    t.same(await members('hand-picked'), ['user-1', 'user-2'])
    t.notOk('_create_static_person_ids' in created.body, 'the ids are write-only')
    const empty = await server.api('POST', cohorts, { name: 'Empty', is_static: true, _create_static_person_ids: [] })
    t.equal(empty.body.count, 0, 'an empty list makes an empty cohort')
    const dynamic = await server.api('POST', cohorts, { name: 'Dynamic', _create_static_person_ids: [one] })
    t.equal(dynamic.body.count, null, 'a dynamic cohort ignores them')
  })

  t.test('add_persons_to_static_cohort adds persons; the count and flags follow', async (t) => {
    const res = await server.api('PATCH', `${cohorts}${id}/add_persons_to_static_cohort/`, { person_ids: [three, one] })
    t.equal(res.status, 200)
    t.same(res.body, { success: true })
    t.equal(await countOf(id), 3)
    t.same(await members('hand-picked'), ['user-1', 'user-2', 'user-3'])
  })

  t.test('remove_person_from_static_cohort removes one person, and again changes nothing', async (t) => {
    for (let i = 0; i < 2; i++) {
      const res = await server.api('PATCH', `${cohorts}${id}/remove_person_from_static_cohort/`, { person_id: one })
      t.same([res.status, res.body], [200, { success: true }])
      t.equal(await countOf(id), 2)
    }
    t.same(await members('hand-picked'), ['user-2', 'user-3'])
  })

  t.test("refusals carry PostHog's messages", async (t) => {
    const dynamic = (await server.api('POST', cohorts, { name: 'Not static' })).body.id
    const add = (cohort: number, body: unknown) => server.api('PATCH', `${cohorts}${cohort}/add_persons_to_static_cohort/`, body)
    const remove = (cohort: number, body: unknown) => server.api('PATCH', `${cohorts}${cohort}/remove_person_from_static_cohort/`, body)
    const cases: Array<[Promise<{ status: number; body: unknown }>, number, unknown]> = [
      [add(dynamic, { person_ids: [one] }), 400, refusal('Can only add users to static cohorts')],
      [add(id, { person_ids: one }), 400, refusal('person_ids must be a list')],
      [add(id, { person_ids: [] }), 400, refusal('person_ids cannot be empty')],
      [add(id, { person_ids: Array.from({ length: 1001 }, () => randomUUID()) }), 400, refusal('List size exceeds limit')],
      [add(id, { person_ids: [randomUUID(), strangerUuid] }), 400, refusal('No valid users to add to cohort')],
      [remove(dynamic, { person_id: one }), 400, refusal('Can only remove users from static cohorts')],
      [remove(id, {}), 400, refusal('person_id is required')],
      [remove(id, { person_id: 5 }), 400, refusal('person_id must be a string')],
      [remove(id, { person_id: 'nope' }), 400, refusal('person_id must be a valid UUID')],
      [remove(id, { person_id: strangerUuid }), 404, { type: 'invalid_request', code: 'not_found', detail: "Person with this UUID does not exist in the cohort's team", attr: null }],
      [add(999999, { person_ids: [one] }), 404, { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null }],
    ]
    for (const [pending, status, body] of cases) {
      const res = await pending
      t.same([res.status, res.body], [status, body])
    }
    t.equal(await countOf(id), 2, 'nothing changed')
  })
})
