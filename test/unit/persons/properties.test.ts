import t from 'tap'
import { GEO_FIELDS } from '../../../src/geoip/index.js'
import {
  NO_SETS,
  addGeoProperties,
  addInitialAndCampaignProperties,
  applyPropertyUpdates,
  computePropertyUpdates,
  isDistinctIdIllegal,
  isDistinctIdUnmergeable,
  mergeGroupProperties,
  unsetGroupProperties,
  splitSets,
  storedPropertiesJson,
} from '../../../src/persons/index.js'

/** What the stage does with an event's properties before its person updates, with GeoIP when given. */
function prepared(event: string, source: Record<string, unknown>, geo?: Record<string, unknown>) {
  let { properties, sets } = splitSets(source)
  if (geo) properties = addGeoProperties(properties, sets, geo)
  addInitialAndCampaignProperties(event, properties, sets)
  return { properties, sets, stored: JSON.parse(storedPropertiesJson(properties, sets, geo ?? null)) }
}

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

t.test('isDistinctIdUnmergeable adds the ids no distinct-id column holds', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['null', true],
    ['a\u0000b', true],
    ['a'.repeat(400), false],
    ['a'.repeat(401), true],
    ['😀'.repeat(400), false],
    ['😀'.repeat(401), true],
    ['user-1', false],
  ]
  for (const [id, unmergeable] of cases) t.equal(isDistinctIdUnmergeable(id), unmergeable, `${JSON.stringify(id.slice(0, 8))}… (${id.length})`)
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
    const { properties, sets } = splitSets(c.properties)
    t.same(computePropertyUpdates(c.event ?? '$pageview', properties, sets, current), { toSet: c.toSet, toUnset: c.toUnset }, c.name)
  }
  const applied = applyPropertyUpdates(current, { toSet: { b: 1 }, toUnset: ['a'] })
  t.same(applied, { properties: { n: null, o: { x: 1 }, b: 1 }, changed: true })
  t.same(current, { a: 1, n: null, o: { x: 1 } }, 'the input is not changed')
})

t.test('addInitialAndCampaignProperties', async (t) => {
  t.test('leaves events without such properties untouched', async (t) => {
    const { properties, sets, stored } = prepared('$pageview', { x: 1 })
    t.same(stored, { x: 1 })
    t.same([properties, sets], [{ x: 1 }, { $set: undefined, $set_once: undefined, geo: null }])
  })

  t.test('skips $snapshot and $performance_event', async (t) => {
    t.same(prepared('$snapshot', { $browser: 'x' }).stored, { $browser: 'x' })
  })

  t.test('adds to the event’s own $set, and a second pass over the same event changes nothing', async (t) => {
    const set = { a: 1, $browser: 'client value' }
    const source = { $set: set, utm_medium: 'email', $browser: 'Firefox', $os_name: 'iOS' }
    const first = prepared('$pageview', source)
    t.equal(first.sets.$set, set, 'extended in place, not copied')
    t.same(first.stored.$set, { a: 1, $browser: 'client value', utm_medium: 'email' })
    t.same(first.stored.$set_once, { $initial_utm_medium: 'email', $initial_browser: 'Firefox', $initial_os: 'iOS' })
    t.same(prepared('$pageview', source).stored, first.stored, 'idempotent (a batch redone after a rollback)')
  })

  t.test('a $set that is not an object is replaced, and kept as sent when nothing is added', async (t) => {
    const { stored } = prepared('$pageview', { $set: 'nope', $set_once: [1], $browser: 'Firefox' })
    t.same(stored.$set, { $browser: 'Firefox' })
    t.same(stored.$set_once, { $initial_browser: 'Firefox' })
    t.same(prepared('$pageview', { $set: 'nope' }).stored, { $set: 'nope' })
  })
})

