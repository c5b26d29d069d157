/**
 * What the stage does to persons, groups and the stored event for ordinary and personless events, and
 * what `enrich` answers. Merges are in stage-merge.test.ts; bad input and failures in stage-robustness.test.ts.
 */
import t from 'tap'
import { uuidv5 } from '../../../src/common/ids.js'
import { PERSON_UUID_NAMESPACE, personUuidFor, storedPropertiesJson, type PersonOutcome } from '../../../src/persons/index.js'
import { FakeGeoIp, TEAM, ev, harness } from './fixtures.js'

/** The properties as the event store gets them. */
const stored = (out: PersonOutcome): Record<string, any> => JSON.parse(storedPropertiesJson(out.properties, out.sets, out.geo))

t.test('person uuids', async (t) => {
  t.test('are PostHog’s uuidv5 of "team:distinct_id"', async (t) => {
    t.equal(personUuidFor(TEAM, 'abc'), uuidv5(`${TEAM}:abc`, '932979b4-65c3-4424-8467-0b66ec27bc22'))
    t.equal(PERSON_UUID_NAMESPACE, '932979b4-65c3-4424-8467-0b66ec27bc22')
  })

  t.test('a person created by an event takes the uuid of its distinct id', async (t) => {
    const h = harness()
    const [out] = h.run(ev('$pageview', 'd-1'))
    t.equal(out.personId, personUuidFor(TEAM, 'd-1'))
    t.equal(h.person('d-1')?.uuid, out.personId)
  })
})

t.test('$set, $set_once and $unset', async (t) => {
  t.test('a new person gets {...$set_once, ...$set} and the creator event uuid', async (t) => {
    const h = harness()
    const e = ev('$pageview', 'u', { $set: { plan: 'pro', both: 'set' }, $set_once: { first: 1, both: 'once' } })
    h.run(e)
    const p = h.person('u')!
    t.same(p.properties, { first: 1, both: 'set', plan: 'pro', $creator_event_uuid: e.uuid })
    t.equal(p.is_identified, 0)
    t.equal(p.version, 0)
    t.equal(p.created_at, new Date(e.timestamp).toISOString(), 'created_at is the event time')
  })

  t.test('applies updates in order: $set_once only for absent keys, $set overwrites, $unset last', async (t) => {
    const h = harness()
    const cases: Array<{ name: string; properties: Record<string, unknown>; expect: Record<string, unknown> }> = [
      { name: 'set_once does not overwrite', properties: { $set_once: { a: 'new', b: 2 } }, expect: { a: 1, b: 2, n: null } },
      { name: 'a stored null counts as present', properties: { $set_once: { n: 'x' } }, expect: { a: 1, b: 2, n: null } },
      { name: 'set overwrites', properties: { $set: { a: 'set' } }, expect: { a: 'set', b: 2, n: null } },
      { name: 'unset (array) runs after set', properties: { $set: { b: 'changed' }, $unset: ['b', 'missing'] }, expect: { a: 'set', n: null } },
      {
        name: 'unset only removes keys the person had before the event (PostHog computes it against the stored person)',
        properties: { $set: { c: 3 }, $unset: ['c'] },
        expect: { a: 'set', n: null, c: 3 },
      },
      { name: 'unset (object form)', properties: { $unset: { n: true, c: 1 } }, expect: { a: 'set' } },
    ]
    const first = ev('$set', 'u', { $set: { a: 1, n: null } })
    h.run(first)
    for (const c of cases) {
      h.run(ev('$set', 'u', c.properties))
      const { $creator_event_uuid, ...rest } = h.person('u')!.properties
      t.same(rest, c.expect, c.name)
    }
  })

  t.test('writes only when something changes and bumps the version each time', async (t) => {
    const h = harness()
    h.run(ev('$pageview', 'u', { $set: { a: 1 } }))
    h.run(ev('$pageview', 'u', { $set: { a: 1 } }), ev('$pageview', 'u', { $set_once: { a: 2 } }))
    t.equal(h.person('u')!.version, 0, 'no-op updates are not written')
    h.run(ev('$pageview', 'u', { $set: { a: 2 } }))
    t.equal(h.person('u')!.version, 1)
  })

  t.test('$exception and $$heatmap never update the person', async (t) => {
    const h = harness()
    h.run(ev('$pageview', 'u', { $set: { a: 1 } }))
    h.run(ev('$exception', 'u', { $set: { a: 2 }, $unset: ['a'] }), ev('$$heatmap', 'u', { $set: { b: 1 } }))
    t.same(h.person('u')!.properties.a, 1)
    t.notOk('b' in h.person('u')!.properties)
  })

  t.test('the stored event keeps $set/$set_once and drops $process_person_profile: true', async (t) => {
    const h = harness()
    const [out] = h.run(ev('$pageview', 'u', { $set: { a: 1 }, $process_person_profile: true, x: 1 }))
    t.same(stored(out), { $set: { a: 1 }, x: 1 })
  })
})

