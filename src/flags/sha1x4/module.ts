/**
 * The WebAssembly module behind `Sha1Batch`: SHA-1 of four messages at once in 128-bit SIMD lanes. Each
 * message is `prefix + identifier + salt` (a flag's `"<key>."`, the request's id, `""` or `"variant"`),
 * assembled, padded and hashed inside the module, and the answer is PostHog's bucketing number
 * (the first 60 bits over 2^60) written as a double.
 *
 * The bytes are generated here rather than shipped: the round function is 80 unrolled steps, which is
 * shorter to write as a loop over the generator than as text, and nothing is built or downloaded at install.
 *
 * Memory layout (bytes): the identifier at ID, the salt at SALT, four message slots at SLOTS, then whatever
 * the caller lays out (prefix bytes, tables, outputs). A table entry is 16 bytes: prefix offset, prefix
 * length, output index, unused. `hash(table, count, idLen, saltLen, out)` writes `out[outIndex]` (f64) for
 * each of the `count` entries.
 */

export const ID = 0
export const MAX_ID_BYTES = 1024
export const SALT = ID + MAX_ID_BYTES + 16
export const SLOTS = SALT + 32
/** Up to this many 64-byte blocks per message: prefix + identifier + salt ≤ MAX_BLOCKS × 64 − 9 bytes. */
export const MAX_BLOCKS = 8
export const MAX_MESSAGE_BYTES = MAX_BLOCKS * 64 - 9
/** A slot holds the longest message plus 16 bytes that 16-byte copies may overrun. */
const SLOT = MAX_BLOCKS * 64 + 16
export const SCRATCH_END = SLOTS + 4 * SLOT + 16
export const ENTRY_BYTES = 16

// ── a minimal encoder ──────────────────────────────────────────────────────────────────────────────
function uleb(n: number): number[] {
  const out: number[] = []
  do {
    let byte = n & 0x7f
    n >>>= 7
    if (n !== 0) byte |= 0x80
    out.push(byte)
  } while (n !== 0)
  return out
}

function sleb(n: number): number[] {
  const out: number[] = []
  for (;;) {
    const byte = n & 0x7f
    n >>= 7
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte)
      return out
    }
    out.push(byte | 0x80)
  }
}

const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body]
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()]
const name = (s: string): number[] => vec([...Buffer.from(s)].map((b) => [b]))

const I32 = 0x7f
const V128 = 0x7b
const EMPTY = 0x40

/** Instructions, as functions returning bytes. */
const op = {
  get: (i: number) => [0x20, ...uleb(i)],
  set: (i: number) => [0x21, ...uleb(i)],
  tee: (i: number) => [0x22, ...uleb(i)],
  i32: (n: number) => [0x41, ...sleb(n | 0)],
  f64: (x: number) => {
    const b = Buffer.alloc(8)
    b.writeDoubleLE(x)
    return [0x44, ...b]
  },
  load: (offset = 0) => [0x28, 2, ...uleb(offset)],
  store8: (offset = 0) => [0x3a, 0, ...uleb(offset)],
  storeF64: [0x39, 3, 0],
  add: [0x6a],
  sub: [0x6b],
  mul: [0x6c],
  shl: [0x74],
  shrU: [0x76],
  ltU: [0x49],
  geU: [0x4f],
  gtU: [0x4b],
  select: [0x1b],
  f64FromU32: [0xb8],
  f64Add: [0xa0],
  f64Mul: [0xa2],
  f64Div: [0xa3],
  block: [0x02, EMPTY],
  loop: [0x03, EMPTY],
  if: [0x04, EMPTY],
  end: [0x0b],
  br: (depth: number) => [0x0c, ...uleb(depth)],
  brIf: (depth: number) => [0x0d, ...uleb(depth)],
  // SIMD (0xfd prefix)
  vload: (offset = 0) => [0xfd, ...uleb(0), 4, ...uleb(offset)],
  vstore: (offset = 0) => [0xfd, ...uleb(11), 4, ...uleb(offset)],
  vconst: (bytes: number[]) => [0xfd, ...uleb(12), ...bytes],
  shuffle: (lanes: number[]) => [0xfd, ...uleb(13), ...lanes],
  splat: [0xfd, ...uleb(17)],
  extract: (lane: number) => [0xfd, ...uleb(27), lane],
  replace: (lane: number) => [0xfd, ...uleb(28), lane],
  veq: [0xfd, ...uleb(55)],
  vor: [0xfd, ...uleb(80)],
  vxor: [0xfd, ...uleb(81)],
  bitselect: [0xfd, ...uleb(82)],
  vshl: [0xfd, ...uleb(171)],
  vshrU: [0xfd, ...uleb(173)],
  vadd: [0xfd, ...uleb(174)],
}

