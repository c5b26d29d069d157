/**
 * A least-recently-used map bounded both in entries and in bytes (each entry's size given by its writer).
 * An entry larger than the whole byte budget is not kept; storing one evicts the least recently used
 * entries until both bounds hold.
 *
 * Not src/geoip's CLOCK ring: the ring reuses one fixed slot per insertion, and a byte bound may have to free
 * several entries for one large answer. Its reason to exist — a Map's delete + set on every read costing the
 * consumer per event — does not apply to query answers, read a few times a second at most.
 */
export class ByteLru<V> {
  readonly #entries = new Map<string, { value: V; bytes: number }>()
  #bytes = 0

  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.#entries.size
  }

  get bytes(): number {
    return this.#bytes
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    return entry.value
  }

  /** Stores the value (replacing the key's previous one); false when it can never fit. */
  set(key: string, value: V, bytes: number): boolean {
    this.delete(key)
    if (this.maxEntries < 1 || bytes > this.maxBytes) return false
    this.#entries.set(key, { value, bytes })
    this.#bytes += bytes
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.maxEntries && this.#bytes <= this.maxBytes) break
      this.#entries.delete(oldest)
      this.#bytes -= entry.bytes
    }
    return true
  }

  delete(key: string): void {
    const entry = this.#entries.get(key)
    if (entry === undefined) return
    this.#entries.delete(key)
    this.#bytes -= entry.bytes
  }
}
