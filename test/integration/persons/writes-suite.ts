/**
 * The persons and groups APIs' writes (persons: PUT/PATCH, DELETE, bulk_delete, update_property, delete_property;
 * groups: create, update_property, delete_property) against the running server, once per event store: what the
 * persons and groups APIs, /decide and the events API see afterwards, in order after the events sent before, and
 * a deletion acknowledged just before a kill -9 carried out after the restart.
 */
import type { Test } from 'tap'
import { projectDistinctId } from '../../../src/http/routes/group-writes.js'
import { startServer, tempDir } from '../../helpers/server.js'
import { readUntil as until } from '../../helpers/wait.js'
import { waitForEvents, type StoreSetup } from '../ingestion/suite.js'
import { personsServer } from './persons-server.js'

export function personWritesSuite(t: Test, setup: StoreSetup): void {
  const { server, base, capture, personOf, waitPerson } = personsServer(t, setup)
  const eventsOf = async (distinctId: string) => (await server().api('GET', `${base()}/events/?distinct_id=${encodeURIComponent(distinctId)}&limit=1000`)).body.count as number
  const decide = async (distinctId: string, flag = 'pro-plan', groups?: Record<string, string>) =>
    (await server().request('POST', '/decide/?v=3', { body: { api_key: server().boot.project_api_key, distinct_id: distinctId, groups } })).body.featureFlags?.[flag]

  t.test('a person is read by its uuid in any form PostHog takes, as the list answers it', async (t) => {
    await capture([{ event: '$identify', properties: { distinct_id: 'reader', $anon_distinct_id: 'reader-anon', $set: { email: 'r@example.com' } } }])
    const listed = await waitPerson('reader', (p) => p?.distinct_ids.length === 2)
    const one = await server().api('GET', `${base()}/persons/${listed.uuid}/`)
    t.equal(one.status, 200)
    t.same(one.body, listed)
    for (const form of [listed.uuid.replaceAll('-', ''), listed.uuid.toUpperCase(), `{${listed.uuid}}`, `urn:uuid:${listed.uuid}`]) {
      t.same((await server().api('GET', `${base()}/persons/${encodeURIComponent(form)}/`)).body, listed, form)
    }
    const unknown = await server().api('GET', `${base()}/persons/00000000-0000-4000-8000-000000000000/`)
    t.match(unknown, { status: 404, body: { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null } })
    t.match(await server().api('GET', `${base()}/persons/42/`), { status: 404, body: { code: 'not_found' } }, 'a row id names no person skylark shows')
    t.match(await server().api('DELETE', `${base()}/persons/reader/`), {
      status: 400,
      body: { type: 'validation_error', code: 'invalid_input', attr: null, detail: /If you are using a distinctId, please use \/persons\?distinct_id=reader instead\./ },
    })
  })

  t.test('update_property and delete_property change what the persons API and /decide see', async (t) => {
    const flag = await server().api('POST', `${base()}/feature_flags/`, {
      key: 'pro-plan',
      filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }], rollout_percentage: 100 }] },
    })
    t.equal(flag.status, 201)
    await capture([{ event: '$identify', properties: { distinct_id: 'paula', $set: { plan: 'free', email: 'p@example.com' } } }])
    const paula = await waitPerson('paula')
    t.equal(await decide('paula'), false)

    const set = await server().api('POST', `${base()}/persons/${paula.uuid}/update_property/`, { key: 'plan', value: 'pro' })
    t.equal(set.status, 202)
    t.equal(set.text, '')
    await waitPerson('paula', (p) => p?.properties.plan === 'pro')
    t.equal(await until('/decide to see plan pro', () => decide('paula'), (v) => v === true), true)

    const unset = await server().api('POST', `${base()}/persons/${paula.uuid}/delete_property/`, { $unset: 'plan' })
    t.same([unset.status, unset.body], [201, { success: true }])
    const after = await waitPerson('paula', (p) => p !== null && !('plan' in p.properties))
    t.equal(after.properties.email, 'p@example.com', 'the other properties stay')
    t.equal(await until('/decide to see no plan', () => decide('paula'), (v) => v === false), false)
    t.equal(await until('both events stored', () => eventsOf('paula'), (n) => n === 3), 3, '$identify, $set and $delete_person_property are events of the person')

    t.equal((await server().api('POST', `${base()}/persons/${paula.uuid}/update_property/`, { key: 'trial', value: null })).status, 202, 'a null value is a value, as PostHog now reads it')
    await waitPerson('paula', (p) => p !== null && p.properties.trial === null)
    t.match(await server().api('POST', `${base()}/persons/${paula.uuid}/update_property/`, { key: 'plan' }), { status: 400, body: { code: 'required', attr: 'value' } })
    t.match(await server().api('POST', `${base()}/persons/${paula.uuid}/update_property/`, { value: 1 }), { status: 400, body: { code: 'required', attr: 'key' } })
    t.match(await server().api('POST', `${base()}/persons/${paula.uuid}/delete_property/`, {}), { status: 400, body: { code: 'required', attr: '$unset' } })
  })

  t.test('PUT and PATCH set the given properties after the events sent before, keep the others, and answer 202', async (t) => {
    const flag = await server().api('POST', `${base()}/feature_flags/`, {
      key: 'team-plan',
      filters: { groups: [{ properties: [{ key: 'plan', value: 'team', type: 'person', operator: 'exact' }], rollout_percentage: 100 }] },
    })
    t.equal(flag.status, 201)
    await capture([{ event: '$identify', properties: { distinct_id: 'patty', $set: { plan: 'free', email: 'pat@example.com' } } }])
    const patty = await waitPerson('patty')
    // Events still in flight when the change is asked for: it lands after them.
    await capture(Array.from({ length: 200 }, (_, i) => ({ event: 'tick', properties: { distinct_id: 'patty', i, $set: { plan: 'free' } } })))
    const patched = await server().api('PATCH', `${base()}/persons/${patty.uuid}/`, { properties: { plan: 'team', seats: 3 } })
    t.same([patched.status, patched.text], [202, ''])
    await waitForEvents(server(), 'distinct_id=patty&event=tick', 200)
    const after = await waitPerson('patty', (p) => p?.properties.seats === 3)
    t.equal(after.properties.plan, 'team', 'the change made after the events wins over their $set')
    t.equal(await until('/decide to see plan team', () => decide('patty', 'team-plan'), (v) => v === true), true)

    const put = await server().api('PUT', `${base()}/persons/${patty.uuid}/`, { properties: { seats: 5 } })
    t.same([put.status, put.text], [202, ''])
    const replaced = await waitPerson('patty', (p) => p?.properties.seats === 5)
    t.match(replaced.properties, { plan: 'team', email: 'pat@example.com' }, 'PUT unsets nothing, as PostHog')
    t.equal(await decide('patty', 'team-plan'), true)
    const sets = await waitForEvents(server(), 'distinct_id=patty&event=$set', 2)
    t.same(sets.map((e: any) => e.properties.$set).reverse(), [{ plan: 'team', seats: 3 }, { seats: 5 }], 'each is a $set event of the person')

    t.match(await server().api('PATCH', `${base()}/persons/${patty.uuid}/`, {}), { status: 400, body: { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'properties' } })
    t.match(await server().api('PUT', `${base()}/persons/${patty.uuid}/`, { properties: null }), { status: 400, body: { code: 'required', attr: 'properties' } })
    const ghost = '00000000-0000-4000-8000-000000000000'
    t.match(await server().api('PATCH', `${base()}/persons/${ghost}/`, { properties: { a: 1 } }), { status: 404, body: { code: 'not_found' } })
    t.match(await server().api('PATCH', `${base()}/persons/${ghost}/`, {}), { status: 400, body: { attr: 'properties' } }, 'properties are checked first, as PostHog does')
  })

  t.test('groups: create, update_property and delete_property write through ingestion, after the events sent before', async (t) => {
    const flag = await server().api('POST', `${base()}/feature_flags/`, {
      key: 'enterprise',
      filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'plan', value: 'enterprise', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }] },
    })
    t.equal(flag.status, 201)
    const find = async (key: string) => {
      const res = await server().api('GET', `${base()}/groups/find/?group_type_index=0&group_key=${encodeURIComponent(key)}`)
      return res.status === 200 ? res.body : null
    }
    const waitGroup = (key: string, ok: (g: any) => boolean) => until(`group ${key}`, () => find(key), ok)
    const enterprise = (key: string) => decide('someone', 'enterprise', { company: key })
    await capture([{ event: '$groupidentify', properties: { distinct_id: 'gina', $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme', plan: 'free' } } }])
    await waitGroup('acme', (g) => g !== null)
    const groups = `${base()}/groups`

    // Create: refusals first, then a new group of the existing type.
    t.match(await server().api('POST', `${groups}/`, { group_type_index: 0, group_key: 'acme' }), {
      status: 400,
      body: { type: 'validation_error', code: 'invalid', detail: 'A group with this key already exists', attr: 'detail' },
    })
    t.match(await server().api('POST', `${groups}/`, { group_type_index: 3, group_key: 'x' }), { status: 404, body: { code: 'not_found' } }, 'a type the project lacks')
    t.match(await server().api('POST', `${groups}/`, { group_type_index: 0 }), { status: 400, body: { code: 'required', attr: 'group_key' } })
    t.match(await server().api('POST', `${groups}/`, { group_type_index: 'x', group_key: 'y' }), { status: 400, body: { code: 'invalid', attr: 'group_type_index' } })
    t.match(await server().api('POST', `${groups}/`, { group_type_index: 0, group_key: 'y', group_properties: [1] }), { status: 400, body: { code: 'not_a_dict', attr: 'group_properties' } })
    const created = await server().api('POST', `${groups}/`, { group_type_index: '0', group_key: '  globex ', group_properties: { plan: 'enterprise', seats: 40 } })
    t.equal(created.status, 201)
    t.same(Object.keys(created.body), ['group_type_index', 'group_key', 'group_properties', 'created_at'])
    t.match(created.body, { group_type_index: 0, group_key: 'globex', group_properties: { plan: 'enterprise', seats: 40 } })
    const globex = await waitGroup('globex', (g) => g !== null)
    t.same(globex, { ...created.body, notebook: null }, 'the groups API shows the group as created')
    t.equal(await until('/decide to see globex on enterprise', () => enterprise('globex'), (v) => v === true), true)
    const listed = (await server().api('GET', `${groups}/?group_type_index=0&group_key=globex`)).body.results
    t.same(listed, [created.body])

    // update_property after a burst of the clients' own $groupidentify: the change lands after them.
    await capture(Array.from({ length: 200 }, (_, i) => ({ event: '$groupidentify', properties: { distinct_id: `member-${i}`, $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'free', i } } })))
    const updated = await server().api('POST', `${groups}/update_property/?group_type_index=0&group_key=acme`, { key: 'plan', value: 'enterprise' })
    t.equal(updated.status, 200)
    t.match(updated.body, { group_type_index: 0, group_key: 'acme', group_properties: { plan: 'enterprise', name: 'Acme' } })
    await waitGroup('acme', (g) => g?.group_properties.i === 199)
    t.equal((await waitGroup('acme', (g) => g?.group_properties.plan === 'enterprise')).group_properties.plan, 'enterprise', 'the change made after the events wins')
    t.equal(await until('/decide to see acme on enterprise', () => enterprise('acme'), (v) => v === true), true)
    t.same((await server().api('GET', `${groups}/property_values/?group_type_index=0&key=plan`)).body.results, [{ name: 'enterprise', count: 2 }])

    const removed = await server().api('POST', `${groups}/delete_property/?group_type_index=0&group_key=acme`, { $unset: 'plan' })
    t.equal(removed.status, 200)
    t.notOk('plan' in removed.body.group_properties, 'answered as it becomes')
    const without = await waitGroup('acme', (g) => g !== null && !('plan' in g.group_properties))
    t.equal(without.group_properties.name, 'Acme', 'the other properties stay')
    t.equal(await until('/decide to see acme off enterprise', () => enterprise('acme'), (v) => v === false), false)

    // Refusals of the property writes.
    const update = (query: string, body: unknown) => server().api('POST', `${groups}/update_property/${query}`, body)
    t.match(await update('?group_type_index=0&group_key=nobody', { key: 'a', value: 1 }), { status: 404, body: { code: 'not_found' } })
    t.match(await update('?group_type_index=0', { key: 'a', value: 1 }), { status: 400, body: { detail: 'This query parameter is required.', attr: 'group_key' } })
    t.match(await update('?group_type_index=0&group_key=acme', { value: 1 }), { status: 400, body: { detail: 'This field is required.', attr: 'key' } })
    t.match(await update('?group_type_index=0&group_key=acme', { key: 'a', value: null }), { status: 400, body: { detail: 'This field is required.', attr: 'value' } })
    const del = (body: unknown) => server().api('POST', `${groups}/delete_property/?group_type_index=0&group_key=acme`, body)
    t.match(await del({ $unset: 'plan' }), { status: 400, body: { detail: "Property 'plan' does not exist on this group.", attr: '$unset' } })
    t.match(await del({ $unset: 1 }), { status: 400, body: { detail: 'This field is required and must be a string (the property name to delete).', attr: '$unset' } })

    // The writes are personless events of the project's own distinct id, as PostHog's capture_internal sends them.
    const own = await waitForEvents(server(), `distinct_id=${projectDistinctId(server().boot.project_id)}&orderBy=${encodeURIComponent('["timestamp"]')}`, 3)
    t.same(own.map((e: any) => e.event), ['$groupidentify', '$groupidentify', '$delete_group_property'])
    t.match(own[2].properties, { $group_type: 'company', $group_key: 'acme', $group_unset: ['plan'], $process_person_profile: false })
    t.equal(await personOf(projectDistinctId(server().boot.project_id)), null, 'no person is made for it')
  })

  t.test('DELETE removes the person everywhere; with delete_events its events too; new events make a new person', async (t) => {
    await capture([
      { event: '$pageview', properties: { distinct_id: 'alice-anon' } },
      { event: '$identify', properties: { distinct_id: 'alice', $anon_distinct_id: 'alice-anon', $set: { plan: 'pro' } } },
      { event: '$pageview', properties: { distinct_id: 'alice' } },
      { event: '$pageview', properties: { distinct_id: 'bob', $set: { plan: 'pro' } } },
      { event: '$pageview', properties: { distinct_id: 'bob' } },
    ])
    const alice = await waitPerson('alice', (p) => p?.distinct_ids.length === 2)
    const bob = await waitPerson('bob')
    await waitForEvents(server(), 'distinct_id=alice', 2)
    await waitForEvents(server(), 'distinct_id=bob', 2)
    t.equal(await until('/decide to see alice', () => decide('alice'), (v) => v === true), true)

    const gone = await server().api('DELETE', `${base()}/persons/${alice.uuid}/?delete_events=true`)
    t.same([gone.status, gone.text], [202, ''])
    await until('alice gone', () => server().api('GET', `${base()}/persons/${alice.uuid}/`), (r) => r.status === 404)
    t.equal(await personOf('alice-anon'), null, 'every distinct id is free')
    t.equal(await until('/decide to forget alice', () => decide('alice'), (v) => v === false), false)
    t.equal(await until("alice's events gone", () => eventsOf('alice'), (n) => n === 0), 0)
    t.equal(await until("alice-anon's events gone", () => eventsOf('alice-anon'), (n) => n === 0), 0)

    t.same([(await server().api('DELETE', `${base()}/persons/${bob.uuid}/`)).status], [202])
    await until('bob gone', () => personOf('bob'), (p) => p === null)
    t.equal(await eventsOf('bob'), 2, 'without delete_events the events stay')
    t.equal((await server().api('DELETE', `${base()}/persons/${bob.uuid}/`)).status, 404, 'a deleted person is not found again')

    await capture([{ event: 'came back', properties: { distinct_id: 'alice', $set: { returning: true } } }])
    const fresh = await waitPerson('alice')
    t.same(fresh.distinct_ids, ['alice'])
    t.same(fresh.properties, { returning: true, $creator_event_uuid: fresh.properties.$creator_event_uuid }, 'nothing of the deleted person comes back')
    t.ok(Date.parse(fresh.created_at) >= Date.parse(alice.created_at))
    const events = await waitForEvents(server(), 'distinct_id=alice', 1)
    t.same(events.map((e: any) => e.event), ['came back'], 'events after the deletion are kept')
    t.equal(await decide('alice'), false)
  })

  t.test('bulk_delete takes distinct_ids, else ids, up to 1000, and refuses neither', async (t) => {
    await capture([
      { event: '$pageview', properties: { distinct_id: 'carol', $set: { plan: 'pro' } } },
      { event: '$pageview', properties: { distinct_id: 'dan' } },
    ])
    const dan = await waitPerson('dan')
    await waitPerson('carol')
    await waitForEvents(server(), 'distinct_id=carol', 1)
    t.match(await server().api('POST', `${base()}/persons/bulk_delete/`, {}), { status: 400, body: { type: 'validation_error', detail: 'You need to specify either distinct_ids or ids' } })
    const many = Array.from({ length: 1001 }, (_, i) => `x${i}`)
    t.match(await server().api('POST', `${base()}/persons/bulk_delete/`, { distinct_ids: many }), { status: 400, body: { detail: 'You can only pass 1000 distinct_ids in one call', attr: 'distinct_ids' } })
    t.match(await server().api('POST', `${base()}/persons/bulk_delete/`, { ids: many }), { status: 400, body: { detail: 'You can only pass 1000 ids in one call', attr: 'ids' } })
    t.match(await server().api('POST', `${base()}/persons/bulk_delete/`, { ids: 'nope' }), { status: 400, body: { type: 'validation_error', attr: 'ids' } })

    t.equal((await server().api('POST', `${base()}/persons/bulk_delete/`, { distinct_ids: ['carol', 'nobody'], delete_events: true })).status, 202)
    t.equal((await server().api('POST', `${base()}/persons/bulk_delete/`, { ids: [dan.uuid, 'not-a-uuid'] })).status, 202)
    await until('carol and dan gone', async () => [await personOf('carol'), await personOf('dan')], (ps) => ps.every((p) => p === null))
    t.equal(await until("carol's events gone", () => eventsOf('carol'), (n) => n === 0), 0)
    t.equal(await eventsOf('dan'), 1)
  })
}

