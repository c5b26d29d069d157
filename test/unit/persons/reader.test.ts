import t from 'tap'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { HashKeyOverrideWriter, PersonReader } from '../../../src/persons/index.js'
import { CHECK_EVERY_MS } from '../../../src/persons/reader.js'
import { openDatabase } from '../../../src/storage/index.js'
import { testDir } from '../../helpers/temp.js'
import { TEAM, ev, harness, personsDb } from './fixtures.js'

t.test('PersonReader over a read-only connection', async (t) => {
  const dir = testDir(t, 'skylark-persons-')
  const file = join(dir, 'persons.db')
  const h = harness({ db: personsDb(file) })
  const reader = new PersonReader(openDatabase(file, { readonly: true }))

  h.run(
    ev('$pageview', 'anon-1', { $set: { plan: 'free' } }),
    ev('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { email: 'one@example.com' } }),
    ev('$pageview', 'user-2'),
    ev('$pageview', 'user-3'),
    ev('$groupidentify', 'user-1', { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } }),
    ev('$groupidentify', 'user-1', { $group_type: 'company', $group_key: 'beta', $group_set: { name: 'Beta' } }),
    ev('$groupidentify', 'user-1', { $group_type: 'project', $group_key: 'p', $group_set: {} }),
    ev('$identify', 'user-2', { $anon_distinct_id: 'null' }),
    ev('$pageview', 'other-team-user', {}, { team_id: TEAM + 1 }),
  )

  t.test('personFor finds a person by any of its distinct ids', async (t) => {
    const p = reader.personFor(TEAM, 'anon-1')
    t.match(p, { uuid: h.person('user-1')!.uuid, is_identified: true, properties: { plan: 'free', email: 'one@example.com' } })
    t.equal(p?.id, reader.personFor(TEAM, 'user-1')?.id)
    t.equal(reader.personFor(TEAM, 'nobody'), null)
    t.equal(reader.personFor(TEAM + 1, 'user-1'), null, 'persons belong to one project')
  })

  t.test('cached reads follow every write another connection commits, within CHECK_EVERY_MS', async (t) => {
    const before = reader.personFor(TEAM, 'user-3')
    t.equal(reader.personFor(TEAM, 'user-3'), before, 'a second read without writes is the cached record')
    t.ok(Object.isFrozen(before) && Object.isFrozen(before!.properties), 'shared records are frozen')
    t.equal(reader.personFor(TEAM + 2, 'late-user'), null)
    t.same(reader.groupProperties(TEAM, 0, 'beta'), { name: 'Beta' })
    h.run(
      ev('$set', 'user-3', { $set: { plan: 'pro' } }),
      ev('$pageview', 'late-user', {}, { team_id: TEAM + 2 }),
      ev('$groupidentify', 'user-1', { $group_type: 'company', $group_key: 'beta', $group_set: { name: 'Beta 2' } }),
    )
    await sleep(CHECK_EVERY_MS + 1)
    t.match(reader.personFor(TEAM, 'user-3'), { properties: { plan: 'pro' } })
    t.ok(reader.personFor(TEAM + 2, 'late-user'), 'a person created after a cached miss is found')
    t.same(reader.groupProperties(TEAM, 0, 'beta'), { name: 'Beta 2' })
  })

  t.test('a cached record outlives commits that leave its row alone; a merge reads the person again', async (t) => {
    const team = TEAM + 3 // its own project: the listing tests below count this one's persons and groups
    const other = { team_id: team }
    h.run(
      ev('$pageview', 'anon-5', {}, other),
      ev('$pageview', 'user-5', { $set: { plan: 'team' } }, other),
      ev('$groupidentify', 'user-5', { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } }, other),
    )
    await sleep(CHECK_EVERY_MS + 1)
    const user = reader.personFor(team, 'user-5')
    const anon = reader.personFor(team, 'anon-5')
    const group = reader.groupProperties(team, 0, 'acme')
    t.ok(user && anon && group)
    h.run(ev('$pageview', 'someone-else', {}, other), ev('$groupidentify', 'user-5', { $group_type: 'company', $group_key: 'b', $group_set: { name: 'B' } }, other))
    await sleep(CHECK_EVERY_MS + 1)
    t.equal(reader.personFor(team, 'user-5'), user, 'the same object: what /decide keeps beside it stays valid')
    t.equal(reader.groupProperties(team, 0, 'acme'), group)
    h.run(ev('$identify', 'user-5', { $anon_distinct_id: 'anon-5' }, other))
    await sleep(CHECK_EVERY_MS + 1)
    const merged = reader.personFor(team, 'anon-5')
    t.not(merged?.id, anon!.id, 'the distinct id moved to the other person')
    t.equal(merged?.id, reader.personFor(team, 'user-5')?.id)
    t.match(merged, { properties: { plan: 'team' } })
  })

  t.test('group types and group properties', async (t) => {
    t.same(reader.groupTypeMapping(TEAM), { '0': 'company', '1': 'project' })
    t.same(reader.groupTypeMapping(TEAM + 1), {})
    t.same(reader.groupTypes(TEAM).map((g) => g.group_type), ['company', 'project'])
    t.same(reader.groupProperties(TEAM, 0, 'acme'), { name: 'Acme' })
    t.equal(reader.groupProperties(TEAM, 0, 'missing'), null)
  })

  t.test('lists persons newest first with their distinct ids, paginated and filtered', async (t) => {
    const all = await reader.scans.listing.listPersons(TEAM, { limit: 10, offset: 0 })
    t.same(all.map((p) => p.distinct_ids), [['user-3'], ['user-2'], ['anon-1', 'user-1']])
    t.equal(await reader.scans.listing.countPersons(TEAM), 3)
    t.same((await reader.scans.listing.listPersons(TEAM, { limit: 1, offset: 1 })).map((p) => p.distinct_ids), [['user-2']])
    t.same((await reader.scans.listing.listPersons(TEAM, { distinctId: 'anon-1', limit: 10, offset: 0 })).map((p) => p.distinct_ids), [['anon-1', 'user-1']])
    t.equal(await reader.scans.listing.countPersons(TEAM, { distinctId: 'anon-1' }), 1)
    t.same(await reader.scans.listing.listPersons(TEAM, { distinctId: 'nobody', limit: 10, offset: 0 }), [])
    t.equal(await reader.scans.listing.countPersons(TEAM, { distinctId: 'nobody' }), 0)
  })

  t.test('lists groups of one type, newest first', async (t) => {
    t.same((await reader.scans.listing.listGroups(TEAM, 0, 10, 0)).map((g) => g.group_key), ['beta', 'acme'])
    t.match(await reader.scans.listing.listGroups(TEAM, 0, 1, 1), [{ group_type_index: 0, group_key: 'acme', group_properties: { name: 'Acme' }, created_at: String }])
    t.equal(await reader.scans.listing.countGroups(TEAM, 0), 2)
    t.same(await reader.scans.listing.listGroups(TEAM, 4, 10, 0), [])
  })

  t.test('lists ingestion warnings newest first', async (t) => {
    t.match(await reader.scans.listing.listIngestionWarnings(TEAM, 10, 0), [{ type: 'cannot_merge_with_illegal_distinct_id', source: 'persons', details: { illegalDistinctId: 'null' }, timestamp: String }])
    t.equal(await reader.scans.listing.countIngestionWarnings(TEAM), 1)
    t.same(await reader.scans.listing.listIngestionWarnings(TEAM + 1, 10, 0), [])
  })

  t.test('static cohorts of a person', async (t) => {
    const id = reader.personFor(TEAM, 'user-1')!.id
    const insert = h.db.prepare('INSERT INTO cohort_people (cohort_id, person_id, team_id) VALUES (?, ?, ?)')
    insert.run(12, id, TEAM)
    insert.run(3, id, TEAM)
    t.same(reader.staticCohortIdsFor(id), [3, 12])
    t.same(reader.staticCohortIdsFor(999_999), [])
  })

  t.test('hash-key overrides: the first override wins, and the first person listed wins on reading', async (t) => {
    const writer = new HashKeyOverrideWriter(h.db)
    const user1 = reader.personFor(TEAM, 'user-1')!.id
    const user2 = reader.personFor(TEAM, 'user-2')!.id
    t.equal(writer.writeHashKeyOverrides(TEAM, [user1], ['flag-a'], 'hash-1'), 1)
    t.equal(writer.writeHashKeyOverrides(TEAM, [user1, user2], ['flag-a', 'flag-b'], 'hash-2'), 2, 'flag-a already has one for these persons')
    t.equal(writer.writeHashKeyOverrides(TEAM, [999_999], ['flag-c'], 'hash-3'), 0, 'unknown persons get nothing')
    t.equal(writer.writeHashKeyOverrides(TEAM + 1, [user1], ['flag-c'], 'hash-3'), 0, 'persons of another project get nothing')
    t.same(reader.hashKeyOverrides(TEAM, [user1, user2]), { 'flag-a': 'hash-1', 'flag-b': 'hash-2' })
    t.same(reader.hashKeyOverrides(TEAM, [user2]), { 'flag-b': 'hash-2' })
    h.db.prepare('INSERT INTO hash_key_overrides (team_id, person_id, feature_flag_key, hash_key) VALUES (?, ?, ?, ?)').run(TEAM, user2, 'flag-a', 'other')
    t.same(reader.hashKeyOverrides(TEAM, [user2, user1]), { 'flag-a': 'other', 'flag-b': 'hash-2' }, 'the person listed first wins')
    t.same(reader.hashKeyOverrides(TEAM, []), {})
  })
})
