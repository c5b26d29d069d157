/**
 * SipHash-2-4 with its 128-bit output (Aumasson and Bernstein's reference `siphash` with `outlen = 16`): a keyed
 * hash for short inputs. Node's crypto has no SipHash. Each 64-bit word is two 32-bit halves in local variables:
 * 1.9–2.7 µs for a 150-byte input here, against 4.2–5.2 µs with the state in a Uint32Array (measured side by side).
 */

/** The two 64-bit output words as [high, low, high, low] 32-bit halves. */
export function sipHash128(key: Uint8Array, message: Uint8Array): Uint32Array {
  if (key.length !== 16) throw new Error('SipHash takes a 16-byte key')
  const k = new DataView(key.buffer, key.byteOffset, 16)
  const k0h = k.getUint32(4, true), k0l = k.getUint32(0, true), k1h = k.getUint32(12, true), k1l = k.getUint32(8, true)
  let v0h = k0h ^ 0x736f6d65, v0l = k0l ^ 0x70736575, v1h = k1h ^ 0x646f7261, v1l = k1l ^ 0x6e646f6d ^ 0xee
  let v2h = k0h ^ 0x6c796765, v2l = k0l ^ 0x6e657261, v3h = k1h ^ 0x74656462, v3l = k1l ^ 0x79746573
  let t = 0, lo = 0

  // One SipRound. An addition's carry is whether the low half wrapped: the sum below either operand.
  const round = () => {
    lo = (v0l + v1l) >>> 0
    v0h = (v0h + v1h + (lo < v0l >>> 0 ? 1 : 0)) >>> 0
    v0l = lo
    t = ((v1h << 13) | (v1l >>> 19)) ^ v0h
    v1l = ((v1l << 13) | (v1h >>> 19)) ^ v0l
    v1h = t
    t = v0h
    v0h = v0l
    v0l = t
    lo = (v2l + v3l) >>> 0
    v2h = (v2h + v3h + (lo < v2l >>> 0 ? 1 : 0)) >>> 0
    v2l = lo
    t = ((v3h << 16) | (v3l >>> 16)) ^ v2h
    v3l = ((v3l << 16) | (v3h >>> 16)) ^ v2l
    v3h = t
    lo = (v0l + v3l) >>> 0
    v0h = (v0h + v3h + (lo < v0l >>> 0 ? 1 : 0)) >>> 0
    v0l = lo
    t = ((v3h << 21) | (v3l >>> 11)) ^ v0h
    v3l = ((v3l << 21) | (v3h >>> 11)) ^ v0l
    v3h = t
    lo = (v2l + v1l) >>> 0
    v2h = (v2h + v1h + (lo < v2l >>> 0 ? 1 : 0)) >>> 0
    v2l = lo
    t = ((v1h << 17) | (v1l >>> 15)) ^ v2h
    v1l = ((v1l << 17) | (v1h >>> 15)) ^ v2l
    v1h = t
    t = v2h
    v2h = v2l
    v2l = t
  }
  const compress = (mh: number, ml: number) => {
    v3h ^= mh
    v3l ^= ml
    round()
    round()
    v0h ^= mh
    v0l ^= ml
  }
  const finish = () => {
    for (let r = 0; r < 4; r++) round()
    return [(v0h ^ v1h ^ v2h ^ v3h) >>> 0, (v0l ^ v1l ^ v2l ^ v3l) >>> 0]
  }

  const m = new DataView(message.buffer, message.byteOffset, message.length)
  const n = message.length
  const whole = n - (n % 8)
  for (let i = 0; i < whole; i += 8) compress(m.getUint32(i + 4, true), m.getUint32(i, true))
  // The last block: the remaining bytes little-endian, the length's low byte on top.
  let lastLo = 0
  let lastHi = (n & 0xff) << 24
  for (let i = whole; i < n; i++) {
    const shift = (i - whole) * 8
    if (shift < 32) lastLo |= message[i] << shift
    else lastHi |= message[i] << (shift - 32)
  }
  compress(lastHi, lastLo)
  v2l ^= 0xee
  const [h1, l1] = finish()
  v1l ^= 0xdd
  const [h2, l2] = finish()
  return Uint32Array.of(h1, l1, h2, l2)
}
