import { gzipSync } from 'node:zlib'
import t from 'tap'
import { decodeFrames } from '../../../src/ingestion/consumer/read-batch.js'
import { decodeBodyBytes } from '../../../src/ingestion/decode.js'
import { decodeCapture, decodeEventParts, encodeCapture, encodePayload, eventPartsText, fnv1a } from '../../../src/ingestion/frames.js'
import { parsePayload } from '../../../src/ingestion/parse.js'
import { FrameKind, readFrame } from '../../../src/ingestion/spool/format.js'
import type { CapturedEvent } from '../../../src/ingestion/types.js'

const event = (i: number, name: string): CapturedEvent => ({
  uuid: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  event: name,
  distinct_id: `user-${i}`,
  properties: { i, text: name.repeat(i) },
  timestamp: 1_700_000_000_000 + i,
  team_id: 2,
  now: 1_700_000_000_000,
})

t.test("a body's events are framed back to back, each at its offset, with its checksum and its parts' exact JSON", async (t) => {
  const events = ['$pageview', 'Zoë 🦜 ユーザー', 'x', '\u2028"\\'].map((name, i) => event(i + 1, name))
  const warnings = [{ team_id: 2, type: 'event_dropped', source: 'capture', details: { reason: 'missing_event_name' }, timestamp: 1 }]
  const encoded = encodePayload({ teamId: 2, historical: false, events, warnings })
  t.equal(encoded.offsets.length, events.length + 1)
  t.equal(encoded.offsets[events.length], encoded.frames.length, 'the last offset is the end of the frames')
  const frames = Buffer.from(encoded.frames.buffer, encoded.frames.byteOffset, encoded.frames.length)
  events.forEach((e, i) => {
    const read = readFrame(frames, encoded.offsets[i])
    t.equal(read.status, 'ok', `frame ${i} reads with a valid checksum`)
    if (read.status !== 'ok') return
    t.equal(read.kind, FrameKind.eventParts)
    t.equal(read.payload.toString('utf8'), eventPartsText(e))
    t.equal(read.next, encoded.offsets[i + 1], 'it ends where the next one starts')
    t.equal(encoded.keyHashes[i], fnv1a(`2:${e.distinct_id}`))
  })
  const warning = readFrame(Buffer.from(encoded.warningFrames), 0)
  t.ok(warning.status === 'ok' && warning.kind === FrameKind.warning && JSON.parse(warning.payload.toString()).type === 'event_dropped')
  t.same(encoded.dropReasons, ['missing_event_name'])
})

t.test("an event's frame holds its properties but $set/$set_once as one line, and decodes to the same event", async (t) => {
  const properties: Record<string, unknown> = { a: 1, $set: { plan: 'pro' }, 'Zoë 🦜': '\u2028\n"', $set_once: { first: true }, nested: { x: [1, null] } }
  Object.defineProperty(properties, '__proto__', { value: 'an own key', enumerable: true, writable: true, configurable: true })
  const cases: Array<[string, CapturedEvent]> = [
    ['with $set and $set_once among other keys', { ...event(1, '$identify'), properties }],
    ['without them', event(2, '$pageview')],
    ['with no properties at all', { ...event(3, 'x'), properties: {} }],
  ]
  for (const [name, e] of cases) {
    const payload = Buffer.from(eventPartsText(e))
    const { event: decoded, propertiesText } = decodeEventParts(payload)
    const isSet = ([key]: [string, unknown]) => key === '$set' || key === '$set_once'
    const rest = Object.fromEntries(Object.entries(e.properties).filter((entry) => !isSet(entry)))
    const sets = Object.fromEntries(Object.entries(e.properties).filter(isSet))
    t.equal(propertiesText.toString(), JSON.stringify(rest), `${name}: the first line is the JSON of the other properties`)
    t.same(decoded, e, `${name}: the event decodes whole`)
    t.equal(JSON.stringify(decoded.properties), JSON.stringify({ ...rest, ...sets }), `${name}: $set and $set_once come last`)
  }
  t.throws(() => decodeEventParts(Buffer.from('{"a":1}')), /no line of properties/, 'a payload without its two lines is refused')
  t.throws(() => decodeEventParts(Buffer.from('[1]\n{"properties":{}}')), /not two JSON objects/)
})