t.test('initial and campaign properties', async (t) => {
  t.test('device and campaign properties go to $set and, as $initial_*, to $set_once', async (t) => {
    const h = harness()
    const [out] = h.run(
      ev('$pageview', 'u', { $browser: 'Chrome', utm_source: 'news', gclid: null, $set: { $browser: 'Client' }, $os_name: 'iOS' }),
    )
    t.same(stored(out).$set, { $browser: 'Client', utm_source: 'news', gclid: null })
    t.same(stored(out).$set_once, { $initial_browser: 'Chrome', $initial_utm_source: 'news', $initial_os: 'iOS' })
    const p = h.person('u')!.properties
    t.equal(p.$initial_browser, 'Chrome')
    t.equal(p.$browser, 'Client', 'the client’s own $set wins over the copied value')
    t.notOk('$initial_gclid' in p, 'a null campaign value never blocks the first real one')
    h.run(ev('$pageview', 'u', { $browser: 'Firefox', gclid: 'g1' }))
    const later = h.person('u')!.properties
    t.equal(later.$initial_browser, 'Chrome', 'initial values are set once')
    t.equal(later.$browser, 'Firefox', 'latest values follow the events')
    t.equal(later.$initial_gclid, 'g1')
  })

  t.test('a change limited to frequently changing properties is not written, except by person events', async (t) => {
    const h = harness()
    h.run(ev('$pageview', 'u', { $current_url: 'https://a/1', $browser: 'Chrome' }))
    const [out] = h.run(ev('$pageview', 'u', { $current_url: 'https://a/2', $browser: 'Firefox' }))
    t.equal(stored(out).$set.$current_url, 'https://a/2', 'the stored event still carries the new value')
    t.match(h.person('u'), { version: 0, properties: { $current_url: 'https://a/1', $browser: 'Chrome' } })
    h.run(ev('$pageview', 'u', { $current_url: 'https://a/3', $pathname: '/3' }))
    t.match(h.person('u'), { version: 1, properties: { $current_url: 'https://a/3', $pathname: '/3' } }, 'a new key is written, with the rest')
    h.run(ev('$set', 'u', { $current_url: 'https://a/4' }))
    t.match(h.person('u'), { version: 2, properties: { $current_url: 'https://a/4' } }, 'person events write everything')
  })

  t.test('server SDK events do not lift the host $os', async (t) => {
    const h = harness()
    const [out] = h.run(ev('server event', 'u', { $os: 'Linux', $is_server: true, $browser: 'x' }))
    t.same(stored(out).$set, { $browser: 'x' })
  })
})

