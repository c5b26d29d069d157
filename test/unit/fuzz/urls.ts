/**
 * URLs for the URL functions' tests: well formed ones with every part (userinfo, labels of several bytes, ports,
 * parameters with and without values, fragments), often broken by one piece put anywhere, and strings of the
 * pieces that decide ClickHouse's scans (delimiters, restricted symbols, `%` escapes, loose bytes, a scheme of 13
 * and 14 bytes, a first character of several bytes).
 */
import type { Rng } from './rng.js'

const PIECES = ['http', 'https', 'svn+ssh', 'a', 'www.', 'x', '.', ':', '/', '//', '://', '?', '#', '&', '=', '@', '%', '%2', '%20', '%zz', '%F', 'é', '\uDCFF', '\uDCC3', '\uDCA9', ' ', '[', ']', ';', '+', '-', '1', 'com', 'co.uk', '\t', '<', '~', '😀', 'a=', 'abcdefghij', 'W', '\\', '^', '|', '{', '\0']
const STARTS = ['http://', 'https://', '//', 'a://', '', 'http:/', 'abcdefghijklm://', 'abcdefghijklmn://', '\uDCFFa://', 'é://']
const LABELS = ['www', 'x', 'news', 'é', '1', 'co', 'a-b', '', 'W', '😀']

function wellFormed(rng: Rng): string {
  let url = rng.pick(['http://', 'https://', '//', '', 'svn+ssh://', 'http:/', 'x:'])
  if (rng.chance(0.2)) url += `${rng.pick(['user', 'u:p', 'a.b', ''])}@`
  url += Array.from({ length: rng.range(1, 3) }, () => rng.pick(LABELS)).join('.') + rng.pick(['.com', '.co.uk', '.1', '', '.', '.com.'])
  if (rng.chance(0.3)) url += rng.pick([':80', ':', ':8080', ':0000443', ':65536', ':8x'])
  if (rng.chance(0.6)) url += rng.pick(['/', '/a/b', '//c', '/p q', '/é'])
  if (rng.chance(0.5)) {
    const pairs = Array.from({ length: rng.range(1, 3) }, () => rng.pick(['a', 'b', 'ba', '', 'é', 'a=']) + rng.pick(['=1', '=', '', '=%20x', '=a=b']))
    url += `?${pairs.join(rng.pick(['&', '&', ';', '?']))}`
  }
  if (rng.chance(0.3)) url += `#${rng.pick(['f', 'a=2', '?a=3', '', '&a=4'])}`
  if (rng.chance(0.3)) {
    const at = rng.int(url.length + 1)
    url = url.slice(0, at) + rng.pick(PIECES) + url.slice(at)
  }
  return url
}

/** A URL, or something in its place, with loose bytes as hogql-values.ts's textBytes writes them. */
export function randomUrl(rng: Rng): string {
  if (rng.chance(0.6)) return wellFormed(rng)
  let text = rng.chance(0.4) ? rng.pick(STARTS) : ''
  for (let i = rng.int(12); i > 0; i--) text += rng.pick(PIECES)
  return text
}
