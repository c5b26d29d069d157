/**
 * posthog-js-lite, unmodified, running under Node with its own fetch: 4.12.1 (gzip `/batch/`,
 * `/flags/?v=2`, `/array/<token>/config`) and 3.4.2 (JSON `/batch/`, `/decide/?v=3`), on both event
 * stores. The client is stateful (one user per instance): anonymous events, identify with `$set`, alias,
 * a group, a burst of 2,000 events, flags and payloads for the identified user, shutdown; then every
 * event must be stored with the right person and properties, with no failed or retried request and no
 * error event.
 */
import t, { type Test } from 'tap'
import { PostHog as LiteV4 } from 'posthog-js-lite'
import { PostHog as LiteV3 } from 'posthog-js-lite-v3'
import {
  PAYLOAD_ON,
  PAYLOAD_TEST,
  assertClean,
  eachStore,
  groupOf,
  personOf,
  recordingFetch,
  storedEventWhere,
  storedEvents,
  summarise,
  until,
  type Exchange,
  type StoreRun,
} from './harness.js'

const BURST = 2000

/** The SDK's own fetch goes through the recorder: a subclass, as an app could write one. */
function recorded<T extends new (...args: any[]) => any>(Base: T, log: Exchange[]) {
  const record = recordingFetch(log)
  return class extends Base {
    fetch(url: string, options: any) {
      return record(url, options)
    }
  }
}

interface Flavour {
  name: string
  version: string
  Base: new (key: string, options: any) => any
  flagsPath: RegExp
  gzip: boolean
}

const FLAVOURS: Flavour[] = [
  { name: 'posthog-js-lite 4', version: '4.12.1', Base: LiteV4, flagsPath: /^\/flags\/$/, gzip: true },
  { name: 'posthog-js-lite 3', version: '3.4.2', Base: LiteV3, flagsPath: /^\/decide\/$/, gzip: false },
]