t.test('personless events', async (t) => {
  t.test('create no person and get the deterministic person id', async (t) => {
    const h = harness()
    const [out] = h.run(ev('$pageview', 'anon', { $process_person_profile: false, $set: { a: 1 }, $set_once: { b: 1 }, $unset: ['c'], $groups: { company: 'acme' }, $group_0: 'x', $browser: 'Chrome' }))
    t.equal(out.personId, personUuidFor(TEAM, 'anon'))
    t.same(out.groups, ['', '', '', '', ''])
    t.same(stored(out), { $process_person_profile: false, $groups: { company: 'acme' }, $browser: 'Chrome' })
    t.equal(h.personCount(), 0)
    t.same(h.db.prepare('SELECT * FROM group_type_mappings').all(), [], 'no group types either')
  })

  t.test('use an existing person’s id and leave the person unchanged', async (t) => {
    const h = harness()
    const [created] = h.run(ev('$pageview', 'user-9', { $set: { a: 1 } }))
    const [out] = h.run(ev('$pageview', 'user-9', { $process_person_profile: false, $set: { a: 2 } }))
    t.equal(out.personId, created.personId)
    t.equal(h.person('user-9')!.properties.a, 1)
    t.equal(h.person('user-9')!.version, 0)
  })

  t.test('a later identify gives the person the anonymous id’s uuid, so earlier events stay attributed', async (t) => {
    const h = harness()
    const earlier = ev('$pageview', 'anon-x', { $process_person_profile: false })
    const [before] = h.run(earlier)
    h.run(ev('$identify', 'user-x', { $anon_distinct_id: 'anon-x' }))
    t.equal(h.person('user-x')!.uuid, before.personId)
    t.same(h.stage.enrich(earlier), before, 'replaying the personless event gives the same outcome')
  })

  t.test('person-only events sent personless are dropped with a warning', async (t) => {
    const h = harness()
    for (const name of ['$identify', '$create_alias', '$merge_dangerously', '$groupidentify']) {
      const e = ev(name, 'u', { $process_person_profile: false, $anon_distinct_id: 'a', alias: 'a', $group_type: 'company', $group_key: 'k' })
      const [out] = h.run(e)
      t.equal(out.dropReason, 'invalid_event_when_process_person_profile_is_false', name)
    }
    t.equal(h.personCount(), 0)
    t.equal(h.scalar('SELECT COUNT(*) FROM groups'), 0)
    t.equal(h.warnings().length, 4)
  })

  t.test('a $groupidentify with a group key over 400 characters is dropped with a warning, as PostHog drops it', async (t) => {
    const h = harness()
    const long = 'k'.repeat(401)
    const [dropped] = h.run(ev('$groupidentify', 'u', { $group_type: 'company', $group_key: long, $group_set: { a: 1 } }))
    t.equal(dropped.dropReason, 'group_key_too_long')
    t.match(h.warnings(), [{ type: 'group_key_too_long', details: { groupKey: long, groupKeyLength: 401, maxLength: 400 } }])
    const [kept] = h.run(ev('$groupidentify', 'u', { $group_type: 'company', $group_key: 'k'.repeat(400), $group_set: { a: 1 } }))
    t.equal(kept.dropReason, undefined, '400 characters are kept')
    t.equal(h.scalar('SELECT COUNT(*) FROM groups'), 1)
  })

  t.test('a non-boolean $process_person_profile is processed and warned about once', async (t) => {
    const h = harness()
    h.run(ev('$pageview', 'u', { $process_person_profile: 'false' }), ev('$pageview', 'u', { $process_person_profile: 0 }))
    t.equal(h.personCount(), 1)
    t.match(h.warnings(), [{ type: 'invalid_process_person_profile', details: { $process_person_profile: 'false' } }])
  })
})

