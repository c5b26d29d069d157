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
