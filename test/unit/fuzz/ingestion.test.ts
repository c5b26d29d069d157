/**
 * The capture core under hostile input, in-process: decodeBody → parsePayload → encodePayload, the exact
 * path a request body takes on the main thread or in a pool worker. For every generated body the core
 * either produces well-formed events or refuses the request with a 4xx AppError; it never throws anything
 * else, never hangs, and never plants a property on Object.prototype. A body with one accepted event is
 * also spooled as it came (encodeCapture), and the consumer's parse of that frame must give the same event
 * and warnings.
 */
import { isDeepStrictEqual } from 'node:util'
import t from 'tap'
import { decodeBodyBytes } from '../../../src/ingestion/decode.js'
import { decodeCapture, encodeCapture, encodePayload } from '../../../src/ingestion/frames.js'
import { readFrame } from '../../../src/ingestion/spool/format.js'
import { parsePayload, type ParseContext } from '../../../src/ingestion/parse.js'
import { AppError } from '../../../src/common/errors.js'
import type { Rng } from './rng.js'
import { fuzzCases, fuzzRun } from './run.js'
import {
  bombBodies,
  encode,
  hostileString,
  invalidUtf8,
  mutate,
  nestedJson,
  pickEncoding,
  pollutionJson,
  randomBytesBody,
  randomJson,
  truncate,
} from './values.js'

const RUN = fuzzRun(30_000)
const MAX_BYTES = 2 * 1024 * 1024
// About 0.5 ms a case on a slow machine; larger runs (FUZZ_UNIT_CASES, the soak) get the time they need.
t.setTimeout(Math.max(120_000, RUN.cases * 2))
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

let uuidCounter = 0
let lastUuid: string | null = null
const context: ParseContext = {
  now: Date.parse('2025-01-01T00:00:00Z'),
  ip: '203.0.113.7',
  queryUnderscore: null,
  queryToken: null,
  uuid: () => (lastUuid = `01890000-0000-7000-8000-${String(++uuidCounter).padStart(12, '0')}`),
  resolveProject: (token) => {
    if (token === 'phc_fuzz') return { id: 7, anonymizeIps: false }
    throw new AppError('invalid_api_key')
  },
}

function validEvent(rng: Rng): Record<string, unknown> {
  return {
    event: rng.pick(['$pageview', '$identify', 'signed up', '$groupidentify', '$create_alias']),
    distinct_id: `u${rng.int(100)}`,
    uuid: '0189aaaa-0000-7000-8000-000000000001',
    timestamp: rng.pick(['2025-01-01T00:00:00Z', '2025-01-01', 'yesterday', 1735689600000, '2025-13-45T99:99:99Z']),
    properties: { $set: { plan: 'pro' }, $groups: { company: 'acme' }, alias: 'other', $group_type: 'company', $group_key: 'acme' },
  }
}

/** One hostile body with the headers a client would send with it. */
function body(rng: Rng): { body: Buffer; contentType: string | undefined; contentEncoding: string | undefined; compression: string | null } {
  const event = validEvent(rng)
  const wrap = (inner: unknown): unknown =>
    rng.weighted<unknown>([
      [3, { api_key: 'phc_fuzz', ...(inner as object) }],
      [2, { api_key: 'phc_fuzz', batch: [inner, inner] }],
      [1, [{ ...(inner as object), properties: { ...((inner as { properties?: object }).properties ?? {}), token: 'phc_fuzz' } }]],
      [1, inner],
    ])
  let text: string | Buffer
  switch (rng.int(10)) {
    case 0:
      return { body: randomBytesBody(rng), contentType: rng.pick([undefined, 'text/plain', 'application/x-www-form-urlencoded']), contentEncoding: undefined, compression: rng.pick([null, 'gzip', 'lz64', 'base64']) }
    case 1:
      text = truncate(rng, JSON.stringify(wrap(event)))
      break
    case 2:
      text = nestedJson(rng.pick([99, 100, 101, 5000, 200_000]), rng.pick(['object', 'array', 'mixed'] as const), JSON.stringify(wrap(event)))
      break
    case 3:
      text = JSON.stringify(wrap(mutate(rng, event)))
      break
    case 4:
      text = JSON.stringify(mutate(rng, wrap(event)))
      break
    case 5:
      text = pollutionJson(rng, wrap(event) as Record<string, unknown>)
      break
    case 6:
      text = invalidUtf8(rng, JSON.stringify(wrap(event)))
      break
    case 7:
      text = JSON.stringify(wrap({ ...event, properties: randomJson(rng, 4), event: hostileString(rng), distinct_id: hostileString(rng) }))
      break
    case 8:
      text = JSON.stringify(randomJson(rng, 4))
      break
    default:
      if (rng.chance(0.02)) return { body: rng.pick(bombBodies()), contentType: undefined, contentEncoding: undefined, compression: rng.pick([null, 'lz64', 'base64']) }
      text = JSON.stringify(wrap(event))
  }
  const encoded = encode(text, pickEncoding(rng, text.length))
  const compression = new URLSearchParams(encoded.query).get('compression')
  return { body: encoded.body, contentType: encoded.headers['content-type'], contentEncoding: encoded.headers['content-encoding'], compression }
}

t.test(`capture core under ${RUN.cases} hostile bodies (FUZZ_SEED=${RUN.seed})`, async (t) => {
  fuzzCases(t, RUN, 'body', (rng) => {
    const input = body(rng)
    // A tenth of the bodies go to /engage/, where events without a name become $identify.
    const engage = rng.chance(0.1)
    context.engage = engage ? 'nameless' : undefined
    const decoded = decodeBodyBytes({ ...input, maxBytes: MAX_BYTES })
    lastUuid = null
    const parsed = parsePayload(decoded.text, context)
    const encoded = encodePayload(parsed)
    if (parsed.events.length === 1) {
      const inputs = { teamId: 7, anonymizeIps: false, now: context.now, ip: context.ip, queryUnderscore: null, uuid: lastUuid, engage }
      const spooled = encodeCapture(parsed, inputs, decoded.bytes ?? Buffer.from(decoded.text, 'utf8'))
      const frame = readFrame(Buffer.from(spooled.frames), 0)
      if (frame.status !== 'ok') throw new Error(`the capture frame does not read back: ${frame.status}`)
      const again = decodeCapture(frame.payload)
      // The events were completed in place: compare them as they are now, not as they were parsed.
      const json = (p: { events: unknown; warnings: unknown }) => JSON.parse(JSON.stringify([p.events, p.warnings])) as unknown
      if (!isDeepStrictEqual(json(again), json(parsed))) {
        throw new Error(`the consumer's parse differs: ${JSON.stringify(again).slice(0, 300)} vs ${JSON.stringify(parsed).slice(0, 300)}`)
      }
    }
    for (const e of parsed.events) {
      const ok =
        typeof e.event === 'string' && e.event.length > 0 && e.event.length <= 200 &&
        typeof e.distinct_id === 'string' && e.distinct_id.trim() !== '' && [...e.distinct_id].length <= 200 &&
        UUID.test(e.uuid) && Number.isFinite(e.timestamp) && e.team_id === 7 &&
        typeof e.properties === 'object' && e.properties !== null && !Array.isArray(e.properties)
      if (!ok) throw new Error(`malformed event: ${JSON.stringify(e).slice(0, 300)}`)
    }
    if (encoded.offsets.length !== parsed.events.length + 1) throw new Error('frames do not match events')
    return `accepted ${parsed.events.length > 0 ? 'some' : 'none'}`
  })
})
