// PostHog's `/api/environments/:team_id/` paths of its team-scoped routes (events, persons, groups, dashboards,
// ingestion warnings) answer as their `/api/projects/:id/` paths do; project-scoped routes have no such path.
import t from 'tap'
import { serverFor } from '../../helpers/server.js'
import { readUntil } from '../../helpers/wait.js'

t.test('environment paths answer as the project paths of the same routes', async (t) => {
  const server = await serverFor(t)
  const id = server.boot.project_id
  const batch = [
    { event: 'signed up', properties: { distinct_id: 'env-user', $set: { plan: 'pro' } } },
    { event: '$groupidentify', properties: { distinct_id: 'env-user', $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } } },
  ]
  t.equal((await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })).status, 200)
  await readUntil('the events are stored', () => server.api('GET', `/api/projects/${id}/events/?distinct_id=env-user`), (res) => res.body?.results?.length === 2)

  for (const path of ['events/?distinct_id=env-user', 'persons/?distinct_id=env-user', 'groups/?group_type_index=0', 'ingestion_warnings/']) {
    const project = await server.api('GET', `/api/projects/${id}/${path}`)
    const environment = await server.api('GET', `/api/environments/${id}/${path}`)
    t.equal(environment.status, 200, `${path}: ${environment.text}`)
    // Pagination links name the path they were asked on; the rest is the same.
    const strip = (body: unknown) => JSON.parse(JSON.stringify(body).replaceAll('/api/environments/', '/api/projects/'))
    t.same(strip(environment.body), project.body, path)
  }
  const person = (await server.api('GET', `/api/environments/@current/persons/?distinct_id=env-user`)).body.results[0]
  t.match(person, { distinct_ids: ['env-user'], properties: { plan: 'pro' } }, '@current names the key’s project here too')

  const patched = await server.api('PATCH', `/api/environments/${id}/persons/${person.uuid}/`, { properties: { seats: 3 } })
  t.equal(patched.status, 202, 'writes take the environment path too')

  t.equal((await server.api('GET', `/api/environments/${id}/feature_flags/`)).status, 404, 'flags are project-scoped in PostHog: no environment path')
  const missing = await server.api('GET', `/api/environments/${id + 1000}/events/`)
  t.match(missing, { status: 404, body: { type: 'invalid_request', code: 'not_found' } }, 'a project out of sight is 404')
})
