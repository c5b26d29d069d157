/** Small helpers for values that arrive as untyped JSON. */

export type JsonObject = Record<string, unknown>

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** JSON.parse that returns undefined instead of throwing. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * Assigns like `target[key] = value`, except that a `__proto__` key becomes an own property instead of
 * replacing the object's prototype. JSON.parse creates such own keys; plain assignment would drop the data
 * and change the object's behaviour.
 */
export function setOwn(target: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    target[key] = value
  }
}

/**
 * A shallow copy that properties are then added to. Not `{ ...source }`: on Node 20 every property added to a
 * spread copy made a new hidden class, ≈1 µs each (15 GeoIP keys added to a spread copy of a $pageview's
 * properties: ≈16 µs; to this copy: ≈2 µs). The consumer's work for such an event went from ≈41 to ≈24 µs
 * (bench/micro/consumer.mjs). `__proto__` stays an own key, as with a spread.
 */
export function copyObject(source: JsonObject): JsonObject {
  return assignOwn({}, source)
}

/** `{ ...base, ...over }`, made as copyObject makes its copies. */
export function mergeObjects(base: JsonObject, over: JsonObject): JsonObject {
  return assignOwn(copyObject(base), over)
}

/** Object.assign, with setOwn's handling of `__proto__`. */
function assignOwn(target: JsonObject, source: JsonObject): JsonObject {
  for (const key of Object.keys(source)) setOwn(target, key, source[key])
  return target
}

/** `value` with object keys sorted at every depth, as json.dumps(sort_keys=True) writes them (equal values serialise equally). */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (!isPlainObject(value)) return value
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortedKeys(value[k])]))
}

/**
 * Deepest nesting of objects/arrays accepted in a JSON request body, capture's and the management API's:
 * serde_json's, so Rust capture's (its recursion limit of 128 refuses the 128th level). JSON.parse copes with
 * any depth, but JSON.stringify (spool records, API answers) and the recursive readers after it (Python-style
 * payload text, metric filters) overflow the stack at a few thousand levels, and the main thread's stack is
 * smaller than a worker's; a fixed limit keeps every later step safe.
 */
export const MAX_NESTING = 127

/**
 * True when objects/arrays in a parsed body nest deeper than `limit` (the outermost level counts as 1).
 * Checked on the parsed value rather than the text: V8's JSON.parse copes with any depth, and a walk of the
 * body's objects costs a fraction of scanning every character (a 1,000-event /batch/ body: ≈0.2 against
 * ≈1.8–2.5 ms, a quarter of parsing it).
 */
export function nestingExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (limit === 0) return true
  if (Array.isArray(value)) {
    for (const item of value) if (nestingExceeds(item, limit - 1)) return true
    return false
  }
  const object = value as Record<string, unknown>
  for (const key in object) if (nestingExceeds(object[key], limit - 1)) return true
  return false
}