async function scenario(t: Test, { store, server }: StoreRun, f: Flavour): Promise<void> {
  const p = `${store}-lite${f.version.split('.')[0]}`
  const user = `${p}-user`
  const alias = `${p}-alias`
  const company = `${p}-acme`
  const log: Exchange[] = []
  const errors: unknown[] = []
  const Client = recorded(f.Base, log)
  const client = new Client(server.boot.project_api_key, {
    host: server.baseUrl,
    persistence: 'memory',
    flushAt: 20, // the burst's slices (below)
    flushInterval: 200,
    maxQueueSize: BURST * 2,
  })
  client.on('error', (e: unknown) => errors.push(e))
  const flagsLoaded = () => new Promise<void>((resolve) => client.onFeatureFlags(() => resolve()))

  const anonymous = client.getDistinctId()
  client.capture('landed', { from: 'ad' })
  client.identify(user, { $set: { email: `${p}@example.com`, plan: 'pro' }, $set_once: { first_lib: f.version } })
  client.alias(alias)
  client.group('company', company, { name: 'Acme', tier: 'gold' })
  // In slices of flushAt, yielding between them as events from a running app would: js-lite re-serialises its
  // whole queue on every capture (memory persistence), so 2,000 captures in one synchronous loop block the
  // event loop for seconds, long enough on a busy machine for skylark to close the idle keep-alive sockets
  // (uWS: after 8–12 s) under requests undici has queued on them ("other side closed"). Slices of 100 still
  // let the queue grow while its batches were in flight: the burst took 5.7–8 s of the test's 60, against
  // 0.6–2.1 s so.
  for (let i = 0; i < BURST; i++) {
    client.capture(`burst ${p}`, { i, odd: i % 2 === 1 })
    if (i % 20 === 19) await new Promise((resolve) => setTimeout(resolve, 1))
  }
  await client.flush()

  const person = await personOf(server, user, (x) => x.properties.plan === 'pro' && x.distinct_ids.includes(alias))
  await groupOf(server, company, (g) => g.group_properties.tier === 'gold')

  t.test('flags and payloads for the identified user', async (t) => {
    // A group type first seen by ingestion reaches flag evaluation within a second (the mapping cache).
    await until('sdk-company to see the new group type', async () => {
      const loaded = flagsLoaded()
      await client.reloadFeatureFlagsAsync()
      await loaded
      return client.isFeatureEnabled('sdk-company') ? true : undefined
    }, 5000)
    t.equal(client.isFeatureEnabled('sdk-company'), true, 'the stored group (registered with group()) decides sdk-company')
    t.equal(client.getFeatureFlag('sdk-on'), true)
    t.equal(client.getFeatureFlag('sdk-variant'), 'test')
    t.equal(client.getFeatureFlag('sdk-pro'), true, 'stored person properties decide sdk-pro (the SDK sends none)')
    t.notOk(client.getFeatureFlag('sdk-off'), 'an inactive flag is off')
    t.same(client.getFeatureFlagPayload('sdk-on'), PAYLOAD_ON)
    t.same(client.getFeatureFlagPayload('sdk-variant'), PAYLOAD_TEST)
    if (typeof client.getRemoteConfig === 'function') {
      const config = await client.getRemoteConfig()
      t.match(config, { hasFeatureFlags: true, supportedCompression: Array, sessionRecording: false }, 'remote config (/array/<token>/config)')
      t.ok(config.supportedCompression.includes('gzip-js'), 'gzip-js advertised, so the SDK keeps compressing')
    }
  })

  t.test('shutdown() flushes what is still queued', async (t) => {
    client.capture('last words', { final: true })
    await client.shutdown()
    const [last] = await storedEvents(server, { distinct_id: user, event: 'last words' }, 1)
    t.equal(last.properties.final, true)
  })

  t.test('every event is stored with its person and properties', async (t) => {
    t.match(person.properties, { email: `${p}@example.com`, plan: 'pro', first_lib: f.version })
    t.ok(person.distinct_ids.includes(anonymous), 'identify merged the anonymous id')
    t.equal((await personOf(server, alias)).uuid, person.uuid, 'the alias joined the person')
    t.match((await groupOf(server, company)).group_properties, { name: 'Acme', tier: 'gold' })

    const [landed] = await storedEvents(server, { distinct_id: anonymous, event: 'landed' }, 1)
    t.match(landed.properties, { from: 'ad', $lib: 'js', $lib_version: f.version })
    const [identify] = await storedEvents(server, { distinct_id: user, event: '$identify' }, 1)
    t.equal(identify.properties.$anon_distinct_id, anonymous)
    t.equal(identify.person_id, person.uuid)
    const [group] = await storedEvents(server, { distinct_id: user, event: '$groupidentify' }, 1)
    t.match(group.properties, { $group_type: 'company', $group_key: company })
    // After the burst, this user's events may have come down the overflow lane: waited for, not counted.
    const called = (e: any) => e.properties.$feature_flag === 'sdk-variant' && e.properties.$feature_flag_response === 'test'
    t.ok(await storedEventWhere(server, { distinct_id: user, event: '$feature_flag_called' }, called), '$feature_flag_called for sdk-variant: test')

    const burst = await storedEvents(server, { event: `burst ${p}` }, BURST)
    t.equal(burst.length, BURST, `all ${BURST} burst events are stored`)
    t.equal(new Set(burst.map((e) => e.properties.i)).size, BURST, 'each exactly once')
    t.ok(burst.every((e) => e.distinct_id === user && e.person_id === person.uuid), 'all from the identified person')
    t.ok(burst.every((e) => e.properties.odd === (e.properties.i % 2 === 1) && e.properties.$groups?.company === company), 'with their properties and group')
  })

  t.test('the wire: paths, encodings, no retries, no errors', async (t) => {
    const batches = log.filter((e) => e.path === '/batch/')
    t.ok(batches.length >= BURST / 100, `${batches.length} batches`)
    t.ok(batches.every((e) => e.bodyKind === (f.gzip ? 'gzip' : 'json')), f.gzip ? 'gzip bodies' : 'JSON bodies')
    t.ok(log.some((e) => f.flagsPath.test(e.path)), 'flags were asked over the wire')
    assertClean(t, log, f.name)
    t.same(errors.map(String), [], 'no error event')
    t.comment(`${f.name} on ${store}:\n  ${summarise(log).join('\n  ')}`)
  })
}

t.test('posthog-js-lite against skylark', async (t) => {
  eachStore(t, async (t, run) => {
    for (const flavour of FLAVOURS) await t.test(flavour.name, (t) => scenario(t, run, flavour))
  })
})
