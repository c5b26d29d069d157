/**
 * Hostile values for the fuzz tests: strings full of SQL/ClickHouse metacharacters and odd Unicode,
 * prototype-pollution keys, random JSON of every type, deep nesting, invalid UTF-8, truncation, and bodies
 * in every encoding capture accepts, bombs included. Everything is drawn from an `Rng`, so a case is
 * reproduced by its seed and index.
 */
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import type { Rng } from './rng.js'

/** Strings that break naive SQL, ClickHouse literals, JSON, LIKE patterns, regexes, logs and URLs. */
export const METACHARACTERS = [
  "'",
  "''",
  "\\'",
  '\\',
  '\\\\',
  '"',
  '`',
  ';',
  "'; DROP TABLE events; --",
  "' OR '1'='1",
  '1) OR (1=1',
  "x' UNION ALL SELECT * FROM system.users --",
  "'||(SELECT version())||'",
  '{"a":', // JSON fragment
  '\u0000',
  'a\u0000b',
  '\n',
  '\r\n',
  '\t',
  '%',
  '_',
  '%_%',
  '*',
  '$',
  '${jndi:ldap://x/}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '%00',
  '%2e%2e%2f',
  '\u2028\u2029',
  '\ufeff',
  '\u202e',
  '\ud800', // lone high surrogate
  '\udfff', // lone low surrogate
  '😀',
  'Ω≈ç√∫',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '0x10',
  '@current',
  'phc_',
  'phx_',
  '$identify',
  '$create_alias',
  '$groupidentify',
  '$merge_dangerously',
  '$set',
  '$feature_flag_called',
  'toString',
  'hasOwnProperty',
  '__proto__',
  'constructor',
  'prototype',
]

/** Keys that pollute prototypes when copied with `target[key] = value`. */
export const POLLUTION_KEYS = ['__proto__', 'constructor', 'prototype', '__defineGetter__', 'valueOf', 'toJSON']

/** The property every pollution payload tries to plant; a canary flag and the unit tests look for it. */
export const POLLUTION_MARKER = 'fuzz_polluted'

/** Patterns that take exponential time on a backtracking engine. */
export const CATASTROPHIC_REGEXES = [
  '^(a+)+$',
  '(a|aa)+$',
  '(a|a?)+$',
  '^(([a-z])+.)+[A-Z]([a-z])+$',
  '(x+x+)+y',
  '(.*a){25}',
  '^(\\w+\\s?)*$',
  '(?=(a+))+b',
  '(a*)*\\1b',
  '((a+)+)+$',
  '[', // invalid
  '(?<', // invalid
  '\\', // invalid
  '(?P<name>a)',
  'a{99999999}',
  '(?i)Ω+$',
]

/** Inputs that make the patterns above blow up. */
export function regexVictim(rng: Rng): string {
  const n = rng.chance(0.97) ? rng.pick([20, 30, 2000]) : rng.pick([50_000, 100_000])
  return rng.pick(['a', 'x', 'ab', 'aΩ']).repeat(n).slice(0, n) + rng.pick(['!', 'b', '', 'Ω'])
}

export function hostileString(rng: Rng): string {
  switch (rng.int(8)) {
    case 0:
    case 1:
      return rng.pick(METACHARACTERS)
    case 2:
      return rng.pick(METACHARACTERS) + rng.pick(METACHARACTERS) + rng.pick(METACHARACTERS)
    case 3: {
      let s = ''
      const n = rng.size(40, 2000)
      for (let i = 0; i < n; i++) s += String.fromCharCode(rng.chance(0.8) ? rng.range(32, 126) : rng.int(0x10000))
      return s
    }
    case 4:
      return String(rng.int(1e9))
    case 5:
      return 'x'.repeat(rng.chance(0.05) ? 70_000 : rng.pick([0, 1, 199, 200, 201, 1000]))
    case 6:
      return `user-${rng.int(1000)}`
    default:
      return ''
  }
}

function hostileKey(rng: Rng): string {
  return rng.chance(0.25) ? rng.pick(POLLUTION_KEYS) : rng.chance(0.5) ? hostileString(rng).slice(0, 60) : `k${rng.int(20)}`
}

/** A random JSON value of any type; `depth` bounds nesting. */
export function randomJson(rng: Rng, depth = 3): unknown {
  const kind = depth <= 0 ? rng.int(6) : rng.int(9)
  switch (kind) {
    case 0:
      return null
    case 1:
      return rng.chance(0.5)
    case 2:
      return rng.pick([0, -1, 1, 0.5, -0, 1e308, -1e308, 2 ** 53 + 1, 1e-320, rng.int(1e6) - 5e5])
    case 3:
    case 4:
    case 5:
      return hostileString(rng)
    case 6:
    case 7: {
      const obj: Record<string, unknown> = {}
      const n = rng.size(4, 50)
      for (let i = 0; i < n; i++) setOwn(obj, hostileKey(rng), randomJson(rng, depth - 1))
      return obj
    }
    default:
      return Array.from({ length: rng.size(4, 50) }, () => randomJson(rng, depth - 1))
  }
}

