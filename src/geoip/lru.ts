/**
 * A bounded least-recently-used map: a Map keeps insertion order, so re-inserting on read moves a key to
 * the young end and the oldest key is always the first one. Used for GeoIP results and hot persons.
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>()

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('Lru capacity must be a positive integer')
  }

  get size(): number {
    return this.map.size
  }

  /** The value, marked as just used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.map.get(key)
    if (value === undefined) return undefined
    this.map.delete(key)
    this.map.set(key, value)
    return value
  }

  has(key: K): boolean {
    return this.map.has(key)
  }

  set(key: K, value: V): void {
    if (this.map.has(key)) this.map.delete(key)
    else if (this.map.size >= this.capacity) this.map.delete(this.map.keys().next().value as K)
    this.map.set(key, value)
  }

  delete(key: K): void {
    this.map.delete(key)
  }

  clear(): void {
    this.map.clear()
  }
}
