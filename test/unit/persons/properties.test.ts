import t from 'tap'
import { appendMembers } from '../../../src/common/json.js'
import { GEO_FIELDS } from '../../../src/geoip/index.js'
import {
  addGeoProperties,
  addInitialAndCampaignProperties,
  applyPropertyUpdates,
  computePropertyUpdates,
  isDistinctIdIllegal,
  mergeGroupProperties,
} from '../../../src/persons/index.js'

t.test('isDistinctIdIllegal', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['', true],
    ['   ', true],
    ['anonymous', true],
    ['AnOnYmOuS', true],
    ["'guest'", true],
    ['"distinct_id"', true],
    ['not_authenticated', true],
    ['email', true],
    ['TRUE', true],
    ['[object Object]', true],
    ['NaN', true],
    ['nan', false],
    ['None', true],
    ['none', true],
    ['NONE', false],
    ['null', true],
    ['Null', false],
    ['"null"', true],
    ['0', true],
    ['00', false],
    ['user@example.com', false],
    ['anonymous-123', false],
  ]
  for (const [id, illegal] of cases) t.equal(isDistinctIdIllegal(id), illegal, JSON.stringify(id))
})

t.test('computePropertyUpdates', async (t) => {
  const current = { a: 1, n: null, o: { x: 1 } }
  const cases: Array<{ name: string; event?: string; properties: Record<string, unknown>; toSet: object; toUnset: string[] }> = [
    { name: 'set_once skips present keys, null included', properties: { $set_once: { a: 2, n: 2, b: 3 } }, toSet: { b: 3 }, toUnset: [] },
    { name: 'set keeps equal primitives out', properties: { $set: { a: 1, b: 2 } }, toSet: { b: 2 }, toUnset: [] },
    { name: 'set always rewrites objects', properties: { $set: { o: { x: 1 } } }, toSet: { o: { x: 1 } }, toUnset: [] },
    { name: 'set wins over set_once for the same new key', properties: { $set_once: { k: 'once' }, $set: { k: 'set' } }, toSet: { k: 'set' }, toUnset: [] },
    { name: 'unset of present string keys only', properties: { $unset: ['a', 'zz', 5] }, toSet: {}, toUnset: ['a'] },
    { name: 'unset object form', properties: { $unset: { n: 1 } }, toSet: {}, toUnset: ['n'] },
    { name: 'malformed fields are ignored', properties: { $set: 'x', $set_once: 3, $unset: 'a' }, toSet: {}, toUnset: [] },
    { name: 'NO_PERSON_UPDATE events change nothing', event: '$exception', properties: { $set: { b: 1 } }, toSet: {}, toUnset: [] },
  ]
  for (const c of cases) {
    t.same(computePropertyUpdates(c.event ?? '$pageview', c.properties, current), { toSet: c.toSet, toUnset: c.toUnset }, c.name)
  }
  const applied = applyPropertyUpdates(current, { toSet: { b: 1 }, toUnset: ['a'] })
  t.same(applied, { properties: { n: null, o: { x: 1 }, b: 1 }, changed: true })
  t.same(current, { a: 1, n: null, o: { x: 1 } }, 'the input is not changed')
})

t.test('addInitialAndCampaignProperties', async (t) => {
  t.test('leaves events without such properties untouched', async (t) => {
    const props = { x: 1 }
    t.equal(addInitialAndCampaignProperties('$pageview', props), props)
    t.same(props, { x: 1 })
  })

  t.test('skips $snapshot and $performance_event', async (t) => {
    t.same(addInitialAndCampaignProperties('$snapshot', { $browser: 'x' }), { $browser: 'x' })
  })

  t.test('adds to the event’s own $set, and a second pass over the same event changes nothing', async (t) => {
    const set = { a: 1, $browser: 'client value' }
    const props = { $set: set, utm_medium: 'email', $browser: 'Firefox', $os_name: 'iOS' }
    const out = addInitialAndCampaignProperties('$pageview', props)
    t.equal(out.$set, set, 'extended in place, not copied')
    const once = structuredClone(out)
    t.same(out.$set, { a: 1, $browser: 'client value', utm_medium: 'email' })
    t.same(out.$set_once, { $initial_utm_medium: 'email', $initial_browser: 'Firefox', $initial_os: 'iOS' })
    t.same(addInitialAndCampaignProperties('$pageview', out), once, 'idempotent (a batch redone after a rollback)')
  })

  t.test('a $set that is not an object is replaced', async (t) => {
    const out = addInitialAndCampaignProperties('$pageview', { $set: 'nope', $set_once: [1], $browser: 'Firefox' })
    t.same(out.$set, { $browser: 'Firefox' })
    t.same(out.$set_once, { $initial_browser: 'Firefox' })
  })
})