t.test('addGeoProperties', async (t) => {
  const geo = { $geoip_country_code: 'GB', $geoip_city_name: 'Bracknell', $geoip_postal_code: null }
  const everyKey = (prefix: string, known: Record<string, unknown>) =>
    Object.fromEntries(GEO_FIELDS.map((field) => [`${prefix}${field}`, known[`$geoip_${field}`] ?? null]))

  t.test('an event without $set/$set_once gets both with every GeoIP field, null when unknown', async (t) => {
    const { stored } = prepared('$pageview', { $ip: '81.2.69.142' }, geo)
    t.strictSame(stored.$set, everyKey('$geoip_', geo))
    t.strictSame(stored.$set_once, everyKey('$initial_geoip_', geo))
    t.strictSame(
      Object.entries(stored).filter(([key]) => key.startsWith('$geoip_')),
      [['$geoip_city_name', 'Bracknell'], ['$geoip_country_code', 'GB'], ['$geoip_postal_code', null]],
      'the event gets only the keys the lookup has',
    )
    t.strictSame(Object.keys(stored), ['$ip', '$geoip_city_name', '$geoip_country_code', '$geoip_postal_code', '$set', '$set_once'])
  })

  t.test('person updates carry every GeoIP key in $set, and in $set_once those the person lacks', async (t) => {
    const { properties, sets } = prepared('$pageview', { $set: { plan: 'pro' }, $set_once: { first: 1 } }, geo)
    const current = { $initial_geoip_city_name: 'Reading', $geoip_country_code: 'GB' }
    const { toSet } = computePropertyUpdates('$pageview', properties, sets, current)
    const { $geoip_country_code, ...changedGeo } = everyKey('$geoip_', geo)
    const { $initial_geoip_city_name, ...initialGeo } = everyKey('$initial_geoip_', geo)
    t.strictSame(toSet, { first: 1, ...initialGeo, plan: 'pro', ...changedGeo })
  })

  t.test('a person holding the GeoIP keys of an address gets none from its next events; changed properties are checked again', async (t) => {
    const event = () => prepared('$pageview', { $ip: '81.2.69.142' }, geo)
    const updates = (current: Record<string, unknown>) => {
      const { properties, sets } = event()
      return computePropertyUpdates('$pageview', properties, sets, current).toSet
    }
    const person = applyPropertyUpdates({}, { toSet: updates({}), toUnset: [] }).properties
    t.strictSame(updates(person), {}, 'the first check finds every key in place')
    t.strictSame(updates(person), {}, 'and so does the next one')
    const { $geoip_city_name, ...unset } = person
    t.strictSame(updates(unset), { $geoip_city_name: 'Bracknell' }, 'a person without one of the keys gets it')
    t.strictSame(updates({ ...person, $geoip_country_code: 'FR' }), { $geoip_country_code: 'GB' }, 'a different value is replaced')
  })

  t.test("a client's own top-level $geoip_* keys give way to those of the lookup; others stay", async (t) => {
    const { properties, stored } = prepared('$pageview', { $geoip_city_name: 'client value', $geoip_latitude: 5, plan: 'pro' }, geo)
    t.notOk(Object.hasOwn(properties, '$geoip_city_name'), "the client's key is removed, so the stored text has it once")
    t.ok(Object.hasOwn(properties, '$geoip_latitude'), 'a key the lookup does not have stays')
    t.match(stored, { $geoip_city_name: 'Bracknell', $geoip_latitude: 5, plan: 'pro', $geoip_country_code: 'GB' })
  })

  t.test("a client's $set/$set_once keeps its other keys, GeoIP values winning", async (t) => {
    const source = { $set: { plan: 'pro', $geoip_city_name: 'client value' }, $set_once: { first: 1, $initial_geoip_city_name: 'x' } }
    const { stored } = prepared('$pageview', source, geo)
    t.same(stored.$set, { plan: 'pro', ...everyKey('$geoip_', geo) })
    t.same(stored.$set_once, { first: 1, ...everyKey('$initial_geoip_', geo) })
    t.same(prepared('$pageview', source, geo).stored, stored, 'idempotent (a batch redone after a rollback)')
  })

  t.test('an event that changes no person stores the event keys only', async (t) => {
    const { properties } = prepared('$pageview', { $ip: '81.2.69.142', $set: { a: 1 } }, geo)
    t.strictSame(JSON.parse(storedPropertiesJson(properties, NO_SETS, geo)), { $ip: '81.2.69.142', $geoip_city_name: 'Bracknell', $geoip_country_code: 'GB', $geoip_postal_code: null })
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

t.test('unsetGroupProperties', async (t) => {
  const cases: Array<[object, unknown, object, boolean]> = [
    [{ a: 1, b: 2 }, ['a'], { b: 2 }, true],
    [{ a: 1, b: 2 }, ['a', 'b', 'c'], {}, true],
    [{ a: 1 }, ['b'], { a: 1 }, false],
    [{ a: null }, ['a'], {}, true],
    [{ a: 1, '1': 2 }, [1, null, { a: 1 }], { a: 1, '1': 2 }, false],
    [{ a: 1 }, 'a', { a: 1 }, false],
    [{ a: 1 }, { a: true }, { a: 1 }, false],
    [{ toString: 1 }, ['toString', 'constructor'], {}, true],
  ]
  for (const [current, keys, properties, changed] of cases) {
    const before = JSON.stringify(current)
    t.same(unsetGroupProperties(current as any, keys), { properties, changed }, JSON.stringify([current, keys]))
    t.equal(JSON.stringify(current), before, 'the current properties are not changed')
  }
})

t.test('the stored text is the properties, the GeoIP keys, then $set and $set_once, for every combination of empty and absent parts', async (t) => {
  const all = (prefix: string, geo: Record<string, unknown>) => Object.fromEntries(GEO_FIELDS.map((field) => [`${prefix}${field}`, geo[`$geoip_${field}`] ?? null]))
  const geos = [null, {}, { $geoip_city_name: 'Zürich', $geoip_latitude: 47.4 }]
  const values = [undefined, {}, { s: '🦜', n: 1 }, 'nope', [1]]
  let checked = 0
  for (const properties of [{}, { a: 1, ü: 'ö' }])
    for (const geo of geos)
      for (const setsGeo of geos)
        for (const $set of values)
          for (const $set_once of values) {
            const expected: Record<string, unknown> = { ...properties }
            if (geo) for (const [key, value] of Object.entries(geo)) expected[key] = value
            const withGeo = (value: unknown, prefix: string) =>
              setsGeo === null ? value : { ...(value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}), ...all(prefix, setsGeo) }
            if ($set !== undefined || setsGeo) expected.$set = withGeo($set, '$geoip_')
            if ($set_once !== undefined || setsGeo) expected.$set_once = withGeo($set_once, '$initial_geoip_')
            const text = storedPropertiesJson(properties, { $set, $set_once, geo: setsGeo }, geo)
            if (text !== JSON.stringify(expected)) t.fail(`${text} !== ${JSON.stringify(expected)}`)
            checked++
          }
  t.equal(checked, 2 * 3 * 3 * 5 * 5)
})