function splatConst(word: number): number[] {
  const b = Buffer.alloc(16)
  for (let i = 0; i < 4; i++) b.writeUInt32LE(word >>> 0, i * 4)
  return op.vconst([...b])
}

const BSWAP = [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12]
const H = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0]
const K = [0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6]

// ── the function ───────────────────────────────────────────────────────────────────────────────────
// params
const TABLE = 0
const COUNT = 1
const ID_LEN = 2
const SALT_LEN = 3
const OUT = 4
// i32 locals
let next = 5
const G = next++
const ENTRY = next++
const P_LEN = next++
const MSG_LEN = next++
const P = next++
const END = next++
const NB = next++
const MAX_NB = next++
const J = next++
const BASE = next++
const DST = next++
const SRC = next++
const LEN = next++
const I32_LOCALS = next - 5
// v128 locals
const COUNTS = next++
const STATE = [next++, next++, next++, next++, next++]
const SAVED = [next++, next++, next++, next++, next++]
const RA = next++
const RB = next++
const W = Array.from({ length: 16 }, () => next++)
const TMP = next++
const V128_LOCALS = next - 5 - I32_LOCALS

const rotl = (local: number, n: number): number[] => [...op.get(local), ...op.i32(n), ...op.vshl, ...op.get(local), ...op.i32(32 - n), ...op.vshrU, ...op.vor]

/** dst[0..len) = src[0..len), in 16-byte steps that may write up to 15 bytes past the end. */
function copy(): number[] {
  return [
    ...op.i32(0), ...op.set(P),
    ...op.block, ...op.loop,
    ...op.get(P), ...op.get(LEN), ...op.geU, ...op.brIf(1),
    ...op.get(DST), ...op.get(P), ...op.add,
    ...op.get(SRC), ...op.get(P), ...op.add, ...op.vload(),
    ...op.vstore(),
    ...op.get(P), ...op.i32(16), ...op.add, ...op.set(P),
    ...op.br(0),
    ...op.end, ...op.end,
  ]
}

