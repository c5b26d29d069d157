import t from 'tap'
import { CookielessIngest, CookielessState } from '../../../src/persons/index.js'
import type { CapturedEvent } from '../../../src/schemas/captured-event.js'
import { personsDb } from './fixtures.js'

const NOW = Date.parse('2025-06-10T12:00:00Z')
const UA = 'Mozilla/5.0 Firefox/136.0'

let seq = 0

function event(name: string, properties: Record<string, unknown>, distinctId = '$posthog_cookieless'): CapturedEvent {
  const base = { $cookieless_mode: true, $raw_user_agent: UA, $ip: '203.0.113.1', $host: 'example.com' }
  return { uuid: `00000000-0000-7000-8000-${String(++seq).padStart(12, '0')}`, event: name, distinct_id: distinctId, properties: { ...base, ...properties }, timestamp: NOW - 60_000, team_id: 1, now: NOW }
}

const ingest = (mode: number | undefined) => new CookielessIngest(new CookielessState(personsDb()), () => (mode === undefined ? undefined : { timezone: 'UTC', cookielessMode: mode }))

t.test('only events with $cookieless_mode change; the others keep their spooled text, dropped ones leave in order', async (t) => {
  const step = ingest(1)
  const plain = { ...event('plain', {}, 'someone'), properties: { a: 1 } }
  const events = [plain, event('kept', {}), event('no-ua', { $raw_user_agent: '' }), event('$create_alias', { alias: 'x' })]
  const texts = [Buffer.from('{"a":1}'), Buffer.from('{}'), Buffer.from('{}'), Buffer.from('{}')]
  const chunk = { events, texts }
  const dropped = step.apply(chunk, NOW)
  t.same(chunk.events.map((e) => e.event), ['plain', 'kept'])
  t.same(chunk.texts, [Buffer.from('{"a":1}'), null], 'a changed event is serialised again')
  t.same(dropped.map((d) => [d.event.event, d.reason]), [['no-ua', 'cookieless_missing_ua'], ['$create_alias', 'cookieless_disallowed_event']])
  t.same(plain.properties, { a: 1 })
})

t.test('each of PostHog’s drop causes', async (t) => {
  const reason = (mode: number | undefined, e: CapturedEvent) => ingest(mode).apply({ events: [e], texts: [null] }, NOW)[0]?.reason ?? null
  t.equal(reason(0, event('x', {})), 'cookieless_team_disabled')
  t.equal(reason(undefined, event('x', {})), 'cookieless_team_disabled', 'a project it no longer finds')
  t.equal(reason(1, event('$identify', {})), 'cookieless_stateless_disallowed_identify')
  t.equal(reason(2, event('$identify', {})), null, 'stateful mode identifies')
  t.equal(reason(2, event('$merge_dangerously', {})), 'cookieless_disallowed_event')
  t.equal(reason(1, event('x', { $ip: undefined })), 'cookieless_missing_ip')
  t.equal(reason(1, event('x', { $host: 42 })), 'cookieless_missing_host', 'a host that is not text is none')
  t.equal(reason(1, { ...event('x', {}), timestamp: NOW - 3 * 86_400_000 }), 'cookieless_timestamp_out_of_range')
})

t.test('odd property values never throw: each event gets ids or a reason', async (t) => {
  const odd = [
    { $host: 'http://[' }, { $host: '::' }, { $host: 'a b c' }, { $host: 'http://x:99999' }, { $timezone: 'Mars/Olympus' }, { $timezone: {} },
    { $set: [1, 2] }, { $set_once: 'text' }, { $cookieless_extra: 7 }, { $cookieless_extra: 'x'.repeat(10_000) }, { $raw_user_agent: '\ud800' },
  ]
  for (const mode of [1, 2]) {
    const step = ingest(mode)
    for (const properties of odd) {
      const e = event('odd', properties)
      const dropped = step.apply({ events: [e], texts: [null] }, NOW)
      t.ok(dropped.length === 1 || /^cookieless_/.test(e.distinct_id), `${mode} ${JSON.stringify(properties).slice(0, 40)}`)
    }
  }
})
