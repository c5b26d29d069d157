/**
 * An event's stored form before any person is read: its properties as the event store gets them (the event's
 * own object until something changes them, then a copy: the event's properties are not changed), its
 * `$set`/`$set_once` with the GeoIP result, and whether it gets person processing (`$process_person_profile`,
 * PostHog's drop of personless person events). PersonsStage applies the rest.
 */
import { copyObject, isPlainObject, type JsonObject } from '../common/json.js'
import type { GeoIp, GeoProperties } from '../geoip/index.js'
import type { CapturedEvent } from '../schemas/captured-event.js'
import { NO_SETS, PERSON_ONLY_EVENTS, addGeoProperties, addInitialAndCampaignProperties, splitSets, type EventSets } from './properties.js'

/** An ingestion warning about the event, written by the stage. */
export interface NormaliseWarning {
  type: string
  details: Record<string, unknown>
  /** Present: debounced per key (hourly); absent: always written. */
  debounceKey?: string
}

export interface Normalised {
  /** The event's own properties object until something changes them: change them only through writableProperties. */
  properties: JsonObject
  sets: EventSets
  geo: GeoProperties | null
  /** The text the event came with, for as long as `properties` are still what it says (every change clears it). */
  propertiesText: Uint8Array | null
  processPerson: boolean
  dropReason: string | null
  warnings: NormaliseWarning[]
}

const DROP_PERSONLESS_PERSON_EVENT = 'invalid_event_when_process_person_profile_is_false'
const MAX_GROUP_KEY = 400

export function eventDetails(event: CapturedEvent): Record<string, unknown> {
  return { eventUuid: event.uuid, event: event.event, distinctId: event.distinct_id }
}

/**
 * `n.properties`, to be changed: copied first while they are the event's own object, and no longer what
 * `propertiesText` says. The event stays as it came, so it can be processed again (a batch redone event by
 * event after a rollback, `enrich`) with the same result.
 */
export function writableProperties(n: Normalised, event: CapturedEvent): JsonObject {
  if (n.properties === event.properties) n.properties = copyObject(n.properties)
  n.propertiesText = null
  return n.properties
}

/**
 * `$process_person_profile`, GeoIP, `$initial_*`/campaign copies, `$set*` removal. `text` (the event's
 * properties but `$set`/`$set_once` as JSON, or null) is kept as `propertiesText` while they stay so.
 */
export function normaliseEvent(event: CapturedEvent, text: Uint8Array | null, geoip: GeoIp | null): Normalised {
  const { properties, sets } = splitSets(isPlainObject(event.properties) ? event.properties : {})
  const n: Normalised = { properties, sets, geo: null, propertiesText: text, processPerson: true, dropReason: null, warnings: [] }

  const hasProcessPerson = Object.hasOwn(properties, '$process_person_profile')
  if (hasProcessPerson) {
    const value = properties.$process_person_profile
    // `false` stays as it was; anything else is removed (below).
    if (value === false) n.processPerson = false
    if (value !== false && value !== true) {
      n.warnings.push({
        type: 'invalid_process_person_profile',
        details: {
          ...eventDetails(event),
          $process_person_profile: value,
          message: 'Only a boolean value is valid for the $process_person_profile property',
        },
        debounceKey: '',
      })
    }
  }
  // The groups API's own `$groupidentify` is personless, as PostHog's capture_internal sends it, and is kept
  // (PostHog's ingestion drops it and writes the group from the API instead).
  if (!n.processPerson && PERSON_ONLY_EVENTS.has(event.event) && event.internal !== true) {
    n.dropReason = DROP_PERSONLESS_PERSON_EVENT
    n.warnings.push({ type: DROP_PERSONLESS_PERSON_EVENT, details: eventDetails(event) })
  }
  // PostHog's event-property check: a group key longer than its column drops the `$groupidentify` (truthy keys only).
  const groupKey = properties.$group_key
  if (n.dropReason === null && event.event === '$groupidentify' && groupKey && String(groupKey).length > MAX_GROUP_KEY) {
    n.dropReason = 'group_key_too_long'
    const details = { ...eventDetails(event), groupKey, groupKeyLength: String(groupKey).length, maxLength: MAX_GROUP_KEY }
    n.warnings.push({ type: 'group_key_too_long', details })
  }

  const ip = properties.$ip
  if (geoip && !properties.$geoip_disable && typeof ip === 'string' && ip !== '') {
    n.geo = geoip.lookup(ip)
    if (n.geo) {
      const kept = addGeoProperties(properties, sets, n.geo)
      if (kept !== properties) {
        n.properties = kept
        n.propertiesText = null
      }
    }
  }
  addInitialAndCampaignProperties(event.event, n.properties, sets)

  const keepsSets = n.processPerson && event.event !== '$groupidentify'
  if (!keepsSets && Object.hasOwn(n.properties, '$unset')) delete writableProperties(n, event).$unset
  if (n.processPerson && hasProcessPerson) delete writableProperties(n, event).$process_person_profile
  if (!keepsSets) n.sets = NO_SETS
  return n
}
