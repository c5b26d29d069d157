/**
 * SipHash-2-4 with its 128-bit output (Aumasson and Bernstein's reference `siphash` with `outlen = 16`): a keyed
 * hash for short inputs. Node's crypto has no SipHash. The 64-bit state is kept as 32-bit halves, since BigInt
 * arithmetic would cost a heap number per step.
 */

/** v0..v3 as [high, low] pairs: v[0], v[1] is v0, and so on. */
type State = Uint32Array

function add(v: State, a: number, b: number): void {
  const lo = (v[a + 1] + v[b + 1]) >>> 0
  v[a] = (v[a] + v[b] + (lo < v[a + 1] ? 1 : 0)) >>> 0
  v[a + 1] = lo
}

function rotl(v: State, a: number, n: number): void {
  let hi = v[a]
  let lo = v[a + 1]
  if (n >= 32) {
    ;[hi, lo] = [lo, hi]
    n -= 32
  }
  if (n === 0) {
    v[a] = hi
    v[a + 1] = lo
    return
  }
  v[a] = ((hi << n) | (lo >>> (32 - n))) >>> 0
  v[a + 1] = ((lo << n) | (hi >>> (32 - n))) >>> 0
}

function xor(v: State, a: number, b: number): void {
  v[a] ^= v[b]
  v[a + 1] ^= v[b + 1]
}

function sipRound(v: State): void {
  add(v, 0, 2), rotl(v, 2, 13), xor(v, 2, 0), rotl(v, 0, 32)
  add(v, 4, 6), rotl(v, 6, 16), xor(v, 6, 4)
  add(v, 0, 6), rotl(v, 6, 21), xor(v, 6, 0)
  add(v, 4, 2), rotl(v, 2, 17), xor(v, 2, 4), rotl(v, 4, 32)
}

function compress(v: State, hi: number, lo: number): void {
  v[6] ^= hi
  v[7] ^= lo
  sipRound(v)
  sipRound(v)
  v[0] ^= hi
  v[1] ^= lo
}

/** The two 64-bit output words as [high, low, high, low] 32-bit halves. */
export function sipHash128(key: Uint8Array, message: Uint8Array): Uint32Array {
  if (key.length !== 16) throw new Error('SipHash takes a 16-byte key')
  const k = new DataView(key.buffer, key.byteOffset, 16)
  const m = new DataView(message.buffer, message.byteOffset, message.length)
  const k0h = k.getUint32(4, true), k0l = k.getUint32(0, true), k1h = k.getUint32(12, true), k1l = k.getUint32(8, true)
  const v = Uint32Array.of(k0h ^ 0x736f6d65, k0l ^ 0x70736575, k1h ^ 0x646f7261, k1l ^ 0x6e646f6d ^ 0xee, k0h ^ 0x6c796765, k0l ^ 0x6e657261, k1h ^ 0x74656462, k1l ^ 0x79746573)
  const n = message.length
  const whole = n - (n % 8)
  for (let i = 0; i < whole; i += 8) compress(v, m.getUint32(i + 4, true), m.getUint32(i, true))
  // The last block: the remaining bytes little-endian, the length's low byte on top.
  const last = new Uint8Array(8)
  last.set(message.subarray(whole))
  last[7] = n & 0xff
  const l = new DataView(last.buffer)
  compress(v, l.getUint32(4, true), l.getUint32(0, true))
  const out = new Uint32Array(4)
  for (const [xorByte, at] of [[0xee, 0], [0xdd, 2]] as const) {
    v[at === 0 ? 5 : 3] ^= xorByte
    for (let r = 0; r < 4; r++) sipRound(v)
    out[at] = v[0] ^ v[2] ^ v[4] ^ v[6]
    out[at + 1] = v[1] ^ v[3] ^ v[5] ^ v[7]
  }
  return out
}
