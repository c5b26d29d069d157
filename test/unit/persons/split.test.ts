/** A person split (PostHog's split_person): which distinct ids move, and what the stage makes of them in persons.db. */
import t from 'tap'
import { distinctIdsToSplit, originDistinctId, personUuidFor } from '../../../src/persons/index.js'
import { T0, TEAM, ev, harness } from './fixtures.js'

t.test('the distinct id a person keeps by default is the one its uuid derives from', async (t) => {
  const uuid = personUuidFor(TEAM, 'anon-1')
  t.equal(originDistinctId(TEAM, uuid, ['user-1', 'anon-1', 'alias-1']), 'anon-1')
  t.equal(originDistinctId(TEAM, uuid, ['user-1']), null, 'gone from the person (moved by a merge): none')
  t.equal(originDistinctId(TEAM + 1, uuid, ['anon-1']), null, "another project's derivation is not it")
})

t.test('every distinct id but the main one is split off, or only those named', async (t) => {
  t.same(distinctIdsToSplit(['a', 'b', 'c'], 'b', null), ['a', 'c'])
  t.same(distinctIdsToSplit(['a'], 'a', null), [], 'a person with one distinct id has nothing to split')
  t.same(distinctIdsToSplit(['a', 'b'], 'z', null), [], 'a main id the person no longer has splits nothing, so the person keeps one')
  t.same(distinctIdsToSplit(['a', 'b'], null, null), [])
  t.same(distinctIdsToSplit(['a', 'b', 'c'], null, ['c', 'c', 'z']), ['c'], 'named ones it owns, each once')
})

t.test('the stage moves each split id onto a new person without properties and leaves the person its own', async (t) => {
  const h = harness()
  h.run(
    ev('$pageview', 'anon-1', { $set: { plan: 'pro' } }),
    ev('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { email: 'a@example.com' } }),
    ev('$create_alias', 'user-1', { alias: 'alias-1' }),
  )
  const before = h.person('anon-1')!
  const split = h.db.transaction(() => h.stage.splitPerson(TEAM, before.uuid, 'anon-1', null))()
  t.same(split.map((s) => s.distinctId).sort(), ['alias-1', 'user-1'])
  const kept = h.person('anon-1')!
  t.same([kept.id, kept.uuid, kept.version], [before.id, before.uuid, before.version], 'the person itself is unchanged')
  t.same(kept.properties, before.properties, 'and keeps every property')
  t.same(h.distinctIds(kept.id), ['anon-1'])
  for (const id of ['user-1', 'alias-1']) {
    const p = h.person(id)!
    t.equal(p.uuid, personUuidFor(TEAM, id), `${id}: a person with the uuid PostHog derives for it`)
    t.same(split.find((s) => s.distinctId === id)?.uuid, p.uuid)
    t.same([p.properties, p.is_identified, p.version, p.created_at], [{}, 0, before.version + 101, new Date(T0).toISOString()])
    t.same(h.distinctIds(p.id), [id])
  }
  // The stage's own cache follows: the next event of a split id is its new person's.
  const [next] = h.run(ev('$pageview', 'user-1', { $set: { came: 'back' } }))
  t.equal(next.personId, personUuidFor(TEAM, 'user-1'))
  t.same(h.person('user-1')!.properties.came, 'back')
  t.notOk('came' in h.person('anon-1')!.properties)
})

t.test('a split id whose derived uuid is the person it leaves gets a fresh one', async (t) => {
  const h = harness()
  h.run(ev('$pageview', 'anon-2'), ev('$identify', 'user-2', { $anon_distinct_id: 'anon-2' }))
  const before = h.person('user-2')!
  t.equal(before.uuid, personUuidFor(TEAM, 'anon-2'))
  const [moved] = h.db.transaction(() => h.stage.splitPerson(TEAM, before.uuid, 'user-2', null))()
  t.equal(moved.distinctId, 'anon-2')
  t.not(moved.uuid, before.uuid)
  t.equal(h.person('anon-2')!.uuid, moved.uuid)
  t.equal(h.person('user-2')!.uuid, before.uuid)
})

t.test('a person that is gone, or an unknown uuid, splits nothing', async (t) => {
  const h = harness()
  h.run(ev('$pageview', 'solo'))
  t.same(h.db.transaction(() => h.stage.splitPerson(TEAM, '00000000-0000-4000-8000-000000000000', 'solo', null))(), [])
  t.same(h.db.transaction(() => h.stage.splitPerson(TEAM + 1, h.person('solo')!.uuid, 'solo', null))(), [], "another project's person")
  t.equal(h.personCount(), 1)
})
