/** The stage under bad input and failures: malformed fields, an event that throws, a rolled-back batch, a tiny cache. */
import t from 'tap'
import { personUuidFor } from '../../../src/persons/index.js'
import { FakeGeoIp, TEAM, ev, harness } from './fixtures.js'

t.test('robustness', async (t) => {
  t.test('malformed person fields never throw', async (t) => {
    const h = harness()
    const outs = h.run(
      ev('$pageview', 'u', { $set: 'not an object', $set_once: [1, 2], $unset: 'x', $groups: ['a'] }),
      ev('$identify', 'u', { $anon_distinct_id: { weird: true } }),
      ev('$create_alias', 'u', { alias: 12345 }),
      ev('$groupidentify', 'u', { $group_type: 'company', $group_key: '' }),
      ev('$groupidentify', 'u', { $group_type: 'company', $group_key: 'k', $group_set: 'nope' }),
      ev('$pageview', 'u', { __proto__: 'x', $set: JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') }),
    )
    t.equal(outs.length, 6)
    t.equal(h.person('12345')?.id, h.person('u')!.id, 'a numeric alias is used as a string')
    t.equal(h.person('u')!.properties.ok, 1)
    t.equal(({} as any).polluted, undefined, 'no prototype pollution')
    t.match(h.warnings(), [{ type: 'cannot_merge_with_illegal_distinct_id', details: { illegalDistinctId: '[object Object]' } }])
  })

  t.test('merge ids no distinct-id column holds are refused like illegal ones, as PostHog refuses them', async (t) => {
    const h = harness()
    const long = 'a'.repeat(401)
    h.run(ev('$create_alias', 'u2', { alias: long }), ev('$identify', 'u3', { $anon_distinct_id: 'x\u0000y' }), ev('$create_alias', 'u4', { alias: '😀'.repeat(400) }))
    t.notOk(h.person(long), 'over 400 characters')
    t.notOk(h.person('x\u0000y'), 'a NUL')
    t.equal(h.person('😀'.repeat(400))?.id, h.person('u4')!.id, '400 characters outside the BMP are 400 characters')
    t.same(h.warnings().map((w: any) => w.details.illegalDistinctId), [long, 'x\u0000y'])
  })

  t.test('an event that breaks processing is rolled back alone and reported', async (t) => {
    const h = harness({ geoip: new FakeGeoIp() })
    const outs = h.run(ev('$pageview', 'a', { $set: { ok: 1 } }), ev('$pageview', 'b', { $ip: 'boom', $set: { x: 1 } }), ev('$pageview', 'c'))
    t.equal(outs[1].personId, personUuidFor(TEAM, 'b'))
    t.ok(h.person('a') && h.person('c'), 'the other events were processed')
    t.notOk(h.person('b'), 'the failing event left nothing behind')
    t.match(h.warnings(), [{ type: 'person_processing_failed', details: { distinctId: 'b', error: 'lookup exploded' } }])
  })

  t.test('a failure late in a batch leaves the earlier events applied exactly once', async (t) => {
    // The batch runs in one savepoint; a failing event rolls it back and the batch is redone event by event.
    // GeoIP and the $initial_*/campaign copies extend each event's own $set/$set_once: the redo sees them again.
    const batch = [
      ev('$pageview', 'anon', { $set: { a: 1 }, $ip: '81.2.69.142', $browser: 'Safari', utm_source: 'news', $os_name: 'iOS' }),
      ev('$identify', 'user', { $anon_distinct_id: 'anon', $set: { b: 2 }, $ip: '81.2.69.142', $set_once: { $initial_browser: 'Edge' } }),
      ev('$set', 'user', { $set: { n: 1 } }),
      ev('$pageview', 'x', { $ip: 'boom' }),
      ev('$pageview', 'user', { $set: { c: 3 }, $process_person_profile: 'yes' }),
    ]
    const failing = harness({ geoip: new FakeGeoIp() })
    const clean = harness({ geoip: new FakeGeoIp() })
    const expected = clean.run(...structuredClone(batch).filter((_, i) => i !== 3))
    const outs = failing.run(...batch)
    t.same(outs.filter((_, i) => i !== 3), expected, 'same outcomes for the other events')
    t.same(failing.person('user'), clean.person('user'), 'same person, properties and version')
    t.notOk(failing.person('x'))
    t.same(
      failing.warnings().map((w) => w.type).sort(),
      ['invalid_process_person_profile', 'person_processing_failed'],
      'each warning written once',
    )
  })

  t.test('a rolled-back batch followed by resetCache replays to the same state', async (t) => {
    const h = harness()
    h.run(ev('$pageview', 'anon', { $set: { a: 1 } }))
    const batch = [ev('$identify', 'user', { $anon_distinct_id: 'anon', $set: { b: 2 } }), ev('$pageview', 'user', { $set: { c: 3 } })]
    t.throws(() =>
      h.db.transaction(() => {
        h.stage.process(batch)
        throw new Error('sink failed')
      })(),
    )
    h.stage.resetCache()
    t.equal(h.person('user'), undefined, 'nothing of the batch was kept')
    const outs = h.run(...batch)
    t.equal(outs[1].personId, personUuidFor(TEAM, 'anon'))
    t.match(h.person('user')!.properties, { a: 1, b: 2, c: 3 })
  })

  t.test('a tiny cache gives the same results as a large one', async (t) => {
    const events = [
      ev('$pageview', 'a1', { $set: { n: 1 } }),
      ev('$pageview', 'a2', { $set: { n: 2 } }),
      ev('$identify', 'u1', { $anon_distinct_id: 'a1' }),
      ev('$identify', 'u1', { $anon_distinct_id: 'a2' }),
      ev('$pageview', 'a1', { $set: { n: 3 } }),
      ev('$create_alias', 'a2', { alias: 'x' }),
      ev('$pageview', 'x', { $set_once: { first: true } }),
    ]
    const small = harness({ cacheSize: 1 })
    const large = harness()
    t.same(small.run(...events), large.run(...events))
    t.same(small.person('x')?.properties, large.person('x')?.properties)
  })
})
