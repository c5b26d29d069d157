/**
 * Pure rules of person processing, after PostHog's plugin-server (persons/person-update.ts,
 * person-merge-service.ts, common/persons/person-property-utils.ts, utils/db/utils.ts): which distinct ids may
 * never be merged, how `$set`/`$set_once`/`$unset` change a person's properties, and which event properties are
 * copied onto the person (`$initial_*` and latest-touch campaign values).
 */
import { copyObject, isPlainObject, setOwn, type JsonObject } from '../common/json.js'
import { CLOSE_BRACE, COMMA, JsonText, OPEN_BRACE } from '../common/json-text.js'
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

/** Longest distinct id a merge accepts, in characters: PostHog's distinct-id column. */
const MAX_MERGEABLE_ID = 400

/**
 * PostHog's `isDistinctIdUnmergeable`: an illegal id, or one its distinct-id column cannot hold (a NUL, more than
 * 400 characters). Merge ids (`$anon_distinct_id`, `alias`) are not cut at capture as the event's own id is.
 */
export function isDistinctIdUnmergeable(id: string): boolean {
  return isDistinctIdIllegal(id) || id.includes('\u0000') || (id.length > MAX_MERGEABLE_ID && Array.from(id).length > MAX_MERGEABLE_ID)
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
const INITIAL_KEYS: ReadonlyMap<string, string> = new Map(
  [...EVENT_TO_PERSON, ...CAMPAIGN].map((key) => [key, `$initial_${key.replace('$', '')}`] as const),
)

function objectOrEmpty(value: unknown): JsonObject {
  return isPlainObject(value) ? value : {}
}

/**
 * An event's `$set` and `$set_once`, held apart from its other properties, and the GeoIP result whose keys
 * both carry as well. Apart, because that GeoIP part (30 keys, about half of a browser event's stored JSON)
 * is the same for every event from an address: storedPropertiesJson serialises it once per lookup result,
 * and person updates read it from the result, instead of every event copying it into its `$set`/`$set_once`
 * and stringifying it again (bench/micro/consumer.mjs: 13.3 → 11.1 µs a GeoIP-resolved event).
 * `$set`/`$set_once` are what the client sent (undefined when absent; anything that is not an object is
 * stored as sent unless something must be added to it).
 */
export interface EventSets {
  $set: unknown
  $set_once: unknown
  /** Its `$geoip_*` keys belong to `$set` (null when unknown), and as `$initial_geoip_*` to `$set_once`. */
  geo: GeoProperties | null
}

/** The sets of an event that changes no person (personless, `$groupidentify`): nothing to store or apply. */
export const NO_SETS: EventSets = Object.freeze({ $set: undefined, $set_once: undefined, geo: null })

/**
 * The event's properties without `$set`/`$set_once` (`source` itself when it has neither, else a copy), and
 * those two as its EventSets. Without the copy, the consumer's work for a browser event fell by 4–7 %
 * (bench/micro/consumer.mjs); whoever changes the result must copy it first (normalise.ts, writableProperties).
 */
export function splitSets(source: JsonObject): { properties: JsonObject; sets: EventSets } {
  if (!Object.hasOwn(source, '$set') && !Object.hasOwn(source, '$set_once')) return { properties: source, sets: { $set: undefined, $set_once: undefined, geo: null } }
  const properties: JsonObject = {}
  for (const key of Object.keys(source)) if (key !== '$set' && key !== '$set_once') setOwn(properties, key, source[key])
  return { properties, sets: { $set: source.$set, $set_once: source.$set_once, geo: null } }
}

/**
 * Copies device, page and campaign properties of the event into `$set` (latest value, unless `$set` already
 * has the key) and into `$set_once` as `$initial_<name>` (unless null or already there). `$os_name` is an alias
 * of `$os` for the initial value; server SDKs (`$is_server: true`) don't lift their host's `$os`.
 * Adds to the client's `$set`/`$set_once` objects in place (see ownObject).
 */
export function addInitialAndCampaignProperties(event: string, properties: JsonObject, sets: EventSets): void {
  if (NO_INITIAL_PROPERTY_EVENTS.has(event)) return
  const skipHostOs = properties.$is_server === true
  let set: JsonObject | null = null
  let setOnce: JsonObject | null = null
  // Objects made here (the client sent none) lack every key until it is added: each key of `properties` comes
  // once, and so does its `$initial_` name. Only the client's objects are asked (bench/micro/consumer.mjs).
  let newSet = false
  let newSetOnce = false
  // The event's own keys (≈15 for a browser's) looked up among the 44 names, in the event's order, rather
  // than the event asked for each of the 44.
  for (const key of Object.keys(properties)) {
    const initialKey = INITIAL_KEYS.get(key)
    if (initialKey === undefined) continue
    if (skipHostOs && (key === '$os' || key === '$os_version')) continue
    if (set === null || setOnce === null) {
      newSet = !isPlainObject(sets.$set)
      newSetOnce = !isPlainObject(sets.$set_once)
      set = ownObject(sets, '$set')
      setOnce = ownObject(sets, '$set_once')
    }
    const value = properties[key]
    // Names of INITIAL_KEYS, never `__proto__`: plain stores.
    if (newSet || !Object.hasOwn(set, key)) set[key] = value
    if (value !== null && value !== undefined && (newSetOnce || !Object.hasOwn(setOnce, initialKey))) setOnce[initialKey] = value
  }
  if (set === null || setOnce === null) return
  if (Object.hasOwn(properties, '$os_name') && !skipHostOs) {
    const osName = properties.$os_name
    if (osName !== null && osName !== undefined && !Object.hasOwn(setOnce, '$initial_os')) setOnce.$initial_os = osName
    delete set.$os_name
    delete setOnce.$initial_os_name
  }
}

/**
 * The event's `$set`/`$set_once` object to extend in place (a new empty one when it has none, or not an
 * object), instead of a copy: copies were a fifth of the consumer's allocations. addGeoProperties removes
 * keys from them in place too. The objects belong to the event being processed, and applying both to the
 * same event again (a batch redone event by event after a rollback) gives the same result: the keys added
 * are then present with the same values, the keys removed absent (the stage tests redo such a batch).
 */
function ownObject(sets: EventSets, key: '$set' | '$set_once'): JsonObject {
  const value = sets[key]
  if (isPlainObject(value)) return value
  const created: JsonObject = {}
  sets[key] = created
  return created
}

/**
 * PostHog's GeoIP transformation: the looked-up keys go onto the event, and into `$set` (every GeoIP key,
 * null when unknown, overriding client values) and `$set_once` as `$initial_geoip_*` (see EventSets). Keys
 * the client sent under those names give way: they are removed, so the stored JSON has each key once, with
 * GeoIP's value. The event's own keys are appended as text by storedPropertiesJson, not added here. Returns
 * the properties to store: `properties` unchanged, or a copy without the keys that give way.
 */
const GEO_KEYS = GEO_FIELDS.map((field) => [`$geoip_${field}`, `$initial_geoip_${field}`] as const)

export function addGeoProperties(properties: JsonObject, sets: EventSets, geo: GeoProperties): JsonObject {
  sets.geo = geo
  const set = isPlainObject(sets.$set) ? sets.$set : null
  const setOnce = isPlainObject(sets.$set_once) ? sets.$set_once : null
  // Most events carry no GeoIP key of their own: one pass over their keys instead of asking for the 30.
  if (set === null && setOnce === null && !hasGeoKey(properties)) return properties
  let kept = properties
  for (const [key, initialKey] of GEO_KEYS) {
    if (Object.hasOwn(geo, key) && Object.hasOwn(kept, key)) {
      if (kept === properties) kept = copyObject(properties)
      delete kept[key]
    }
    if (set !== null && Object.hasOwn(set, key)) delete set[key]
    if (setOnce !== null && Object.hasOwn(setOnce, initialKey)) delete setOnce[initialKey]
  }
  return kept
}

function hasGeoKey(properties: JsonObject): boolean {
  for (const key in properties) if (key.startsWith('$geoip_')) return true
  return false
}

/** A GeoIP result as JSON members (`"k":v,…`, UTF-8): the event's keys, those of `$set` and those of `$set_once`. */
interface GeoText {
  event: Uint8Array
  set: Uint8Array
  setOnce: Uint8Array
}

/** Per lookup result: the GeoIP cache hands out the same object for every event from an address. */
const GEO_TEXT = new WeakMap<GeoProperties, GeoText>()

function geoText(geo: GeoProperties): GeoText {
  let text = GEO_TEXT.get(geo)
  if (text === undefined) {
    const event: JsonObject = {}
    const set: JsonObject = {}
    const setOnce: JsonObject = {}
    for (const [key, initialKey] of GEO_KEYS) {
      if (Object.hasOwn(geo, key)) event[key] = geo[key] ?? null
      set[key] = geo[key] ?? null
      setOnce[initialKey] = geo[key] ?? null
    }
    const members = (o: JsonObject) => Buffer.from(JSON.stringify(o).slice(1, -1))
    text = { event: members(event), set: members(set), setOnce: members(setOnce) }
    GEO_TEXT.set(geo, text)
  }
  return text
}

const SET_NAME = Buffer.from('"$set":')
const SET_ONCE_NAME = Buffer.from('"$set_once":')

/**
 * The JSON text of the event's properties as stored: `properties`, then the GeoIP result's keys (`geo`,
 * null = none), then `$set` and `$set_once` with the GeoIP keys of `sets` (NO_SETS = neither). In pieces
 * (JsonText): the GeoIP members are copied as bytes, and the row packer writes the rest without joining it.
 * `propertiesText`, when given, is JSON.stringify(properties) as UTF-8 (from the spool frame), copied instead.
 */
export function storedProperties(properties: JsonObject, sets: EventSets, geo: GeoProperties | null, propertiesText: Uint8Array | null = null): JsonText {
  const text = new JsonText()
  let hasMembers = openObject(text, propertiesText ?? JSON.stringify(properties))
  const geoEvent = geo === null ? null : geoText(geo).event
  if (geoEvent !== null && geoEvent.length > 0) {
    if (hasMembers) text.add(COMMA)
    text.add(geoEvent)
    hasMembers = true
  }
  const geoSets = sets.geo === null ? null : geoText(sets.geo)
  hasMembers = addSet(text, hasMembers, SET_NAME, sets.$set, geoSets?.set)
  addSet(text, hasMembers, SET_ONCE_NAME, sets.$set_once, geoSets?.setOnce)
  text.add(CLOSE_BRACE)
  return text
}

/** storedProperties as one string. */
export function storedPropertiesJson(properties: JsonObject, sets: EventSets, geo: GeoProperties | null): string {
  return storedProperties(properties, sets, geo).toString()
}

/** Adds an object's text (a string, or its UTF-8 bytes) but for its closing brace; true when it has members. */
function openObject(text: JsonText, objectJson: string | Uint8Array): boolean {
  if (objectJson.length === 2) text.add(OPEN_BRACE)
  else text.addOpen(objectJson)
  return objectJson.length > 2
}

/** Adds `"$set":…` (or `$set_once`) unless there is nothing to add; true when the object now has members. */
function addSet(text: JsonText, hasMembers: boolean, name: Uint8Array, value: unknown, geoMembers: Uint8Array | undefined): boolean {
  if (geoMembers === undefined && value === undefined) return hasMembers
  if (hasMembers) text.add(COMMA)
  text.add(name)
  if (geoMembers === undefined) {
    text.add(JSON.stringify(value))
    return true
  }
  if (openObject(text, isPlainObject(value) ? JSON.stringify(value) : '{}')) text.add(COMMA)
  text.add(geoMembers)
  text.add(CLOSE_BRACE)
  return true
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

const NO_PROPERTIES: JsonObject = Object.freeze({})
const NO_UPDATES: PropertyUpdates = Object.freeze({ toSet: Object.freeze({}), toUnset: Object.freeze([]) as unknown as string[] })

/**
 * What the event changes on a person with `current` properties: `$set_once` keys the person lacks, `$set`
 * keys whose value differs (`!==`, so objects are always rewritten), then `$unset` keys the person has.
 */
export function computePropertyUpdates(event: string, properties: JsonObject, sets: EventSets, current: JsonObject): PropertyUpdates {
  if (NO_PERSON_UPDATE_EVENTS.has(event)) return NO_UPDATES
  const toSet: JsonObject = {}
  addSetUpdates(sets, current, toSet)
  const toUnset: string[] = []
  const unset = properties.$unset
  const unsetKeys: unknown[] = Array.isArray(unset) ? unset : isPlainObject(unset) ? Object.keys(unset) : []
  for (const key of unsetKeys) {
    if (typeof key === 'string' && Object.hasOwn(current, key)) toUnset.push(key)
  }
  return { toSet, toUnset }
}

/**
 * Person properties and the GeoIP result whose keys they already hold with its values (as `$geoip_*` and
 * `$initial_geoip_*`). Properties objects are replaced on every change, never changed in place, and the GeoIP
 * cache hands out one result object per address: the next event of the person from the same address skips
 * the 60 key checks (bench/micro/consumer.mjs: addSetUpdates 10 → 6 % of the profile, 10.5 → 10.2 µs an
 * event, medians of four alternated runs).
 */
const GEO_HELD = new WeakMap<JsonObject, GeoProperties>()

/**
 * Adds to `toSet` what `$set_once` and `$set` change on `current`; a key in both takes `$set`'s value. The
 * GeoIP keys come after the client's in each (they never share a name: see addGeoProperties).
 */
function addSetUpdates(sets: EventSets, current: JsonObject, toSet: JsonObject): void {
  const geo = sets.geo !== null && GEO_HELD.get(current) !== sets.geo ? sets.geo : null
  let geoChanges = false
  // Object.keys rather than Object.entries: no pair array per key (this runs for every event).
  const setOnce = objectOrEmpty(sets.$set_once)
  for (const key of Object.keys(setOnce)) {
    if (!Object.hasOwn(current, key)) setOwn(toSet, key, setOnce[key])
  }
  if (geo !== null) {
    for (const [key, initialKey] of GEO_KEYS) {
      if (Object.hasOwn(current, initialKey)) continue
      toSet[initialKey] = geo[key] ?? null
      geoChanges = true
    }
  }
  const set = objectOrEmpty(sets.$set)
  for (const key of Object.keys(set)) {
    const value = set[key]
    if (!Object.hasOwn(current, key) || current[key] !== value) setOwn(toSet, key, value)
  }
  if (geo !== null) {
    for (const [key] of GEO_KEYS) {
      const value = geo[key] ?? null
      if (Object.hasOwn(current, key) && current[key] === value) continue
      toSet[key] = value
      geoChanges = true
    }
    if (!geoChanges) GEO_HELD.set(current, geo)
  }
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
export function initialPersonProperties(sets: EventSets, eventUuid: string): JsonObject {
  const initial: JsonObject = {}
  addSetUpdates(sets, NO_PROPERTIES, initial)
  initial.$creator_event_uuid = eventUuid
  return initial
}
