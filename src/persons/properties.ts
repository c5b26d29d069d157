/**
 * Pure rules of person processing, after PostHog's plugin-server (persons/person-update.ts,
 * person-merge-service.ts, common/persons/person-property-utils.ts, utils/db/utils.ts): which distinct ids may
 * never be merged, how `$set`/`$set_once`/`$unset` change a person's properties, and which event properties are
 * copied onto the person (`$initial_*` and latest-touch campaign values).
 */
import { copyObject, isPlainObject, mergeObjects, setOwn, type JsonObject } from '../common/json.js'
import { GEO_FIELDS, type GeoProperties } from '../geoip/index.js'

// ---------------------------------------------------------------------------------------------------------
// Illegal distinct ids: ids that stem from client bugs ("null", "undefined", …) are never merged.

const BARE_CASE_INSENSITIVE = ['anonymous', 'guest', 'distinctid', 'distinct_id', 'id', 'not_authenticated', 'email', 'undefined', 'true', 'false']
const BARE_CASE_SENSITIVE = ['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined']
const quoted = (ids: string[]) => [...ids, ...ids.map((id) => `'${id}'`), ...ids.map((id) => `"${id}"`)]
const CASE_INSENSITIVE = new Set(quoted(BARE_CASE_INSENSITIVE))
const CASE_SENSITIVE = new Set(quoted(BARE_CASE_SENSITIVE))

export function isDistinctIdIllegal(id: string): boolean {
  return id.trim() === '' || CASE_INSENSITIVE.has(id.toLowerCase()) || CASE_SENSITIVE.has(id)
}

// ---------------------------------------------------------------------------------------------------------
// Event kinds

/** Events handled by a separate pipeline in PostHog: they never change person properties. */
export const NO_PERSON_UPDATE_EVENTS: ReadonlySet<string> = new Set(['$exception', '$$heatmap'])
/** Events that only make sense with a person; with `$process_person_profile: false` they are dropped. */
export const PERSON_ONLY_EVENTS: ReadonlySet<string> = new Set(['$identify', '$create_alias', '$merge_dangerously', '$groupidentify'])
/** Events that get no `$initial_*`/campaign copies. */
const NO_INITIAL_PROPERTY_EVENTS: ReadonlySet<string> = new Set(['$snapshot', '$performance_event'])

// ---------------------------------------------------------------------------------------------------------
// Properties copied from events to persons

const EVENT_TO_PERSON = [
  '$app_build', '$app_name', '$app_namespace', '$app_version',
  '$browser', '$browser_version', '$device_type', '$current_url', '$pathname',
  '$os', '$os_name', '$os_version', '$referring_domain', '$referrer',
  '$screen_height', '$screen_width', '$viewport_height', '$viewport_width', '$raw_user_agent',
]
const CAMPAIGN = [
  'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_name', 'utm_term',
  'gclid', 'gad_source', 'gclsrc', 'dclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'twclid', 'li_fat_id',
  'mc_cid', 'igshid', 'ttclid', 'rdt_cid', 'irclid', '_kx', 'epik', 'qclid', 'sccid',
]
/** property → its `$initial_` name (`$browser` → `$initial_browser`, `utm_source` → `$initial_utm_source`). */
const INITIAL_PAIRS: ReadonlyArray<readonly [string, string]> = [...EVENT_TO_PERSON, ...CAMPAIGN].map(
  (key) => [key, `$initial_${key.replace('$', '')}`] as const,
)

function objectOrEmpty(value: unknown): JsonObject {
  return isPlainObject(value) ? value : {}
}

/**
 * Copies device, page and campaign properties of the event into `$set` (latest value, unless `$set` already
 * has the key) and into `$set_once` as `$initial_<name>` (unless null or already there). `$os_name` is an alias
 * of `$os` for the initial value; server SDKs (`$is_server: true`) don't lift their host's `$os`.
 * Mutates and returns `properties`, and adds to its `$set`/`$set_once` objects in place (see ownObject).
 */