/** A value of a different kind than `value` (wrong types in every field). */
export function wrongType(rng: Rng, value: unknown): unknown {
  for (;;) {
    const candidate = randomJson(rng, 2)
    if (typeof candidate !== typeof value || Array.isArray(candidate) !== Array.isArray(value) || rng.chance(0.2)) return candidate
  }
}

/**
 * Replaces or adds fields at random paths of a JSON object (a deep copy): wrong types, hostile strings,
 * pollution keys. The result is still an object, so it reaches the field checks instead of the JSON parser.
 */
export function mutate(rng: Rng, value: unknown, rounds = rng.range(1, 4)): unknown {
  const copy = JSON.parse(JSON.stringify(value)) as unknown
  for (let r = 0; r < rounds; r++) {
    let target = copy
    for (let hops = rng.int(3); hops > 0; hops--) {
      if (typeof target !== 'object' || target === null) break
      const keys = Object.keys(target)
      if (keys.length === 0) break
      const next = (target as Record<string, unknown>)[rng.pick(keys)]
      if (typeof next !== 'object' || next === null) break
      target = next
    }
    if (typeof target !== 'object' || target === null) continue
    const replacement = (old: unknown) => (rng.chance(0.5) ? wrongType(rng, old) : hostileString(rng))
    if (Array.isArray(target)) {
      // Only existing indexes or one more: a string key like "165126863" would make a huge sparse array.
      const index = rng.int(target.length + 1)
      target[index] = replacement(target[index])
      continue
    }
    const obj = target as Record<string, unknown>
    const keys = Object.keys(obj)
    const key = keys.length > 0 && rng.chance(0.7) ? rng.pick(keys) : hostileKey(rng)
    setOwn(obj, key, replacement(obj[key]))
  }
  return copy
}

/** `obj[key] = value` as JSON.parse does it: `__proto__` becomes an own property, not the prototype. */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
}

/** JSON text whose objects try to plant `POLLUTION_MARKER` on Object.prototype in every known way. */
export function pollutionJson(rng: Rng, inner: Record<string, unknown>): string {
  const marker = `{"${POLLUTION_MARKER}":true}`
  const payload = rng.pick([
    `"__proto__":${marker}`,
    `"constructor":{"prototype":${marker}}`,
    `"__proto__":{"__proto__":${marker}}`,
    `"prototype":${marker}`,
  ])
  const text = JSON.stringify(inner)
  // Plant it at the top level and inside every object-valued field name that matters.
  const plant = (match: string, offset: number, whole: string) => `${match}${payload}${whole[offset + match.length] === '}' ? '' : ','}`
  const planted = text.replace(/"(?:properties|\$set|\$set_once|\$groups|person_properties|group_properties|groups|filters|payloads)":\{/g, plant)
  return planted.replace(/^\{/, plant)
}

/** `{"a":{"a":…}}` or `[[[…]]]` nested `depth` times, optionally around a real payload. */
export function nestedJson(depth: number, kind: 'object' | 'array' | 'mixed', core = '1'): string {
  let open = ''
  let close = ''
  for (let i = 0; i < depth; i++) {
    const obj = kind === 'object' || (kind === 'mixed' && i % 2 === 0)
    open += obj ? '{"a":' : '['
    close = (obj ? '}' : ']') + close
  }
  return open + core + close
}

/** Cuts JSON text at a random point (never the whole text). */
export function truncate(rng: Rng, text: string): string {
  return text.slice(0, rng.int(Math.max(1, text.length)))
}

/** Replaces a few bytes inside string literals with invalid UTF-8 sequences. */
export function invalidUtf8(rng: Rng, text: string): Buffer {
  const buf = Buffer.from(text, 'utf8')
  const bad = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0x80], [0xf4, 0x90, 0x80, 0x80]]
  const parts: Buffer[] = []
  let last = 0
  for (let i = 0; i < buf.length; i++) {
    // Only inside quoted text, so the JSON structure survives and the bad bytes reach the string handling.
    if (buf[i] === 0x22 && i + 1 < buf.length && buf[i + 1] !== 0x3a && rng.chance(0.2)) {
      parts.push(buf.subarray(last, i + 1), Buffer.from(rng.pick(bad)))
      last = i + 1
    }
  }
  parts.push(buf.subarray(last))
  return Buffer.concat(parts)
}

export type Encoding = 'json' | 'gzip' | 'gzip-hint-plain' | 'lz64-form' | 'lz64-query' | 'base64-form' | 'base64-bare' | 'base64-gzip' | 'form-json'

export interface EncodedBody {
  body: Buffer
  headers: Record<string, string>
  /** Extra query string parameters (`compression=…`). */
  query: string
}