t.test('groups', async (t) => {
  t.test('$groupidentify creates the group and later sets absent or different keys', async (t) => {
    const h = harness()
    const [identify] = h.run(ev('$groupidentify', 'u', { $group_type: 'company', $group_key: 42, $group_set: { name: 'Acme', size: 10 }, $set: { leaks: 'no' } }))
    t.notOk('$set' in stored(identify), '$set is stripped from $groupidentify')
    const row = () => h.db.prepare('SELECT * FROM groups').get() as any
    t.match(row(), { team_id: TEAM, group_type_index: 0, group_key: '42', version: 1 })
    t.same(JSON.parse(row().properties), { name: 'Acme', size: 10 })
    h.run(ev('$groupidentify', 'u', { $group_type: 'company', $group_key: '42', $group_set: { size: '10', plan: 'pro' } }))
    t.same(JSON.parse(row().properties), { name: 'Acme', size: 10, plan: 'pro' }, 'loosely equal values are kept')
    t.equal(row().version, 2)
    t.notOk('leaks' in h.person('u')!.properties)
  })

  t.test('$groups fills the group columns without creating groups', async (t) => {
    const h = harness()
    h.run(ev('$groupidentify', 'u', { $group_type: 'company', $group_key: 'acme', $group_set: {} }))
    const [out] = h.run(ev('$pageview', 'u', { $groups: { company: 'acme', project: 7 } }))
    t.same(out.groups, ['acme', '7', '', '', ''])
    t.match(out.properties, { $group_0: 'acme', $group_1: 7 })
    t.equal(h.scalar('SELECT COUNT(*) FROM groups'), 1, 'only the identified group exists')
    t.same(h.db.prepare('SELECT group_type, group_type_index FROM group_type_mappings ORDER BY group_type_index').all(), [
      { group_type: 'company', group_type_index: 0 },
      { group_type: 'project', group_type_index: 1 },
    ])
  })

  t.test('a sixth group type is refused with a warning', async (t) => {
    const h = harness()
    const groups = { a: '1', b: '2', c: '3', d: '4', e: '5', f: '6' }
    const [out] = h.run(ev('$pageview', 'u', { $groups: groups }), ev('$pageview', 'u', { $groups: groups }))
    t.same(out.groups, ['1', '2', '3', '4', '5'])
    t.notOk('$group_5' in out.properties)
    t.match(h.warnings(), [{ type: 'group_type_limit_exceeded', details: { groupType: 'f', maxGroupTypes: 5 } }], 'warned once')
  })

  t.test("the groups API's personless $groupidentify and $delete_group_property write the group; a client's do not", async (t) => {
    const h = harness()
    const api = (event: string, properties: Record<string, unknown>) => ev(event, 'project', { $process_person_profile: false, $group_type: 'company', $group_key: 'acme', ...properties }, { internal: true })
    const row = () => h.db.prepare('SELECT properties, version FROM groups').get() as { properties: string; version: number } | undefined
    h.run(ev('$pageview', 'u', { $groups: { company: 'acme' } }))
    const [created] = h.run(api('$groupidentify', { $group_set: { name: 'Acme', plan: 'free', size: 3 } }))
    t.equal(created.dropReason, undefined, 'kept, unlike a personless $groupidentify from a client')
    t.match(stored(created), { $group_type: 'company', $group_set: { name: 'Acme' }, $process_person_profile: false })
    t.same(created.groups, ['', '', '', '', ''])
    t.same([JSON.parse(row()!.properties), row()!.version], [{ name: 'Acme', plan: 'free', size: 3 }, 1])
    t.equal(h.person('project'), undefined, 'no person for the distinct id it is sent with')

    const [unset] = h.run(api('$delete_group_property', { $group_unset: ['plan', 'nope', 7] }))
    t.equal(unset.dropReason, undefined)
    t.same([JSON.parse(row()!.properties), row()!.version], [{ name: 'Acme', size: 3 }, 2], 'the named keys go, the version moves')
    h.run(api('$delete_group_property', { $group_unset: ['plan'] }))
    t.equal(row()!.version, 2, 'nothing left to remove writes nothing')

    h.run(ev('$delete_group_property', 'u', { $group_type: 'company', $group_key: 'acme', $group_unset: ['name'] }))
    h.run(ev('$delete_group_property', 'u', { $process_person_profile: false, $group_type: 'company', $group_key: 'acme', $group_unset: ['name'] }))
    t.same(JSON.parse(row()!.properties), { name: 'Acme', size: 3 }, "a client's $delete_group_property is only an event, as in PostHog")
    const [refused] = h.run(ev('$groupidentify', 'u', { $process_person_profile: false, $group_type: 'company', $group_key: 'acme', $group_set: { size: 4 } }))
    t.equal(refused.dropReason, 'invalid_event_when_process_person_profile_is_false')
    t.equal(JSON.parse(row()!.properties).size, 3)
  })

  t.test("the groups API's writes land in spool order with the clients' $groupidentify, and create no group type", async (t) => {
    const h = harness()
    const client = (set: Record<string, unknown>) => ev('$groupidentify', 'u', { $group_type: 'company', $group_key: 'acme', $group_set: set })
    const api = (set: Record<string, unknown>, type = 'company') =>
      ev('$groupidentify', 'project', { $process_person_profile: false, $group_type: type, $group_key: 'acme', $group_set: set }, { internal: true })
    const plan = () => JSON.parse(h.scalar('SELECT properties FROM groups') as string).plan
    h.run(client({ plan: 'free' }), api({ plan: 'pro' }))
    t.equal(plan(), 'pro', 'the change made after the event wins')
    h.run(api({ plan: 'team' }), client({ plan: 'free' }))
    t.equal(plan(), 'free', 'an event acknowledged after the change wins')
    h.run(api({ plan: 'x' }, 'unknown'))
    t.equal(h.scalar('SELECT COUNT(*) FROM group_type_mappings'), 1, 'a type the project lacks is not created')
    t.equal(h.scalar('SELECT COUNT(*) FROM groups'), 1)
  })

  t.test('group types are per project', async (t) => {
    const h = harness()
    const [a, b] = h.run(ev('$pageview', 'u', { $groups: { org: 'x' } }), ev('$pageview', 'u', { $groups: { team: 'y', org: 'z' } }, { team_id: 99 }))
    t.same(a.groups, ['x', '', '', '', ''])
    t.same(b.groups, ['y', 'z', '', '', ''])
  })
})