export function addInitialAndCampaignProperties(event: string, properties: JsonObject): JsonObject {
  if (NO_INITIAL_PROPERTY_EVENTS.has(event)) return properties
  const skipHostOs = properties.$is_server === true
  let set: JsonObject | null = null
  let setOnce: JsonObject | null = null
  for (let i = 0; i < INITIAL_PAIRS.length; i++) {
    // An indexed array, not a Map: iterating a Map allocates an entry array per key, for every event.
    const [key, initialKey] = INITIAL_PAIRS[i]
    if (!Object.hasOwn(properties, key)) continue
    if (skipHostOs && (key === '$os' || key === '$os_version')) continue
    if (set === null || setOnce === null) {
      set = ownObject(properties, '$set')
      setOnce = ownObject(properties, '$set_once')
    }
    const value = properties[key]
    if (!Object.hasOwn(set, key)) setOwn(set, key, value)
    if (value !== null && value !== undefined && !Object.hasOwn(setOnce, initialKey)) setOnce[initialKey] = value
  }
  if (set === null || setOnce === null) return properties
  if (Object.hasOwn(properties, '$os_name') && !skipHostOs) {
    const osName = properties.$os_name
    if (osName !== null && osName !== undefined && !Object.hasOwn(setOnce, '$initial_os')) setOnce.$initial_os = osName
    delete set.$os_name
    delete setOnce.$initial_os_name
  }
  return properties
}

/**
 * The event's `$set`/`$set_once` object to extend in place (a new empty one when it has none, or not an
 * object), instead of a copy: copies were a fifth of the consumer's allocations. addGeoProperties extends
 * them in place too. The objects belong to the event being processed (the person stage works on a shallow
 * copy of its properties), and applying both additions to the same event again — a batch redone event by
 * event after a rollback — gives the same result: the keys they add are then present with the same values
 * (the stage tests redo such a batch).
 */
function ownObject(properties: JsonObject, key: '$set' | '$set_once'): JsonObject {
  const value = properties[key]
  if (isPlainObject(value)) return value
  const created: JsonObject = {}
  properties[key] = created
  return created
}

/**
 * PostHog's GeoIP transformation: the looked-up keys go onto the event, and into `$set` (every GeoIP key,
 * null when unknown, overriding client values) and `$set_once` as `$initial_geoip_*`. A client's own
 * `$set`/`$set_once` is extended in place (see ownObject).
 *
 * The event's own keys are returned as JSON members (`"$geoip_city_name":"…",…`) to append to the stored
 * properties' text, not added to the object: they are the same for every event from an address, so they are
 * serialised once per lookup result (the GeoIP cache hands out the same object). Adding and stringifying
 * them for every event was ≈15 % of the consumer harness (bench/micro/consumer.mjs). Keys the client sent
 * under those names are removed, so the stored JSON has each key once, with GeoIP's value as before.
 */
const GEO_KEYS = GEO_FIELDS.map((field) => [`$geoip_${field}`, `$initial_geoip_${field}`] as const)
const EVENT_MEMBERS = new WeakMap<GeoProperties, string>()

export function addGeoProperties(properties: JsonObject, geo: GeoProperties): string {
  const set = properties.$set
  const setOnce = properties.$set_once
  if (isPlainObject(set)) for (const [key] of GEO_KEYS) set[key] = geo[key] ?? null
  else properties.$set = geoSet(geo)
  if (isPlainObject(setOnce)) for (const [key, initialKey] of GEO_KEYS) setOnce[initialKey] = geo[key] ?? null
  else properties.$set_once = geoSetOnce(geo)
  let members = EVENT_MEMBERS.get(geo)
  if (members === undefined) {
    const own: JsonObject = {}
    for (const [key] of GEO_KEYS) if (Object.hasOwn(geo, key)) own[key] = geo[key] ?? null
    members = JSON.stringify(own).slice(1, -1)
    EVENT_MEMBERS.set(geo, members)
  }
  for (const [key] of GEO_KEYS) if (Object.hasOwn(geo, key) && Object.hasOwn(properties, key)) delete properties[key]
  return members
}