t.test('addGeoProperties', async (t) => {
  const geo = { $geoip_country_code: 'GB', $geoip_city_name: 'Bracknell', $geoip_postal_code: null }
  const everyKey = (prefix: string, known: Record<string, unknown>) =>
    Object.fromEntries(GEO_FIELDS.map((field) => [`${prefix}${field}`, known[`$geoip_${field}`] ?? null]))

  t.test('an event without $set/$set_once gets both with every GeoIP field, null when unknown', async (t) => {
    const properties: Record<string, unknown> = { $ip: '81.2.69.142' }
    const members = addGeoProperties(properties, geo)
    t.strictSame(properties.$set, everyKey('$geoip_', geo))
    t.strictSame(properties.$set_once, everyKey('$initial_geoip_', geo))
    t.strictSame(Object.keys(properties), ['$ip', '$set', '$set_once'])
    t.strictSame(
      Object.entries(JSON.parse(`{${members}}`)),
      [['$geoip_city_name', 'Bracknell'], ['$geoip_country_code', 'GB'], ['$geoip_postal_code', null]],
      'the event gets only the keys the lookup has, as JSON members to append',
    )
    t.equal(addGeoProperties({}, geo), members, 'the same members for the same lookup result')
  })

  t.test("a client's own top-level $geoip_* keys give way to those of the lookup; others stay", async (t) => {
    const properties: Record<string, unknown> = { $geoip_city_name: 'client value', $geoip_latitude: 5, plan: 'pro' }
    const members = addGeoProperties(properties, geo)
    const stored = appendMembers(JSON.stringify(properties), members)
    t.notOk(Object.hasOwn(properties, '$geoip_city_name'), "the client's key is removed, so the stored text has it once")
    t.ok(Object.hasOwn(properties, '$geoip_latitude'), 'a key the lookup does not have stays')
    t.match(JSON.parse(stored), { $geoip_city_name: 'Bracknell', $geoip_latitude: 5, plan: 'pro', $geoip_country_code: 'GB' })
  })

  t.test('a client $set/$set_once is extended in place, GeoIP values winning, other keys kept', async (t) => {
    const set = { plan: 'pro', $geoip_city_name: 'client value' }
    const setOnce = { first: 1 }
    const out: Record<string, unknown> = { $set: set, $set_once: setOnce }
    addGeoProperties(out, geo)
    t.equal(out.$set, set)
    t.equal(out.$set_once, setOnce)
    t.strictSame(set, { plan: 'pro', ...everyKey('$geoip_', geo) })
    t.strictSame(setOnce, { first: 1, ...everyKey('$initial_geoip_', geo) })
  })
})

t.test('mergeGroupProperties', async (t) => {
  const cases: Array<[object, object, object, boolean]> = [
    [{}, { a: 1 }, { a: 1 }, true],
    [{ a: 1 }, { a: 1 }, { a: 1 }, false],
    [{ a: 1 }, { a: '1' }, { a: 1 }, false],
    [{ a: 1 }, { a: 2, b: null }, { a: 2, b: null }, true],
    [{ o: { x: 1 } }, { o: { x: 1 } }, { o: { x: 1 } }, true],
  ]
  for (const [current, set, properties, changed] of cases) {
    t.same(mergeGroupProperties(current as any, set as any), { properties, changed }, JSON.stringify([current, set]))
  }
})
