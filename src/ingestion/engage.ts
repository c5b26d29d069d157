/**
 * Mixpanel-style engage updates (`{"$distinct_id", "$token", "$set": {...}}`, what old posthog-js sent to
 * `/engage/`) become `$identify` events, as Rust capture names every event without a name that reaches
 * `/engage` (posthog-semantics §3.2); on any other path such an event is a silent drop. `$set` and
 * `$set_once` stay at the top level (parse merges them into the properties, PostHog's normalizeEvent);
 * `$unset` (a list of keys, in Mixpanel and PostHog alike) is moved into the properties, where person
 * processing reads it. Mixpanel's other operations (`$add`, `$append`, `$union`, `$remove`, `$delete`)
 * have no PostHog meaning and are ignored.
 */
import { isPlainObject, type JsonObject } from '../common/json.js'

/** Which events without a name become `$identify`: all of them (a request to `/engage/`), or the legacy rule. */
export type EngageRule = 'nameless' | 'legacy'

/**
 * The rule for a request or spooled record: `engage` says whether it came to `/engage/`; a `capture` record
 * without the flag was spooled by a version that converted engage updates on every path (the legacy rule).
 */
export function engageRule(engage: boolean | undefined): EngageRule | undefined {
  return engage === undefined ? 'legacy' : engage ? 'nameless' : undefined
}

const ENGAGE_OPERATIONS = ['$set', '$set_once', '$unset', '$add', '$append', '$union', '$remove', '$delete'] as const

/**
 * Whether `item` becomes `$identify` under `rule`. `nameless`: no name at all (absent, null or empty, Rust
 * capture's `is_empty`). `legacy`: the rule of versions that converted on every path, kept to read the
 * `capture` records they spooled exactly as they acknowledged them: a single object or array item (not a
 * `batch` item) without a name, with a distinct id and an engage operation.
 */
export function becomesIdentify(item: JsonObject, rule: EngageRule, inBatch: boolean): boolean {
  if (item.event !== undefined && item.event !== null && (rule === 'legacy' || item.event !== '')) return false
  if (rule === 'nameless') return true
  if (inBatch || (item.$distinct_id === undefined && item.distinct_id === undefined)) return false
  return ENGAGE_OPERATIONS.some((op) => item[op] !== undefined)
}

/** The `$identify` event for an engage update. Properties that are not an object are left for parse to refuse. */
export function engageToIdentify(item: JsonObject): JsonObject {
  if (item.properties !== undefined && item.properties !== null && !isPlainObject(item.properties)) return { ...item, event: '$identify' }
  const properties: JsonObject = isPlainObject(item.properties) ? { ...item.properties } : {}
  const unset = item.$unset
  if (Array.isArray(unset) && properties.$unset === undefined) {
    properties.$unset = unset.filter((key): key is string => typeof key === 'string')
  }
  return { ...item, event: '$identify', properties }
}
