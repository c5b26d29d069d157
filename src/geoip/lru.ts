/**
 * A bounded cache with least-recently-used eviction, approximated the CLOCK way ("second chance"): a read
 * only marks its entry, and eviction walks from the oldest entry (a Map keeps insertion order), moving marked
 * entries to the young end with their mark cleared and evicting the first unmarked one. Every event the
 * ingest consumer handles reads the GeoIP and person caches; moving the key on each read (delete + set, and
 * a Map with many deleted slots rebuilds its table) made the consumer harness ≈1.5 % slower per event.
 * Used for GeoIP results and hot persons.
 */
interface Entry<V> {
  value: V
  used: boolean
}

export class Lru<K, V> {
  private readonly map = new Map<K, Entry<V>>()

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('Lru capacity must be a positive integer')
  }

  get size(): number {
    return this.map.size
  }

  /** The value, marked as just used; undefined when absent. */
  get(key: K): V | undefined {
    const entry = this.map.get(key)
    if (entry === undefined) return undefined
    entry.used = true
    return entry.value
  }

  has(key: K): boolean {
    return this.map.has(key)
  }

  set(key: K, value: V): void {
    const entry = this.map.get(key)
    if (entry !== undefined) {
      entry.value = value
      entry.used = true
      return
    }
    if (this.map.size >= this.capacity) this.evictOne()
    this.map.set(key, { value, used: false })
  }

  delete(key: K): void {
    this.map.delete(key)
  }

  clear(): void {
    this.map.clear()
  }

  /** Ends after at most size + 1 steps: every entry it moves has its mark cleared. */
  private evictOne(): void {
    for (const [key, entry] of this.map) {
      this.map.delete(key)
      if (!entry.used) return
      entry.used = false
      this.map.set(key, entry)
    }
  }
}