t.test('a body with no accepted events has no frames', async (t) => {
  const encoded = encodePayload({ teamId: 2, historical: true, events: [], warnings: [] })
  t.equal(encoded.frames.length, 0)
  t.same([...encoded.offsets], [0])
  t.equal(encoded.historical, true)
})

/** Parses `body` as capture does on the main thread and spools it as a `capture` frame; returns both sides. */
function spoolCapture(body: Buffer, inputs: { anonymizeIps?: boolean; ip?: string | null; queryUnderscore?: string | null; engage?: boolean } = {}) {
  const now = Date.parse('2025-03-01T12:00:00Z')
  let uuid: string | null = null
  const project = { id: 2, anonymizeIps: inputs.anonymizeIps ?? false }
  const decoded = decodeBodyBytes({ body, contentType: undefined, contentEncoding: undefined, compression: null, maxBytes: 1 << 20 })
  const ip = inputs.ip === undefined ? '81.2.69.160' : inputs.ip
  const queryUnderscore = inputs.queryUnderscore ?? null
  const parsed = parsePayload(decoded.text, {
    now,
    ip,
    queryUnderscore,
    queryToken: null,
    engage: inputs.engage ? 'nameless' : undefined,
    uuid: () => (uuid = '01955a1e-0000-7000-8000-000000000001'),
    resolveProject: () => project,
  })
  const bytes = decoded.bytes ?? Buffer.from(decoded.text)
  const encoded = encodeCapture(parsed, { teamId: 2, anonymizeIps: project.anonymizeIps, now, ip, queryUnderscore, uuid, engage: inputs.engage ?? false }, bytes)
  // What the spool held before, as the consumer read it.
  const expected = JSON.parse(JSON.stringify({ events: parsed.events, warnings: parsed.warnings })) as unknown
  return { parsed, encoded, expected, bytes }
}

