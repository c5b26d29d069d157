/**
 * Cookieless tracking end to end: events as posthog-js's `cookieless_mode` sends them (distinct id
 * `$posthog_cookieless`, `$cookieless_mode`, `$raw_user_agent`, `$host`), through capture, the consumer's hash
 * step and person processing, read back through the events, persons and ingestion warnings APIs.
 */
import t from 'tap'
import { waitForEvents } from '../ingestion/suite.js'
import { readUntil } from '../../helpers/wait.js'
import { personsServer } from './persons-server.js'

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:136.0) Gecko/20100101 Firefox/136.0'
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36'
/**
 * A minute past a UTC midnight: every event of a test is in one UTC day, so under one salt, and in the past (the
 * events API lists nothing later than now). In the first two hours of a day that is yesterday, whose salt lives
 * until 14 h after it ends; /flags is told the day by `?_=` as posthog-js tells it the time.
 */
const DAY_START = Math.floor((Date.now() - 2 * 3_600_000) / 86_400_000) * 86_400_000 + 60_000
const at = (minutes: number) => new Date(DAY_START + minutes * 60_000).toISOString()

t.test('cookieless tracking', async (t) => {
  const { server, base, capture, personOf } = personsServer(t, { name: 'sqlite', env: () => ({}) })
  const setMode = async (mode: unknown) => server().api('PATCH', `${base()}/`, { cookieless_server_hash_mode: mode })
  const cookieless = (event: string, props: Record<string, unknown> = {}, minutes = 0) => ({
    event,
    distinct_id: '$posthog_cookieless',
    timestamp: at(minutes),
    properties: { $cookieless_mode: true, $raw_user_agent: FIREFOX, $host: 'shop.example.co.uk', $timezone: 'UTC', $current_url: 'https://shop.example.co.uk/', ...props },
  })
  const warnings = async () => (await server().api('GET', `${base()}/ingestion_warnings/`)).body.results as Array<{ type: string; details: Record<string, unknown> }>
  const flags = async (userAgent: string, origin?: string) =>
    server().request('POST', `/flags/?v=2&_=${DAY_START}`, {
      body: { token: server().boot.project_api_key, distinct_id: '$posthog_cookieless', timezone: 'UTC' },
      headers: { 'user-agent': userAgent, ...(origin ? { origin } : {}) },
    })
  const planFlag = async (userAgent: string) => (await flags(userAgent, 'https://www.example.co.uk')).body.flags?.['pro-plan']?.enabled
  const dropped = (reason: string) => readUntil(`a ${reason} warning`, warnings, (list) => list.some((w) => w.details.reason === reason))

  t.test('the setting is PostHog’s choice of 0, 1 or 2 (or null), disabled until set', async (t) => {
    t.equal((await server().api('GET', `${base()}/`)).body.cookieless_server_hash_mode, 0)
    t.match(await setMode(5), { status: 400, body: { type: 'validation_error', code: 'invalid_choice', detail: '"5" is not a valid choice.', attr: 'cookieless_server_hash_mode' } })
    t.match(await setMode(true), { status: 400, body: { code: 'invalid_choice', detail: '"True" is not a valid choice.' } })
    t.equal((await setMode('1')).body.cookieless_server_hash_mode, 1, 'the text of a choice names it')
    t.equal((await setMode(null)).body.cookieless_server_hash_mode, null)
  })

  t.test('with the setting off, /flags evaluates the sentinel as it is', async (t) => {
    const flag = await server().api('POST', `${base()}/feature_flags/`, {
      key: 'pro-plan',
      filters: { groups: [{ properties: [{ key: 'plan', value: ['pro', 'next'], type: 'person', operator: 'exact' }], rollout_percentage: 100 }] },
    })
    t.equal(flag.status, 201)
    const res = await flags(FIREFOX)
    t.equal(res.status, 200, 'no Origin needed')
    t.equal(res.body.flags['pro-plan'].enabled, false)
  })

  t.test('with the setting off, cookieless events are dropped with a warning and the others kept', async (t) => {
    await capture([cookieless('ck-off'), { event: 'ck-off', distinct_id: 'someone', properties: {} }, cookieless('ck-off-again')])
    const stored = await waitForEvents(server(), 'event=ck-off', 1)
    t.same(stored.map((e) => e.distinct_id), ['someone'])
    const disabled = (await dropped('cookieless_team_disabled')).filter((w) => w.details.reason === 'cookieless_team_disabled')
    t.match(disabled, [{ type: 'event_dropped', details: { event: 'ck-off' } }], 'one warning an hour per project and reason')
    const counted = async () => (await server().request('GET', '/metrics')).text.match(/skylark_consumer_total\{kind="cookieless_dropped"\} (\d+)/)?.[1]
    t.equal(await readUntil('both drops counted', counted, (n) => n === '2'), '2', 'every drop is counted')
  })

  t.test('stateless: one id per device (IP, root domain, user agent) and day, one session a day, the inputs not stored', async (t) => {
    t.equal((await setMode(1)).status, 200)
    await capture([
      cookieless('ck-stateless', { $current_url: 'https://shop.example.co.uk/a' }, 0),
      cookieless('ck-stateless', { $host: 'www.example.co.uk' }, 50),
      cookieless('ck-stateless', { $raw_user_agent: CHROME }, 1),
      cookieless('ck-stateless', { $ip: '203.0.113.9', $cookieless_extra: 'tenant-7' }, 2),
      cookieless('$identify', { $anon_distinct_id: '$posthog_cookieless' }),
      { ...cookieless('$create_alias'), properties: { ...cookieless('x').properties, alias: 'a' } },
      cookieless('ck-stateless', { $raw_user_agent: undefined }, 3),
    ])
    const events = (await waitForEvents(server(), 'event=ck-stateless', 4)).sort((a, b) => a.timestamp.localeCompare(b.timestamp))
    t.equal(events.length, 4, 'the event without a user agent is dropped')
    const [first, chrome, otherIp, sameDevice] = events
    t.match(first.distinct_id, /^cookieless_[A-Za-z0-9+/]{22}$/)
    t.equal(sameDevice.distinct_id, first.distinct_id, 'another subdomain of the same site, later the same day: the same id')
    t.not(chrome.distinct_id, first.distinct_id, 'another browser')
    t.not(otherIp.distinct_id, first.distinct_id, 'another IP')
    t.equal(first.properties.$distinct_id, first.distinct_id)
    t.match(first.properties.$device_id, /^cookielessd_/)
    t.equal(sameDevice.properties.$session_id, first.properties.$session_id, 'one session all day')
    t.not(chrome.properties.$session_id, first.properties.$session_id)
    for (const e of events) {
      for (const key of ['$ip', '$raw_user_agent', '$cookieless_extra']) t.notOk(key in e.properties, `${key} is not stored`)
    }
    const reasons = (await dropped('cookieless_missing_ua')).map((w) => w.details.reason)
    t.ok(reasons.includes('cookieless_stateless_disallowed_identify'), 'stateless mode cannot identify')
    t.ok(reasons.includes('cookieless_disallowed_event'), 'nor alias')
    t.ok(await personOf(first.distinct_id), 'the id has a person')
  })

  t.test('stateless: /flags evaluates the id the browser’s events get, from its IP, Origin and User-Agent', async (t) => {
    await capture([cookieless('ck-plan', { $set: { plan: 'pro' } }, 5)])
    await waitForEvents(server(), 'event=ck-plan', 1)
    t.equal(await readUntil('the plan to reach /flags', () => planFlag(FIREFOX), (v) => v === true), true)
    t.equal(await planFlag(CHROME), false, 'another browser is another visitor')
    const noOrigin = await flags(FIREFOX)
    t.match(noOrigin, { status: 400, body: { type: 'validation_error', code: 'cookieless_missing_property', detail: 'Missing required property: host' } })
    t.equal((await flags('', 'https://www.example.co.uk')).body.detail, 'Missing required property: user_agent')
  })

  t.test('an anonymised project still hashes the IP, and stores none', async (t) => {
    t.equal((await server().api('PATCH', `${base()}/`, { anonymize_ips: true })).status, 200)
    await capture([cookieless('ck-anonymised', {}, 0), cookieless('ck-anonymised', { $ip: '198.51.100.1' }, 1)])
    const events = await waitForEvents(server(), 'event=ck-anonymised', 2)
    t.equal(new Set(events.map((e) => e.distinct_id)).size, 2, 'two IPs, two ids')
    t.notOk(events.some((e) => '$ip' in e.properties))
    await server().api('PATCH', `${base()}/`, { anonymize_ips: false })
  })

  t.test('stateful: identify merges the device’s id into the person, and the next user of the device gets a new id', async (t) => {
    t.equal((await setMode(2)).status, 200)
    const device = { $raw_user_agent: 'Stateful Browser/1.0' }
    await capture([
      cookieless('ck-stateful', device, 0),
      cookieless('ck-stateful', device, 10),
      { ...cookieless('$identify', { ...device, $anon_distinct_id: '$posthog_cookieless' }, 11), distinct_id: 'ada' },
      { ...cookieless('ck-stateful', device, 12), distinct_id: 'ada' },
      cookieless('ck-stateful', device, 13),
      cookieless('ck-stateful', device, 60),
    ])
    const events = (await waitForEvents(server(), 'event=ck-stateful', 5)).sort((a, b) => a.timestamp.localeCompare(b.timestamp))
    const [before, stillBefore, ada, next, later] = events
    t.match(before.distinct_id, /^cookieless_/)
    t.equal(stillBefore.distinct_id, before.distinct_id)
    t.equal(ada.distinct_id, 'ada')
    t.match(next.distinct_id, /^cookieless_/)
    t.not(next.distinct_id, before.distinct_id, 'after an identify the device hashes to a new id')
    t.equal(later.distinct_id, next.distinct_id)
    t.equal(new Set(events.map((e) => e.properties.$device_id)).size, 1, 'one device throughout')
    t.notOk('$distinct_id' in before.properties)
    t.equal(stillBefore.properties.$session_id, before.properties.$session_id, '10 minutes apart: one session')
    t.not(later.properties.$session_id, next.properties.$session_id, '47 minutes without events: a new session')
    const person = await readUntil('ada merged with her anonymous id', () => personOf('ada'), (p) => p?.distinct_ids.length === 2)
    t.same([...person.distinct_ids].sort(), [before.distinct_id, 'ada'].sort())
    t.notOk((await personOf(next.distinct_id))?.distinct_ids.includes('ada'), 'the next user is not ada')
    await capture([cookieless('ck-stateful-plan', { ...device, $set: { plan: 'next' } }, 61)])
    await waitForEvents(server(), 'event=ck-stateful-plan', 1)
    const nextFlag = () => planFlag('Stateful Browser/1.0')
    t.equal(await readUntil('/flags to see the next user', nextFlag, (v) => v === true), true, "/flags counts the device's identifies too")
  })
})