/** Encodes JSON text the ways PostHog SDKs send it. */
export function encode(text: string | Buffer, encoding: Encoding): EncodedBody {
  const raw = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8')
  const str = raw.toString('utf8')
  switch (encoding) {
    case 'json':
      return { body: raw, headers: { 'content-type': 'application/json' }, query: '' }
    case 'gzip':
      return { body: gzipSync(raw), headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, query: '' }
    case 'gzip-hint-plain':
      return { body: raw, headers: { 'content-type': 'application/json' }, query: 'compression=gzip-js' }
    case 'lz64-form':
      return { body: Buffer.from(`data=${encodeURIComponent(LZString.compressToBase64(str))}&compression=lz64`), headers: { 'content-type': 'application/x-www-form-urlencoded' }, query: '' }
    case 'lz64-query':
      return { body: Buffer.from(LZString.compressToBase64(str)), headers: { 'content-type': 'text/plain' }, query: 'compression=lz64' }
    case 'base64-form':
      return { body: Buffer.from(`data=${encodeURIComponent(raw.toString('base64'))}`), headers: { 'content-type': 'application/x-www-form-urlencoded' }, query: 'compression=base64' }
    case 'base64-bare':
      return { body: Buffer.from(raw.toString('base64')), headers: { 'content-type': 'text/plain' }, query: '' }
    case 'base64-gzip':
      return { body: Buffer.from(gzipSync(raw).toString('base64')), headers: { 'content-type': 'text/plain' }, query: 'compression=base64' }
    case 'form-json':
      return { body: raw, headers: { 'content-type': 'application/x-www-form-urlencoded' }, query: '' }
  }
}

export const ENCODINGS: readonly Encoding[] = ['json', 'gzip', 'gzip-hint-plain', 'lz64-form', 'lz64-query', 'base64-form', 'base64-bare', 'base64-gzip', 'form-json']

/** An encoding for a body of `size` bytes: lz-string compresses at ≈1 MB/s, so big bodies skip it. */
export function pickEncoding(rng: Rng, size: number): Encoding {
  const encoding = rng.pick(ENCODINGS)
  return size > 16 * 1024 && encoding.startsWith('lz64') ? 'gzip' : encoding
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

/**
 * What `LZString.compressToBase64` makes of 'a' repeated 1 + 2 + … + `phrases` times, written directly.
 * LZW codes that run as phrases each one 'a' longer than the last, so the stream is short, but lz-string
 * takes ≈5 s to compress 2.5 MB of it (it builds every phrase as a string). The widths and the end marker
 * follow lz-string's compressor; a test compares the two for small runs.
 */
export function lzRunOfA(phrases: number): string {
  const out: string[] = []
  let value = 0
  let bits = 0
  const put = (code: number, width: number) => {
    for (let i = 0; i < width; i++) {
      value = (value << 1) | ((code >> i) & 1)
      if (++bits === 6) {
        out.push(BASE64[value])
        value = 0
        bits = 0
      }
    }
  }
  let width = 2
  let enlargeIn = 2
  const counted = () => {
    if (--enlargeIn === 0) {
      enlargeIn = 2 ** width
      width++
    }
  }
  put(0, width) // a literal 8-bit character: 'a', which becomes code 3
  put(97, 8)
  counted()
  counted()
  for (let code = 4; code < phrases + 3; code++) {
    put(code, width) // the phrase of code n is n - 2 characters long
    counted()
  }
  put(2, width) // end of stream
  put(0, 6 - bits) // lz-string pads the open character with zero bits, or adds a zero one when none is open
  return out.join('').padEnd(Math.ceil(out.length / 4) * 4, '=')
}

/** Bombs are built once: a small body that decompresses far past every limit. */
let bombs: Buffer[] | null = null
export function bombBodies(): Buffer[] {
  if (bombs) return bombs
  const zeros = Buffer.alloc(64 * 1024 * 1024, 0x20)
  const gz = gzipSync(zeros, { level: 9 })
  const jsonBomb = gzipSync(Buffer.from(`{"api_key":"x","batch":[${'{"event":"e","properties":{"distinct_id":"d"}},'.repeat(400_000)}{}]}`), { level: 9 })
  // 2,623,195 characters from a 4 KB body: past the capture and decide limits (2 MB, 1 MB).
  const lz = Buffer.from(`data=${encodeURIComponent(lzRunOfA(2290))}&compression=lz64`)
  bombs = [gz, gzipSync(gz, { level: 9 }), jsonBomb, lz, Buffer.from(gz.toString('base64'))]
  return bombs
}

/** A random payload the decoder has to look at: raw bytes, broken encodings, magic numbers. */
export function randomBytesBody(rng: Rng): Buffer {
  const n = rng.size(600, 200_000)
  const body = rng.bytes(n)
  switch (rng.int(6)) {
    case 0:
      return Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08]), body]) // gzip magic, garbage after
    case 1:
      return Buffer.from(`data=${body.toString('latin1')}`, 'latin1')
    case 2:
      return Buffer.from(body.toString('base64'))
    default:
      return body
  }
}
