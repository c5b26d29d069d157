// Bodies shared by the scenarios. Deterministic: every run sends the same bytes.
//
// Events carry no `uuid`, so the server assigns one and every request stores new rows (a fixed uuid would
// be deduplicated into one row). Distinct ids cycle through a pool large enough that no (project,
// distinct_id) exceeds the spike limits (SPIKE_BURST 1000, SPIKE_RATE_PER_SEC 100) at the rates reached
// here, so events stay in the main lane as ordinary traffic does.
import { gzipSync } from 'node:zlib'

/** Deterministic pseudo-random numbers. */
export function rng(seed) {
  let s = seed >>> 0
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 4294967296
}

/**
 * A PostHog-JS style $pageview, ≈465 bytes of JSON without api_key (≈525 with it; perf-limits.md measured 510 without `$ip`).
 * `$ip` stands in for the address a browser's request would come from: the load comes from 127.0.0.1, which
 * has no GeoIP record, and GeoIP enrichment is most of the consumer's work for real traffic (≈3× an event).
 * Up to 10,000 addresses of 81.0.0.0/8 (RIPE), so lookups also miss the GeoIP cache as real traffic does.
 */
export function pageview(distinctId, i) {
  return {
    event: '$pageview',
    distinct_id: distinctId,
    properties: {
      $current_url: `https://app.example.com/projects/${1000 + (i % 97)}/insights?tab=trends`,
      $browser: 'Chrome',
      $browser_version: 131,
      $os: 'Mac OS X',
      $device_type: 'Desktop',
      $screen_height: 1117,
      $screen_width: 1728,
      $lib: 'web',
      $lib_version: '1.200.2',
      $referrer: 'https://www.google.com/',
      $referring_domain: 'www.google.com',
      $session_id: `0193a1f2-7c4e-7d2a-9b1e-${String(100000000000 + (i % 9973)).slice(0, 12)}`,
      plan: 'pro',
      $ip: `81.${2 + (i % 50)}.${Math.floor(i / 50) % 200}.${10 + (i % 7)}`,
    },
  }
}

/** /capture/ bodies: one event each, `count` distinct ids. */
export function captureBodies(token, count = 1000) {
  const bodies = []
  for (let i = 0; i < count; i++) bodies.push(JSON.stringify({ api_key: token, ...pageview(`user-${String(i).padStart(6, '0')}`, i) }))
  return bodies
}

/** /batch/ bodies of `size` events; `bodies × size` distinct ids in all. */
export function batchBodies(token, size, bodies) {
  const out = []
  for (let b = 0; b < bodies; b++) {
    const batch = []
    for (let i = 0; i < size; i++) {
      const n = b * size + i
      batch.push(pageview(`user-${String(n).padStart(6, '0')}`, n))
    }
    out.push(JSON.stringify({ api_key: token, batch }))
  }
  return out
}

export const gzip = (text) => gzipSync(Buffer.from(text))

/** The 20 properties of a stored person . */
export function personProperties(i) {
  return {
    email: `user${i}@${i % 3 === 0 ? 'example.com' : 'other.io'}`,
    $geoip_country_code: ['US', 'FR', 'DE', 'GB'][i % 4],
    plan: i % 5 === 0 ? 'free' : 'pro',
    age: 18 + (i % 50),
    $browser: i % 2 === 0 ? 'Chrome' : 'Firefox',
    $os: 'Mac OS X',
    app_version: `2.${i % 6}.1`,
    signup_date: '2024-05-01T10:00:00Z',
    $initial_referrer: '$direct',
    $current_url: 'https://app.example.com/dashboard',
    name: `User ${i}`,
    company: 'Acme',
    role: 'engineer',
    team_size: 12,
    is_admin: false,
    locale: 'en-US',
    timezone: 'Europe/Paris',
    $screen_width: 1440,
    $screen_height: 900,
    signup_source: i % 2 === 0 ? 'ads' : 'organic',
  }
}

export const PERSONS = 100
export const personId = (i) => `bench-person-${i}`

/** A /batch/ body that stores PERSONS persons with 20 properties each and one group (company "acme"). */
export function personsSetupBody(token) {
  const batch = []
  for (let i = 0; i < PERSONS; i++) batch.push({ event: '$identify', distinct_id: personId(i), properties: { $set: personProperties(i) } })
  batch.push({
    event: '$groupidentify',
    distinct_id: personId(0),
    properties: { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme', plan: 'enterprise', employees: 250, industry: 'software', country: 'FR' } },
  })
  return JSON.stringify({ api_key: token, batch })
}

const PROPERTY_CONDITIONS = [
  [{ key: 'email', type: 'person', operator: 'icontains', value: '@example.com' }],
  [{ key: '$geoip_country_code', type: 'person', operator: 'exact', value: ['US', 'CA', 'GB'] }],
  [{ key: 'plan', type: 'person', operator: 'is_not', value: 'free' }],
  [{ key: 'age', type: 'person', operator: 'gt', value: '30' }],
  [{ key: '$browser', type: 'person', operator: 'exact', value: 'Chrome' }, { key: '$os', type: 'person', operator: 'is_set' }],
  [{ key: 'email', type: 'person', operator: 'regex', value: '^[a-z0-9._%+-]+@(example|test)\\.(com|org)$' }],
  [{ key: 'app_version', type: 'person', operator: 'semver_gte', value: '2.3.0' }],
  [{ key: 'signup_date', type: 'person', operator: 'is_date_after', value: '-30d' }],
]

/**
 * Flag `i` of the realistic mix (bench/micro/flags.mjs evaluates the same set): half with person-property
 * conditions, rollouts spread over 0–100 %, a tenth multivariate, payloads on every flag; in addition
 * one in twenty (odd indexes, no property conditions) aggregates by the `company` group.
 */
export function flagBody(i) {
  const r = rng(42 + i * 7919)
  r()
  const rollout = Math.round(r() * 100)
  const withProps = i % 2 === 0
  const multivariate = i % 10 === 5
  const byGroup = i % 20 === 13
  const filters = {
    groups: [{ properties: withProps ? PROPERTY_CONDITIONS[(i / 2) % PROPERTY_CONDITIONS.length] : [], rollout_percentage: rollout }],
    payloads: { true: '{"enabled":true}' },
  }
  if (multivariate) {
    filters.multivariate = { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] }
    filters.payloads = { control: '"c"', test: '"t"' }
  }
  if (byGroup) filters.aggregation_group_type_index = 0
  return { key: `bench-flag-${String(i).padStart(3, '0')}`, name: `Bench flag ${i}`, filters, active: true }
}

/** /decide?v=3 bodies, one per stored person. */
export function decideBodies(token, { groups = false, personProperties: withProps = false } = {}) {
  const out = []
  for (let i = 0; i < PERSONS; i++) {
    const body = { token, distinct_id: personId(i) }
    if (groups) {
      body.groups = { company: 'acme' }
      body.group_properties = { company: { plan: 'enterprise', employees: 250 } }
    }
    if (withProps) body.person_properties = { plan: i % 5 === 0 ? 'free' : 'pro', $browser: 'Chrome', app_version: '2.4.0' }
    out.push(JSON.stringify(body))
  }
  return out
}
