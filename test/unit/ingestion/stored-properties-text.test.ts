import t from 'tap'
import { fixedClock } from '../../../src/common/clock.js'
import { decodeFrames } from '../../../src/ingestion/consumer/read-batch.js'
import { toEventRows } from '../../../src/ingestion/consumer/rows.js'
import { encodePayload } from '../../../src/ingestion/frames.js'
import { readFrame } from '../../../src/ingestion/spool/format.js'
import type { CapturedEvent } from '../../../src/ingestion/types.js'
import { PersonsStage } from '../../../src/persons/index.js'
import { FakeGeoIp, T0, personsDb } from '../persons/fixtures.js'

function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 4294967296
}

/**
 * Events that exercise every way person processing changes an event's properties ($process_person_profile,
 * GeoIP over client-sent keys, $unset on personless events and $groupidentify, $groups, personless $group_N)
 * and ways it does not ($set/$set_once, GeoIP without a clash, odd keys and text).
 */
function corpus(count: number): CapturedEvent[] {
  const random = rng(42)
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]
  const maybe = (p: number) => random() < p
  const events: CapturedEvent[] = []
  for (let i = 0; i < count; i++) {
    const properties: Record<string, unknown> = { $current_url: `https://example.com/${i}`, n: i, text: pick(['plain', 'Zoë 🦜', '\u2028"\\', '']) }
    if (maybe(0.3)) properties.$process_person_profile = pick([true, false, 'yes'])
    if (maybe(0.5)) properties.$ip = pick(['81.2.69.142', '10.0.0.1'])
    if (maybe(0.2)) properties.$geoip_city_name = 'client city'
    if (maybe(0.2)) properties.$geoip_postal_code = 'client postal code'
    if (maybe(0.3)) properties.$unset = pick([['plan'], { plan: true }])
    if (maybe(0.2)) properties.$groups = pick([{ company: `c${i % 3}` }, {}, { company: 'acme', project: 'p1' }])
    if (maybe(0.15)) properties.$group_0 = 'sent by the client'
    if (maybe(0.4)) properties.$set = { plan: pick(['free', 'pro']), $browser: 'Firefox' }
    if (maybe(0.3)) properties.$set_once = { first_seen: i }
    if (maybe(0.1)) Object.defineProperty(properties, '__proto__', { value: 'own key', enumerable: true, writable: true, configurable: true })
    const event = pick(['$pageview', '$pageview', '$identify', '$groupidentify', 'signed up'])
    if (event === '$groupidentify') Object.assign(properties, { $group_type: 'company', $group_key: `c${i % 3}`, $group_set: { size: i } })
    if (event === '$identify') properties.$anon_distinct_id = `anon-${i % 5}`
    events.push({ uuid: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`, event, distinct_id: `user-${i % 17}`, properties, timestamp: T0 + i, team_id: 2, now: T0 + i })
  }
  return events
}

/**
 * The stored properties of each stored event, with the spool's properties text used or not, and the decoded
 * events' JSON but `$set`/`$set_once` before and after their processing.
 */
function storedTexts(events: CapturedEvent[], useText: boolean): { texts: string[]; copied: number; before: string; after: string } {
  const db = personsDb()
  const stage = new PersonsStage(db, { geoip: new FakeGeoIp(), clock: fixedClock(T0) })
  const encoded = encodePayload({ teamId: 2, historical: false, events, warnings: [] })
  const buf = Buffer.from(encoded.frames)
  const frames = []
  for (let at = 0; at < buf.length; ) {
    const read = readFrame(buf, at)
    if (read.status !== 'ok') throw new Error(`frame at ${at}: ${read.status}`)
    frames.push(read)
    at = read.next
  }
  const decoded = decodeFrames(frames, (_, error) => {
    throw error
  })
  // `$set`/`$set_once` are extended in place, which is idempotent (properties.ts, ownObject); the rest must not change.
  const withoutSets = () => JSON.stringify(decoded.events, (key, value) => (key === '$set' || key === '$set_once' ? undefined : value))
  const before = withoutSets()
  const outcomes = db.transaction(() => stage.process(decoded.events, useText ? decoded.propertiesTexts : undefined))()
  db.close()
  const rows = toEventRows(decoded.events, outcomes, T0)
  const texts = rows.map((row) => String(row.properties))
  return { texts, copied: outcomes.filter((o) => o.propertiesText !== null).length, before, after: withoutSets() }
}

t.test('an event stores the same properties text whether it is copied from the spool frame or serialised again', async (t) => {
  const events = corpus(600)
  const copied = storedTexts(structuredClone(events), true)
  const serialised = storedTexts(structuredClone(events), false)
  t.equal(serialised.copied, 0, 'without the frame texts nothing is copied')
  t.ok(copied.copied > 100, `the frame's text is copied for the events it still describes (${copied.copied} of ${events.length})`)
  t.ok(copied.copied < copied.texts.length - 100, 'and not for those person processing changed')
  t.equal(copied.texts.length, serialised.texts.length)
  const differing = copied.texts.findIndex((text, i) => text !== serialised.texts[i])
  t.equal(differing, -1, 'every stored text is the same')
  if (differing >= 0) t.equal(copied.texts[differing], serialised.texts[differing], `the first that differs, event ${differing}`)
})

t.test('person processing leaves the events as they came, so a batch redone after a rollback gives the same result', async (t) => {
  // The stage changes a copy of an event's properties, made only when it changes them (normalise.ts).
  const { before, after } = storedTexts(corpus(600), true)
  t.equal(after, before)
})
