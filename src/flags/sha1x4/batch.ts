/**
 * Bucketing hashes of a whole flag set for one identifier in one call: `sha1Hash(prefix + id + salt)` for
 * every prefix of a table, four SHA-1s at a time in SIMD lanes (module.ts). One `crypto.hash` costs
 * ≈270 ns here, nearly all of it the call into C++ and the strings on either side; a lane of the batch
 * costs a fraction of that, so hashing every flag up front beats hashing the ones that turn out to need it.
 * Results are bit-identical to `sha1Hash` (a test holds them equal on random, non-ASCII and multi-block input).
 */
import { ENTRY_BYTES, ID, MAX_ID_BYTES, MAX_MESSAGE_BYTES, SALT, SCRATCH_END, sha1x4ModuleBytes } from './module.js'

type HashExport = (table: number, count: number, idLen: number, saltLen: number, out: number) => void

/** The WebAssembly API used here (the project's TypeScript libs carry no WebAssembly types). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer }
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> }
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly

let compiled: object | null | undefined
/** Compiled once per thread; null where WebAssembly SIMD is missing (callers then hash one at a time). */
function wasmModule(): object | null {
  if (compiled === undefined) {
    try {
      compiled = new wasm.Module(sha1x4ModuleBytes())
    } catch {
      compiled = null
    }
  }
  return compiled
}

const encoder = new TextEncoder()

/** Identifiers up to this many UTF-8 bytes are batched (PostHog caps distinct ids at 200 characters). */
export const MAX_BATCH_ID_BYTES = 256
/** Prefixes (with their salt) that leave room for such an identifier; longer flag keys are hashed one by one. */
const MAX_PREFIX_BYTES = MAX_MESSAGE_BYTES - MAX_BATCH_ID_BYTES

/** The salts PostHog appends after the identifier: none (rollout) and `"variant"`. */
const VARIANT_SALT = 'variant'

export interface BatchTable {
  /** Hash input before the identifier by output index; null where this table has nothing to hash. */
  prefixes: readonly (string | null)[]
  salt: '' | typeof VARIANT_SALT
}

/**
 * Identifiers come back: posthog-js asks on every page load, a server SDK without local evaluation on every
 * flag check, a mobile app on every start. So each table writes its results into a ring of slots in the
 * module's memory and remembers which identifier each slot holds: a known identifier is answered from its
 * slot, a new one takes the oldest slot. RING_BYTES bounds a table's ring (a 50-flag set keeps ≈2,600
 * identifiers); its pages become resident only as slots are first used. A batch belongs to one flag set and
 * is replaced with it, so a slot never outlives its prefixes.
 */
const RING_BYTES = 1024 * 1024
/** Also bounds the identifiers a small set keeps alive (≤ 256 bytes each). */
const MAX_RING_SLOTS = 10_000

interface LaidOutTable {
  offset: number
  count: number
  saltLength: number
  /** Outputs per slot (the flag set's length), and where the ring starts, in doubles of the memory. */
  width: number
  ringAt: number
  slots: number
  /** The slot of each identifier in the ring, and the identifier of each used slot. */
  slotOf: Map<string, number>
  idOf: string[]
  /** The slot the next new identifier takes. */
  next: number
}

const PAGE = 65536
const align16 = (n: number): number => (n + 15) & ~15

export class Sha1Batch {
  /** The module's memory as doubles: `run` answers an index into it. */
  readonly hashes: Float64Array
  readonly #hash: HashExport
  /** The ID region, where each new identifier is encoded. */
  readonly #idBytes: Uint8Array
  readonly #tables: LaidOutTable[]
  /** The identifier in the ID region, and how many bytes it took (-1: too long for the batch). */
  #id: string | null = null
  #idLength = -1

  private constructor(instance: { exports: Record<string, unknown> }, bytes: Uint8Array, tables: LaidOutTable[]) {
    this.hashes = new Float64Array(bytes.buffer)
    this.#hash = instance.exports.hash as HashExport
    this.#idBytes = bytes.subarray(ID, ID + MAX_ID_BYTES)
    this.#tables = tables
  }