t.test('GeoIP enrichment', async (t) => {
  t.test('adds $geoip_* to the event, $set and, as $initial_geoip_*, $set_once', async (t) => {
    const h = harness({ geoip: new FakeGeoIp() })
    const [out] = h.run(ev('$pageview', 'u', { $ip: '81.2.69.142', $set: { $geoip_city_name: 'client value' } }))
    t.match(stored(out), { $geoip_country_code: 'GB', $geoip_city_name: 'Bracknell' })
    t.notOk('$geoip_postal_code' in stored(out), 'keys the database does not know stay off the event')
    t.equal(stored(out).$set.$geoip_city_name, 'Bracknell', 'GeoIP overrides a client-sent $set value')
    t.equal(stored(out).$set.$geoip_postal_code, null, '…and $set carries every GeoIP key')
    t.equal(stored(out).$set_once.$initial_geoip_country_name, 'United Kingdom')
    t.match(h.person('u')!.properties, { $geoip_country_code: 'GB', $initial_geoip_city_name: 'Bracknell', $geoip_latitude: null })
  })

  t.test('is skipped with $geoip_disable, without $ip or for unknown addresses', async (t) => {
    const h = harness({ geoip: new FakeGeoIp() })
    const outs = h.run(
      ev('$pageview', 'u', { $ip: '81.2.69.142', $geoip_disable: true }),
      ev('$pageview', 'u', {}),
      ev('$pageview', 'u', { $ip: '10.0.0.1' }),
    )
    for (const out of outs) {
      t.notOk(Object.keys(stored(out)).some((k) => (k.startsWith('$geoip_') && k !== '$geoip_disable') || k === '$set'))
    }
  })

  t.test('personless events get $geoip_* on the event only', async (t) => {
    const h = harness({ geoip: new FakeGeoIp() })
    const [out] = h.run(ev('$pageview', 'u', { $ip: '81.2.69.142', $process_person_profile: false }))
    t.equal(stored(out).$geoip_country_code, 'GB')
    t.notOk('$set' in stored(out))
  })
})

t.test('enrich', async (t) => {
  t.test('gives the same outcome as process for already processed events, writing nothing', async (t) => {
    const h = harness({ geoip: new FakeGeoIp() })
    const events = [
      ev('$pageview', 'anon', { $ip: '81.2.69.142', $browser: 'Safari', $groups: { company: 'acme' } }),
      ev('$identify', 'user', { $anon_distinct_id: 'anon', $set: { email: 'e@x' } }),
      ev('$groupidentify', 'user', { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } }),
      ev('$pageview', 'someone', { $process_person_profile: false, $groups: { company: 'acme' } }),
      ev('$identify', 'user', { $process_person_profile: false }),
      ev('$pageview', 'user', { $groups: { company: 'acme', unknown_until_now: 'k' } }),
    ]
    const processed = h.run(...events)
    const changes = h.scalar('SELECT total_changes()')
    const fresh = harness({ geoip: new FakeGeoIp(), db: h.db })
    t.same(events.map((e) => fresh.stage.enrich(e)), processed)
    t.same(events.map((e) => h.stage.enrich(e)), processed, 'also from the stage that processed them')
    t.equal(h.scalar('SELECT total_changes()'), changes, 'no writes')
  })

  t.test('after a later merge it answers the surviving person', async (t) => {
    const h = harness()
    const early = ev('$pageview', 'anon')
    h.run(early, ev('$pageview', 'user'), ev('$identify', 'user', { $anon_distinct_id: 'anon' }))
    t.equal(h.stage.enrich(early).personId, personUuidFor(TEAM, 'user'))
  })
})