/** Builds lane `lane`'s padded message in its slot and records its block count. */
function assemble(lane: number): number[] {
  const slot = SLOTS + lane * SLOT
  return [
    // entry = table + min(g + lane, count - 1) * 16: a short last group repeats its last entry
    ...op.get(G), ...op.i32(lane), ...op.add,
    ...op.get(COUNT), ...op.i32(1), ...op.sub,
    ...op.get(G), ...op.i32(lane), ...op.add, ...op.get(COUNT), ...op.ltU,
    ...op.select,
    ...op.i32(ENTRY_BYTES), ...op.mul, ...op.get(TABLE), ...op.add, ...op.set(ENTRY),
    // prefix
    ...op.i32(slot), ...op.set(DST),
    ...op.get(ENTRY), ...op.load(0), ...op.set(SRC),
    ...op.get(ENTRY), ...op.load(4), ...op.tee(P_LEN), ...op.set(LEN),
    ...copy(),
    // identifier
    ...op.i32(slot), ...op.get(P_LEN), ...op.add, ...op.set(DST),
    ...op.i32(ID), ...op.set(SRC),
    ...op.get(ID_LEN), ...op.set(LEN),
    ...copy(),
    // salt
    ...op.i32(slot), ...op.get(P_LEN), ...op.add, ...op.get(ID_LEN), ...op.add, ...op.set(DST),
    ...op.i32(SALT), ...op.set(SRC),
    ...op.get(SALT_LEN), ...op.set(LEN),
    ...copy(),
    // 0x80, then zeros to the end of the last block
    ...op.get(P_LEN), ...op.get(ID_LEN), ...op.add, ...op.get(SALT_LEN), ...op.add, ...op.set(MSG_LEN),
    ...op.i32(slot), ...op.get(MSG_LEN), ...op.add, ...op.i32(0x80), ...op.store8(),
    ...op.get(MSG_LEN), ...op.i32(72), ...op.add, ...op.i32(6), ...op.shrU, ...op.set(NB),
    ...op.i32(slot), ...op.get(NB), ...op.i32(6), ...op.shl, ...op.add, ...op.set(END),
    ...op.i32(slot + 1), ...op.get(MSG_LEN), ...op.add, ...op.set(P),
    ...op.block, ...op.loop,
    ...op.get(P), ...op.get(END), ...op.geU, ...op.brIf(1),
    ...op.get(P), ...op.vconst(new Array(16).fill(0)), ...op.vstore(),
    ...op.get(P), ...op.i32(16), ...op.add, ...op.set(P),
    ...op.br(0),
    ...op.end, ...op.end,
    // the length in bits, big-endian in the last two bytes (store8 keeps the low byte)
    ...op.get(END), ...op.i32(2), ...op.sub, ...op.get(MSG_LEN), ...op.i32(5), ...op.shrU, ...op.store8(),
    ...op.get(END), ...op.i32(1), ...op.sub, ...op.get(MSG_LEN), ...op.i32(3), ...op.shl, ...op.store8(),
    ...op.get(COUNTS), ...op.get(NB), ...op.replace(lane), ...op.set(COUNTS),
    ...op.get(NB), ...op.get(MAX_NB), ...op.get(NB), ...op.get(MAX_NB), ...op.gtU, ...op.select, ...op.set(MAX_NB),
  ]
}

/** W[i] of the four lanes for the block at BASE, as big-endian words. */
function loadWords(): number[] {
  const out: number[] = []
  for (let i = 0; i < 16; i++) {
    out.push(...op.get(BASE), ...op.load(i * 4), ...op.splat)
    for (let lane = 1; lane < 4; lane++) out.push(...op.get(BASE), ...op.load(lane * SLOT + i * 4), ...op.replace(lane))
    out.push(...op.tee(TMP), ...op.get(TMP), ...op.shuffle(BSWAP), ...op.set(W[i]))
  }
  return out
}

function rounds(): number[] {
  const out: number[] = []
  let [a, b, c, d, e] = STATE
  for (let t = 0; t < 80; t++) {
    const w = W[t % 16]
    if (t >= 16) {
      out.push(...op.get(W[(t + 13) % 16]), ...op.get(W[(t + 8) % 16]), ...op.vxor, ...op.get(W[(t + 2) % 16]), ...op.vxor, ...op.get(w), ...op.vxor, ...op.set(TMP))
      out.push(...rotl(TMP, 1), ...op.set(w))
    }
    // f(b, c, d): choose, parity, majority, parity (bitselect(x, y, m) = (x & m) | (y & ~m))
    let f: number[]
    if (t < 20) f = [...op.get(c), ...op.get(d), ...op.get(b), ...op.bitselect]
    else if (t >= 40 && t < 60) f = [...op.get(d), ...op.get(b), ...op.get(b), ...op.get(c), ...op.vxor, ...op.bitselect]
    else f = [...op.get(b), ...op.get(c), ...op.vxor, ...op.get(d), ...op.vxor]
    out.push(...rotl(a, 5), ...f, ...op.vadd, ...op.get(e), ...op.vadd, ...splatConst(K[Math.floor(t / 20)]), ...op.vadd, ...op.get(w), ...op.vadd, ...op.set(e))
    out.push(...rotl(b, 30), ...op.set(b))
    ;[a, b, c, d, e] = [e, a, b, c, d]
  }
  return out
}

