/**
 * Mixpanel-style engage objects (`{"$distinct_id", "$token", "$set": {...}}`, what old posthog-js sent to
 * `/engage/`) become `$identify` events, as PostHog capture turns `/engage` bodies into `$identify`
 * (posthog-semantics §3.2). The object is recognised by its shape: no event name, a distinct id, and at
 * least one engage operation. `$set` and `$set_once` stay at the top level (parse merges them into the
 * properties, PostHog's normalizeEvent); `$unset` (a list of keys, in Mixpanel and PostHog alike) is moved
 * into the properties, where person processing reads it. Mixpanel's other operations (`$add`, `$append`,
 * `$union`, `$remove`, `$delete`) have no PostHog meaning and are ignored.
 */
import { isPlainObject, type JsonObject } from '../common/json.js'

export const ENGAGE_OPERATIONS = ['$set', '$set_once', '$unset', '$add', '$append', '$union', '$remove', '$delete'] as const

/** True for an engage update: no event name, a distinct id, and an engage operation at the top level. */
export function isEngageObject(item: JsonObject): boolean {
  if (item.event !== undefined && item.event !== null) return false
  if (item.$distinct_id === undefined && item.distinct_id === undefined) return false
  for (const op of ENGAGE_OPERATIONS) if (item[op] !== undefined) return true
  return false
}

/** The `$identify` event for an engage update (see isEngageObject). */
export function engageToIdentify(item: JsonObject): JsonObject {
  const properties: JsonObject = isPlainObject(item.properties) ? { ...item.properties } : {}
  const unset = item.$unset
  if (Array.isArray(unset) && properties.$unset === undefined) {
    properties.$unset = unset.filter((key): key is string => typeof key === 'string')
  }
  return { ...item, event: '$identify', properties }
}