t.test("a request with one event is spooled as the body it came in, and the consumer's parse of it gives the same event and warnings", async (t) => {
  const cases: Array<[string, Buffer, Parameters<typeof spoolCapture>[1]?]> = [
    ['a plain event without a uuid', Buffer.from(JSON.stringify({ api_key: 'phc_x', event: '$pageview', distinct_id: 'u1', properties: { $current_url: 'https://a.example/' } }))],
    ['an event with its own uuid', Buffer.from(JSON.stringify({ api_key: 'phc_x', event: 'e', distinct_id: 'u1', uuid: '0189AAAA-0000-7000-8000-000000000009' }))],
    ['a gzip body with top-level $set and Zoë 🦜 in it', gzipSync(JSON.stringify({ api_key: 'phc_x', event: 'Zoë 🦜', distinct_id: 'ユーザー', $set: { plan: 'pro' }, properties: { $set: { a: 1 } } }))],
    ['a clock-skewed event with a warning', Buffer.from(JSON.stringify({ api_key: 'phc_x', event: 'e', distinct_id: 'u1', timestamp: 'not a time', sent_at: '2025-03-01T11:00:00Z' }))],
    ['a batch where one event is dropped', Buffer.from(JSON.stringify({ api_key: 'phc_x', batch: [{ event: 'kept', distinct_id: 'u1' }, { event: 'dropped' }] }))],
    ['an engage update sent to /engage/', Buffer.from(JSON.stringify({ $token: 'phc_x', $distinct_id: 'u1', $set: { name: 'Ann' } })), { engage: true }],
    ['a nameless event without engage operations sent to /engage/', Buffer.from(JSON.stringify([{ $token: 'phc_x', distinct_id: 'u2' }])), { engage: true }],
    ['an array elsewhere where an engage update is dropped', Buffer.from(JSON.stringify([{ $token: 'phc_x', event: 'e', distinct_id: 'u1' }, { $token: 'phc_x', $distinct_id: 'u2', $set: { a: 1 } }]))],
    ['a project that anonymises IPs', Buffer.from(JSON.stringify({ api_key: 'phc_x', event: 'e', distinct_id: 'u1', properties: { $ip: '1.2.3.4' } })), { anonymizeIps: true }],
    ['a send time from the _ parameter and no client address', Buffer.from(JSON.stringify({ api_key: 'phc_x', event: 'e', distinct_id: 'u1', offset: 500 })), { ip: null, queryUnderscore: '1740830400000' }],
    ['invalid UTF-8 in a property', Buffer.concat([Buffer.from('{"api_key":"phc_x","event":"e","distinct_id":"u1","properties":{"p":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')])],
  ]
  for (const [name, body, inputs] of cases) {
    const { parsed, encoded, expected, bytes } = spoolCapture(body, inputs)
    t.equal(parsed.events.length, 1, `${name}: one event`)
    t.same([...encoded.offsets], [0, encoded.frames.length], `${name}: one frame`)
    const read = readFrame(Buffer.from(encoded.frames), 0)
    t.ok(read.status === 'ok' && read.kind === FrameKind.capture, `${name}: a capture frame with a valid checksum`)
    if (read.status !== 'ok') continue
    t.ok(read.payload.subarray(-bytes.length).equals(bytes), `${name}: it ends with the decoded body`)
    const again = decodeCapture(read.payload)
    t.strictSame(JSON.parse(JSON.stringify({ events: again.events, warnings: again.warnings })), expected, `${name}: the same event and warnings`)
    t.equal(encoded.keyHashes[0], fnv1a(`2:${parsed.events[0].distinct_id}`))
    t.same(encoded.warningFrames.length, 0, `${name}: its warnings travel inside the frame`)
    t.same(encoded.dropReasons, parsed.warnings.filter((w) => w.type === 'event_dropped').map((w) => w.details.reason))
  }
})

t.test('capture records spooled before the engage flag are read with the rule they were acknowledged under', async (t) => {
  const legacy = (body: unknown) => {
    const text = JSON.stringify(body)
    return decodeCapture(Buffer.from(`[2,false,${Date.parse('2025-03-01T12:00:00Z')},null,null,"01955a1e-0000-7000-8000-000000000001"]\n${text}`))
  }
  t.same(legacy({ $token: 'phc_x', $distinct_id: 'u1', $set: { a: 1 } }).events.map((e) => e.event), ['$identify'], 'an engage update on any path')
  t.same(legacy({ api_key: 'phc_x', batch: [{ event: 'kept', distinct_id: 'u1' }, { distinct_id: 'u2', $set: { a: 1 } }] }).events.map((e) => e.event), ['kept'], 'never a batch item')
  t.same(legacy([{ event: 'kept', distinct_id: 'u1' }, { distinct_id: 'u2' }]).events.map((e) => e.event), ['kept'], 'never without an engage operation')
})

t.test('the consumer decodes capture frames among event and warning frames, in order', async (t) => {
  const first = spoolCapture(Buffer.from(JSON.stringify({ api_key: 'phc_x', batch: [{ event: 'a', distinct_id: 'u1' }, { distinct_id: 'u2' }] })))
  const middle = event(7, 'encoded')
  const unreadable: string[] = []
  const frames = [
    { kind: FrameKind.capture, payload: Buffer.from(first.encoded.frames).subarray(9) },
    { kind: FrameKind.event, payload: Buffer.from(JSON.stringify(middle)) },
    { kind: FrameKind.capture, payload: Buffer.from('not a capture record') },
  ]
  const decoded = decodeFrames(frames, (payload) => unreadable.push(payload.toString()))
  t.same(decoded.events.map((e) => e.event), ['a', 'encoded'])
  t.same(decoded.warnings.map((w) => w.details.reason), ['missing_event_name'])
  t.same(unreadable, ['not a capture record'], 'a frame that does not parse goes to the dead letters, the rest go on')
})