function hashBody(): number[] {
  const toDouble = (lane: number): number[] => [
    ...op.get(OUT),
    ...op.get(TABLE), ...op.get(G), ...op.i32(lane), ...op.add, ...op.i32(ENTRY_BYTES), ...op.mul, ...op.add, ...op.load(8),
    ...op.i32(3), ...op.shl, ...op.add,
    ...op.get(RA), ...op.extract(lane), ...op.f64FromU32, ...op.f64(2 ** 28), ...op.f64Mul,
    ...op.get(RB), ...op.extract(lane), ...op.i32(4), ...op.shrU, ...op.f64FromU32, ...op.f64Add,
    ...op.f64(2 ** 60), ...op.f64Div,
    ...op.storeF64,
  ]
  // nothing to do for an empty table (i32.eqz, return)
  const body: number[] = [...op.get(COUNT), 0x45, ...op.if, 0x0f, ...op.end]
  body.push(...op.i32(0), ...op.set(G))
  body.push(...op.loop)
  body.push(...op.i32(0), ...op.set(MAX_NB))
  for (let lane = 0; lane < 4; lane++) body.push(...assemble(lane))
  H.forEach((h, i) => body.push(...splatConst(h), ...op.set(STATE[i])))
  body.push(...op.i32(0), ...op.set(J))
  body.push(...op.loop)
  body.push(...op.i32(SLOTS), ...op.get(J), ...op.i32(6), ...op.shl, ...op.add, ...op.set(BASE))
  body.push(...loadWords())
  for (let i = 0; i < 5; i++) body.push(...op.get(STATE[i]), ...op.set(SAVED[i]))
  body.push(...rounds())
  for (let i = 0; i < 5; i++) body.push(...op.get(STATE[i]), ...op.get(SAVED[i]), ...op.vadd, ...op.set(STATE[i]))
  // lanes whose last block this was keep their state
  body.push(...op.get(J), ...op.i32(1), ...op.add, ...op.tee(J), ...op.splat, ...op.get(COUNTS), ...op.veq, ...op.set(TMP))
  body.push(...op.get(STATE[0]), ...op.get(RA), ...op.get(TMP), ...op.bitselect, ...op.set(RA))
  body.push(...op.get(STATE[1]), ...op.get(RB), ...op.get(TMP), ...op.bitselect, ...op.set(RB))
  body.push(...op.get(J), ...op.get(MAX_NB), ...op.ltU, ...op.brIf(0))
  body.push(...op.end)
  for (let lane = 0; lane < 4; lane++) {
    body.push(...op.get(G), ...op.i32(lane), ...op.add, ...op.get(COUNT), ...op.ltU, ...op.if, ...toDouble(lane), ...op.end)
  }
  body.push(...op.get(G), ...op.i32(4), ...op.add, ...op.tee(G), ...op.get(COUNT), ...op.ltU, ...op.brIf(0))
  body.push(...op.end)
  return body
}

/** The module's bytes: it imports `env.memory` (laid out by the caller) and exports `hash(table, count, idLen, saltLen, out)`. */
export function sha1x4ModuleBytes(): Uint8Array {
  const body = hashBody()
  const locals = vec([[...uleb(I32_LOCALS), I32], [...uleb(V128_LOCALS), V128]])
  const fn = [...locals, ...body, ...op.end]
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), ...vec([])]])),
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, ...uleb(1)]])),
    ...section(3, vec([uleb(0)])),
    ...section(7, vec([[...name('hash'), 0x00, ...uleb(0)]])),
    ...section(10, vec([[...uleb(fn.length), ...fn]])),
  ]
  return Uint8Array.from(bytes)
}