/** A deletion answered 202 and the server killed at once: after the restart the person and its events are gone. */
export function deletionCrashSuite(t: Test, setup: StoreSetup): void {
  t.test('a deletion acknowledged just before kill -9 is carried out after the restart', async (t) => {
    const dataDir = tempDir()
    let server = await startServer({ dataDir, env: setup.env() })
    t.teardown(async () => {
      await server.stop()
      server.cleanup()
    })
    const base = `/api/projects/${server.boot.project_id}`
    for (let round = 0; round < 3; round++) {
      const id = `crash-${round}`
      const batch = Array.from({ length: 20 }, (_, i) => ({ event: 'before', properties: { distinct_id: id, i, $set: { round } } }))
      await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
      await waitForEvents(server, `distinct_id=${id}`, 20)
      const person = (await server.api('GET', `${base}/persons/?distinct_id=${id}`)).body.results[0]
      // More events in flight, then the deletion, then the kill: the consumer has most likely not reached it.
      await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch: batch.map((e) => ({ ...e, event: 'just before' })) } })
      t.equal((await server.api('DELETE', `${base}/persons/${person.uuid}/?delete_events=true`)).status, 202)
      await server.kill()
      server = await startServer({ dataDir, env: setup.env() })
      await until(`the person of ${id} gone`, () => server.api('GET', `${base}/persons/${person.uuid}/`), (r) => r.status === 404)
      const count = async () => (await server.api('GET', `${base}/events/?distinct_id=${id}`)).body.count
      t.equal(await until(`the events of ${id} gone`, count, (n) => n === 0), 0, `round ${round}`)
      // And it stays done: events sent afterwards are kept, as a new person.
      await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch: [{ event: 'after', properties: { distinct_id: id } }] } })
      await waitForEvents(server, `distinct_id=${id}`, 1)
    }
  })
}