/*
 * The usual case, an event without `$set`/`$set_once`, gets them as literals of every GeoIP key. Built key
 * by key, an object past 16 keys becomes a dictionary, and JSON.stringify of the stored row was then the
 * consumer's largest cost (≈23 → ≈20 µs an event with GeoIP, bench/micro/consumer.mjs). The unit tests check
 * that both list exactly GEO_FIELDS.
 */
function geoSet(geo: GeoProperties): JsonObject {
  return {
    $geoip_city_name: geo.$geoip_city_name ?? null,
    $geoip_city_confidence: geo.$geoip_city_confidence ?? null,
    $geoip_subdivision_2_name: geo.$geoip_subdivision_2_name ?? null,
    $geoip_subdivision_2_code: geo.$geoip_subdivision_2_code ?? null,
    $geoip_subdivision_1_name: geo.$geoip_subdivision_1_name ?? null,
    $geoip_subdivision_1_code: geo.$geoip_subdivision_1_code ?? null,
    $geoip_country_name: geo.$geoip_country_name ?? null,
    $geoip_country_code: geo.$geoip_country_code ?? null,
    $geoip_continent_name: geo.$geoip_continent_name ?? null,
    $geoip_continent_code: geo.$geoip_continent_code ?? null,
    $geoip_postal_code: geo.$geoip_postal_code ?? null,
    $geoip_latitude: geo.$geoip_latitude ?? null,
    $geoip_longitude: geo.$geoip_longitude ?? null,
    $geoip_accuracy_radius: geo.$geoip_accuracy_radius ?? null,
    $geoip_time_zone: geo.$geoip_time_zone ?? null,
  }
}

function geoSetOnce(geo: GeoProperties): JsonObject {
  return {
    $initial_geoip_city_name: geo.$geoip_city_name ?? null,
    $initial_geoip_city_confidence: geo.$geoip_city_confidence ?? null,
    $initial_geoip_subdivision_2_name: geo.$geoip_subdivision_2_name ?? null,
    $initial_geoip_subdivision_2_code: geo.$geoip_subdivision_2_code ?? null,
    $initial_geoip_subdivision_1_name: geo.$geoip_subdivision_1_name ?? null,
    $initial_geoip_subdivision_1_code: geo.$geoip_subdivision_1_code ?? null,
    $initial_geoip_country_name: geo.$geoip_country_name ?? null,
    $initial_geoip_country_code: geo.$geoip_country_code ?? null,
    $initial_geoip_continent_name: geo.$geoip_continent_name ?? null,
    $initial_geoip_continent_code: geo.$geoip_continent_code ?? null,
    $initial_geoip_postal_code: geo.$geoip_postal_code ?? null,
    $initial_geoip_latitude: geo.$geoip_latitude ?? null,
    $initial_geoip_longitude: geo.$geoip_longitude ?? null,
    $initial_geoip_accuracy_radius: geo.$geoip_accuracy_radius ?? null,
    $initial_geoip_time_zone: geo.$geoip_time_zone ?? null,
  }
}

// ---------------------------------------------------------------------------------------------------------
// Write filtering

/** Events that always write every change to their person. */
const PERSON_EVENTS: ReadonlySet<string> = new Set(['$identify', '$create_alias', '$merge_dangerously', '$set'])

/**
 * Properties that change often and are not worth a person write on their own (PostHog's
 * FILTERED_PERSON_UPDATE_PROPERTIES): a change limited to existing keys of this list is not written, except by
 * person events. The values still reach the stored event through its `$set`.
 */
