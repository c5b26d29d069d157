import t from 'tap'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { decodeBody } from '../../../src/ingestion/decode.js'
import { decompressLz64, DecompressedTooLarge } from '../../../src/ingestion/lz64.js'

const json = JSON.stringify({ event: 'x', properties: { distinct_id: 'd', emoji: '😀' } })
const decode = (body: Buffer | string, opts: { contentType?: string; contentEncoding?: string; compression?: string; maxBytes?: number } = {}) =>
  decodeBody({
    body: Buffer.isBuffer(body) ? body : Buffer.from(body),
    contentType: opts.contentType,
    contentEncoding: opts.contentEncoding,
    compression: opts.compression ?? null,
    maxBytes: opts.maxBytes ?? 1024 * 1024,
  })

t.test('decodeBody reads every encoding PostHog SDKs send', async (t) => {
  const b64 = Buffer.from(json).toString('base64')
  const cases: Array<[string, Buffer | string, Parameters<typeof decode>[1]]> = [
    ['plain JSON', json, { contentType: 'application/json' }],
    ['gzip by Content-Encoding', gzipSync(json), { contentEncoding: 'gzip' }],
    ['gzip by magic bytes, text/plain (posthog-js)', gzipSync(json), { contentType: 'text/plain' }],
    ['gzip-js by query', gzipSync(json), { compression: 'gzip-js' }],
    ['lz64 form (old posthog-js, posthog-node form mode)', `data=${encodeURIComponent(LZString.compressToBase64(json))}&compression=lz64`, { contentType: 'application/x-www-form-urlencoded' }],
    ['base64 form (sendBeacon)', `data=${encodeURIComponent(b64)}`, { contentType: 'application/x-www-form-urlencoded', compression: 'base64' }],
    ['bare base64 without a hint', b64, { contentType: 'text/plain' }],
    ['base64 of gzip', gzipSync(json).toString('base64'), { compression: 'base64' }],
    ['JSON sent as a form by curl -d', json, { contentType: 'application/x-www-form-urlencoded' }],
    ['a gzip hint on plain JSON', json, { compression: 'gzip' }],
    ['a form without its content type', `data=${encodeURIComponent(b64)}&compression=base64`, { contentType: 'text/plain' }],
  ]
  for (const [name, body, opts] of cases) t.equal(decode(body, opts), json, name)
  const form = { contentType: 'application/x-www-form-urlencoded; charset=utf-8' }
  t.equal(decode(` \r\n\t${json}`, form), ` \r\n\t${json}`, 'JSON after blanks, sent as a form, is read as JSON')
  t.equal(decode(`${' '.repeat(64)}{}`, { contentType: 'application/json' }), `${' '.repeat(64)}{}`, 'JSON after 64 blanks, not labelled a form')
  t.throws(() => decode(`${' '.repeat(64)}{}`, form), { code: 'invalid_payload' }, 'a form whose first 64 bytes are blank is a form')
})

t.test('decodeBody refuses broken bodies with invalid_payload', async (t) => {
  t.throws(() => decode(Buffer.from([0x1f, 0x8b, 8, 0, 9, 9, 9])), { code: 'invalid_payload' }, 'broken gzip')
  t.throws(() => decode('!!!', { compression: 'lz64' }), { code: 'invalid_payload' }, 'broken lz64')
  t.throws(() => decode('%%%', { compression: 'base64' }), { code: 'invalid_payload' }, 'broken base64')
  t.throws(() => decode('foo=bar', { contentType: 'application/x-www-form-urlencoded' }), { code: 'invalid_payload' }, 'form without data')
  t.throws(() => decode('foo=bar', { contentType: 'Application/X-WWW-Form-Urlencoded;charset=UTF-8' }), { code: 'invalid_payload' }, 'the form type in any case')
  t.throws(() => decode(''), { code: 'invalid_payload' }, 'empty')
})

t.test('decompression stops at the size limit', async (t) => {
  const bomb = gzipSync(Buffer.alloc(5 * 1024 * 1024, 0x20))
  t.ok(bomb.length < 10_000, 'a small body')
  t.throws(() => decode(bomb, { maxBytes: 1024 * 1024 }), { code: 'request_too_large' })
  const lzBomb = LZString.compressToBase64('a'.repeat(2 * 1024 * 1024))
  t.throws(() => decode(lzBomb, { compression: 'lz64', maxBytes: 1024 * 1024 }), { code: 'request_too_large' })
})

t.test('decompressLz64 matches the lz-string package', async (t) => {
  let seed = 7
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  for (let i = 0; i < 300; i++) {
    let s = ''
    const n = Math.floor(rand() * 2000)
    for (let j = 0; j < n; j++) s += String.fromCharCode(rand() < 0.9 ? 32 + Math.floor(rand() * 90) : Math.floor(rand() * 0xd000))
    if (decompressLz64(LZString.compressToBase64(s), 1e9) !== (s === '' ? null : s) && s !== '') {
      t.fail(`mismatch for input ${i}`)
    }
  }
  t.pass('300 random strings round-trip')
  t.throws(() => decompressLz64(LZString.compressToBase64('x'.repeat(100_000)), 1000), DecompressedTooLarge)
  t.equal(decompressLz64('zzzzzzzz', 1000), null, 'garbage is not a stream (lz-string itself throws here)')
})
