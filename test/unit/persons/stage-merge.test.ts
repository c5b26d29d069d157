/** How the stage merges persons: $identify, $create_alias and $merge_dangerously, and the merges it refuses. */
import t from 'tap'
import { personUuidFor } from '../../../src/persons/index.js'
import { TEAM, ev, harness } from './fixtures.js'

t.test('identify, alias and merges', async (t) => {
  t.test('anonymous events, then identify, then alias end with one person owning three ids', async (t) => {
    const h = harness()
    const [a1, a2] = h.run(ev('$pageview', 'anon-1', { $set_once: { first_seen: 'yes' } }), ev('$pageview', 'anon-1'))
    t.equal(a1.personId, a2.personId)
    const [identified] = h.run(ev('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { email: 'a@example.com' } }))
    t.equal(identified.personId, a1.personId, 'the anonymous person becomes the identified one')
    const [aliased] = h.run(ev('$create_alias', 'user-1', { alias: 'alias-1' }))
    t.equal(aliased.personId, a1.personId)
    const p = h.person('user-1')!
    t.same(h.distinctIds(p.id), ['alias-1', 'anon-1', 'user-1'])
    t.equal(p.is_identified, 1)
    t.match(p.properties, { email: 'a@example.com', first_seen: 'yes' })
    t.equal(h.personCount(), 1)
    t.same(h.warnings(), [])
  })

  t.test('identify before any event creates one identified person owning both ids', async (t) => {
    const h = harness()
    const [out] = h.run(ev('$identify', 'user-2', { $anon_distinct_id: 'anon-2', $set: { a: 1 }, $set_once: { b: 2 } }))
    const p = h.person('anon-2')!
    t.equal(p.id, h.person('user-2')!.id)
    t.equal(p.uuid, personUuidFor(TEAM, 'user-2'), 'the uuid comes from the event’s distinct id')
    t.equal(out.personId, p.uuid)
    t.equal(p.is_identified, 1)
    t.match(p.properties, { a: 1, b: 2 })
  })

  t.test('identify without $anon_distinct_id or with the same id only updates properties', async (t) => {
    const h = harness()
    h.run(ev('$identify', 'u', { $set: { a: 1 } }), ev('$identify', 'u', { $anon_distinct_id: 'u', $set: { b: 1 } }))
    const p = h.person('u')!
    t.match(p.properties, { a: 1, b: 1 })
    t.equal(p.is_identified, 0, 'no merge attempt, so not marked identified')
  })

  t.test('merging two persons moves ids, properties, overrides and cohorts to the target', async (t) => {
    const h = harness()
    h.run(ev('$pageview', 'anon', { $set: { shared: 'anon', only_anon: 1 } }))
    h.run(ev('$pageview', 'user', { $set: { shared: 'user', only_user: 1 } }))
    h.run(ev('$set', 'user', { $set: { bump: 1 } }), ev('$set', 'user', { $set: { bump: 2 } }))
    const source = h.person('anon')!
    const target = h.person('user')!
    const insertOverride = h.db.prepare('INSERT INTO hash_key_overrides (team_id, person_id, feature_flag_key, hash_key) VALUES (?, ?, ?, ?)')
    insertOverride.run(TEAM, source.id, 'both', 'from-anon')
    insertOverride.run(TEAM, source.id, 'anon-only', 'from-anon')
    insertOverride.run(TEAM, target.id, 'both', 'from-user')
    const insertCohort = h.db.prepare('INSERT INTO cohort_people (cohort_id, person_id, team_id) VALUES (?, ?, ?)')
    insertCohort.run(1, source.id, TEAM)
    insertCohort.run(2, source.id, TEAM)
    insertCohort.run(2, target.id, TEAM)

    const [out] = h.run(ev('$identify', 'user', { $anon_distinct_id: 'anon', $set: { after: 'merge' }, $unset: ['only_anon'] }))
    t.equal(out.personId, target.uuid)
    const merged = h.person('anon')!
    t.equal(merged.id, target.id)
    t.same(h.distinctIds(target.id), ['anon', 'user'])
    t.match(merged.properties, { shared: 'user', only_user: 1, after: 'merge' })
    t.notOk('only_anon' in merged.properties, 'the event’s $unset applies to the merged properties')
    t.equal(merged.created_at, source.created_at, 'created_at is the earlier of the two')
    t.equal(merged.version, Math.max(source.version, target.version) + 1)
    t.equal(merged.is_identified, 1)
    t.equal(h.personCount(), 1, 'the source person is deleted')
    const overrides = h.db.prepare('SELECT person_id, feature_flag_key, hash_key FROM hash_key_overrides ORDER BY feature_flag_key').all()
    t.same(overrides, [
      { person_id: target.id, feature_flag_key: 'anon-only', hash_key: 'from-anon' },
      { person_id: target.id, feature_flag_key: 'both', hash_key: 'from-user' },
    ], 'overrides move to the target and the target’s own win')
    const cohorts = h.db.prepare('SELECT cohort_id, person_id FROM cohort_people ORDER BY cohort_id').all()
    t.same(cohorts, [{ cohort_id: 1, person_id: target.id }, { cohort_id: 2, person_id: target.id }])
  })

  t.test('an already identified source is not merged and a warning is written', async (t) => {
    const h = harness()
    h.run(ev('$identify', 'user-a', { $anon_distinct_id: 'anon-a' }), ev('$identify', 'user-b', { $anon_distinct_id: 'anon-b' }))
    const e = ev('$identify', 'user-b', { $anon_distinct_id: 'user-a', $set: { still: 'updated' } })
    const [out] = h.run(e)
    t.equal(out.personId, h.person('user-b')!.uuid)
    t.not(h.person('user-a')!.id, h.person('user-b')!.id)
    t.equal(h.personCount(), 2)
    t.equal(h.person('user-b')!.properties.still, 'updated', 'the target is still updated')
    t.same(h.warnings(), [
      {
        type: 'cannot_merge_already_identified',
        details: { sourcePersonDistinctId: 'user-a', targetPersonDistinctId: 'user-b', eventUuid: e.uuid },
      },
    ])
    const [alias] = h.run(ev('$create_alias', 'user-b', { alias: 'user-a' }))
    t.equal(alias.personId, h.person('user-b')!.uuid)
    t.equal(h.personCount(), 2, '$create_alias is refused the same way')
  })

  t.test('$merge_dangerously merges even identified persons', async (t) => {
    const h = harness()
    h.run(ev('$identify', 'user-a', { $anon_distinct_id: 'anon-a' }), ev('$identify', 'user-b', { $anon_distinct_id: 'anon-b' }))
    h.run(ev('$merge_dangerously', 'user-b', { alias: 'user-a' }))
    t.equal(h.personCount(), 1)
    t.same(h.distinctIds(h.person('user-b')!.id), ['anon-a', 'anon-b', 'user-a', 'user-b'])
  })

  t.test('illegal distinct ids are never merged', async (t) => {
    const illegal = ['null', 'undefined', 'UNDEFINED', 'Anonymous', '"guest"', "'distinct_id'", '  ', '[object Object]', 'NaN', 'None', '0', 'true']
    for (const id of illegal) {
      const h = harness()
      const e = ev('$identify', 'user', { $anon_distinct_id: id })
      h.run(ev('$pageview', id), e)
      t.not(h.person('user')?.id, h.person(id)?.id, `${JSON.stringify(id)} stays apart`)
      t.same(h.warnings(), [
        { type: 'cannot_merge_with_illegal_distinct_id', details: { illegalDistinctId: id, otherDistinctId: 'user', eventUuid: e.uuid } },
      ])
      t.equal(h.person('user')!.is_identified, 0, 'the event is processed as an ordinary one')
    }
    const h = harness()
    h.run(ev('$create_alias', 'null', { alias: 'real-user' }))
    t.match(h.warnings(), [{ type: 'cannot_merge_with_illegal_distinct_id', details: { illegalDistinctId: 'null', otherDistinctId: 'real-user' } }])
    const legal = harness()
    legal.run(ev('$identify', 'user', { $anon_distinct_id: 'nan' }))
    t.equal(legal.person('nan')?.id, legal.person('user')?.id, 'only the exact casing NaN is illegal')
  })
})