export const FILTERED_PERSON_UPDATE_PROPERTIES: ReadonlySet<string> = new Set([
  '$current_url', '$pathname', '$referring_domain', '$referrer',
  '$screen_height', '$screen_width', '$viewport_height', '$viewport_width',
  '$browser', '$browser_version', '$device_type', '$raw_user_agent', '$os', '$os_name', '$os_version',
  '$geoip_postal_code', '$geoip_time_zone', '$geoip_latitude', '$geoip_longitude', '$geoip_accuracy_radius',
  '$geoip_subdivision_1_code', '$geoip_subdivision_1_name', '$geoip_subdivision_2_code', '$geoip_subdivision_2_name',
  '$geoip_subdivision_3_code', '$geoip_subdivision_3_name', '$geoip_city_confidence', '$geoip_country_confidence',
  '$geoip_postal_code_confidence', '$geoip_subdivision_1_confidence', '$geoip_subdivision_2_confidence',
])

/** True when the updates only change existing, frequently changing properties and the event is no person event. */
export function isIgnorableUpdate(event: string, updates: PropertyUpdates, current: JsonObject): boolean {
  if (PERSON_EVENTS.has(event) || updates.toUnset.length > 0) return false
  for (const key of Object.keys(updates.toSet)) {
    if (!Object.hasOwn(current, key) || !FILTERED_PERSON_UPDATE_PROPERTIES.has(key)) return false
  }
  return true
}

// ---------------------------------------------------------------------------------------------------------
// $set / $set_once / $unset

export interface PropertyUpdates {
  toSet: JsonObject
  toUnset: string[]
}

const NO_UPDATES: PropertyUpdates = Object.freeze({ toSet: Object.freeze({}), toUnset: Object.freeze([]) as unknown as string[] })

/**
 * What the event changes on a person with `current` properties: `$set_once` keys the person lacks, `$set`
 * keys whose value differs (`!==`, so objects are always rewritten), then `$unset` keys the person has.
 */
export function computePropertyUpdates(event: string, properties: JsonObject, current: JsonObject): PropertyUpdates {
  if (NO_PERSON_UPDATE_EVENTS.has(event)) return NO_UPDATES
  const toSet: JsonObject = {}
  const toUnset: string[] = []
  // Object.keys rather than Object.entries: no pair array per key (this runs for every event).
  const setOnce = objectOrEmpty(properties.$set_once)
  for (const key of Object.keys(setOnce)) {
    if (!Object.hasOwn(current, key)) setOwn(toSet, key, setOnce[key])
  }
  const set = objectOrEmpty(properties.$set)
  for (const key of Object.keys(set)) {
    const value = set[key]
    if (!Object.hasOwn(current, key) || current[key] !== value) setOwn(toSet, key, value)
  }
  const unset = properties.$unset
  const unsetKeys: unknown[] = Array.isArray(unset) ? unset : isPlainObject(unset) ? Object.keys(unset) : []
  for (const key of unsetKeys) {
    if (typeof key === 'string' && Object.hasOwn(current, key)) toUnset.push(key)
  }
  return { toSet, toUnset }
}

export function hasUpdates(updates: PropertyUpdates): boolean {
  return updates.toUnset.length > 0 || Object.keys(updates.toSet).length > 0
}

/** A new properties object with the updates applied; `changed` says whether anything differs. */
export function applyPropertyUpdates(current: JsonObject, updates: PropertyUpdates): { properties: JsonObject; changed: boolean } {
  if (!hasUpdates(updates)) return { properties: current, changed: false }
  const properties = copyObject(current)
  let changed = false
  for (const [key, value] of Object.entries(updates.toSet)) {
    if (!Object.hasOwn(properties, key) || properties[key] !== value) changed = true
    setOwn(properties, key, value)
  }
  for (const key of updates.toUnset) {
    if (Object.hasOwn(properties, key)) {
      changed = true
      delete properties[key]
    }
  }
  return { properties, changed }
}

/** Properties of a person created by an event: `{...$set_once, ...$set}` plus `$creator_event_uuid`. */
export function initialPersonProperties(properties: JsonObject, eventUuid: string): JsonObject {
  const initial = mergeObjects(objectOrEmpty(properties.$set_once), objectOrEmpty(properties.$set))
  initial.$creator_event_uuid = eventUuid
  return initial
}