  /** A batch over these tables, or null when WebAssembly SIMD is unavailable. */
  static create(tables: readonly BatchTable[]): Sha1Batch | null {
    const module = wasmModule()
    if (module === null) return null
    const encoded = tables.map((t) =>
      t.prefixes.map((p) => {
        if (p === null) return null
        const bytes: Uint8Array = Buffer.from(p)
        return bytes.length + t.salt.length <= MAX_PREFIX_BYTES ? bytes : null
      }),
    )
    // layout: scratch, then per table its prefix bytes, its entries and its outputs
    let size = SCRATCH_END
    const plans = encoded.map((prefixes) => {
      const entries = prefixes.map((b, index) => ({ b, index })).filter((e): e is { b: Uint8Array; index: number } => e.b !== null)
      // sorted by length, so the four lanes of a group mostly need the same number of blocks
      entries.sort((x, y) => x.b.length - y.b.length)
      const prefixAt = entries.map((e) => {
        const at = size
        size = align16(size + e.b.length + 16)
        return at
      })
      const tableAt = size
      size = align16(size + entries.length * ENTRY_BYTES)
      const width = prefixes.length
      const slots = Math.max(1, Math.min(MAX_RING_SLOTS, Math.floor(RING_BYTES / (width * 8 || 8))))
      const ringAt = size
      size = align16(size + slots * width * 8)
      return { entries, prefixAt, tableAt, ringAt, width, slots }
    })
    const memory = new wasm.Memory({ initial: Math.ceil((size + 16) / PAGE) })
    const instance = new wasm.Instance(module, { env: { memory } })
    const buffer = memory.buffer
    const bytes = new Uint8Array(buffer)
    const view = new DataView(buffer)
    // the salt region always holds "variant"; a table without salt passes length 0
    bytes.set(Buffer.from(VARIANT_SALT), SALT)
    const laidOut = plans.map((plan, t) => {
      plan.entries.forEach((e, k) => {
        bytes.set(e.b, plan.prefixAt[k])
        const entry = plan.tableAt + k * ENTRY_BYTES
        view.setInt32(entry, plan.prefixAt[k], true)
        view.setInt32(entry + 4, e.b.length, true)
        view.setInt32(entry + 8, e.index, true)
      })
      return {
        offset: plan.tableAt,
        count: plan.entries.length,
        saltLength: tables[t].salt.length,
        width: plan.width,
        ringAt: plan.ringAt / 8,
        slots: plan.slots,
        slotOf: new Map(),
        idOf: [],
        next: 0,
      }
    })
    return new Sha1Batch(instance, bytes, laidOut)
  }

  /**
   * Where the hashes of table `table` for `identifier` start in `hashes`, by output index (NaN: not batched,
   * hash it one by one), or -1 when the identifier is longer than MAX_BATCH_ID_BYTES. The slot is reused
   * for another identifier once the ring comes round: read it before the next call for the same table.
   */
  run(table: number, identifier: string): number {
    const t = this.#tables[table]
    const known = t.slotOf.get(identifier)
    if (known !== undefined) return t.ringAt + known * t.width
    if (identifier !== this.#id) {
      this.#id = identifier
      const { read, written } = encoder.encodeInto(identifier, this.#idBytes)
      this.#idLength = read === identifier.length && written <= MAX_BATCH_ID_BYTES ? written : -1
    }
    if (this.#idLength < 0) return -1
    const slot = t.next
    t.next = (slot + 1) % t.slots
    const at = t.ringAt + slot * t.width
    if (slot < t.idOf.length) t.slotOf.delete(t.idOf[slot])
    // a slot's first use: the outputs the table never writes must read NaN (the memory starts at zero)
    else this.hashes.fill(Number.NaN, at, at + t.width)
    t.idOf[slot] = identifier
    t.slotOf.set(identifier, slot)
    this.#hash(t.offset, t.count, this.#idLength, t.saltLength, at * 8)
    return at
  }
}
