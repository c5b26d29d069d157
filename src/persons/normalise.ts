/**
 * An event's stored form before any person is read: its properties as the event store gets them (a copy; the
 * event is not changed), its `$set`/`$set_once` with the GeoIP result, and whether it gets person processing
 * (`$process_person_profile`, PostHog's drop of personless person events). PersonsStage applies the rest.
 */
import { isPlainObject, type JsonObject } from '../common/json.js'
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

export function eventDetails(event: CapturedEvent): Record<string, unknown> {
  return { eventUuid: event.uuid, event: event.event, distinctId: event.distinct_id }
}

/**
 * `$process_person_profile`, GeoIP, `$initial_*`/campaign copies, `$set*` removal. `text` (the event's
 * properties but `$set`/`$set_once` as JSON, or null) is kept as `propertiesText` while they stay so.
 */
export function normaliseEvent(event: CapturedEvent, text: Uint8Array | null, geoip: GeoIp | null): Normalised {
  const { properties, sets } = splitSets(isPlainObject(event.properties) ? event.properties : {})
  const warnings: NormaliseWarning[] = []
  let processPerson = true
  let dropReason: string | null = null
  let propertiesText = text

  if (Object.hasOwn(properties, '$process_person_profile')) {
    const value = properties.$process_person_profile
    if (value === false) processPerson = false
    else propertiesText = null // removed below; `false` is written back as it was
    if (value !== false && value !== true) {
      warnings.push({
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
  if (!processPerson && PERSON_ONLY_EVENTS.has(event.event)) {
    dropReason = DROP_PERSONLESS_PERSON_EVENT
    warnings.push({ type: DROP_PERSONLESS_PERSON_EVENT, details: eventDetails(event) })
  }

  const ip = properties.$ip
  let geo: GeoProperties | null = null
  if (geoip && !properties.$geoip_disable && typeof ip === 'string' && ip !== '') {
    geo = geoip.lookup(ip)
    if (geo && addGeoProperties(properties, sets, geo)) propertiesText = null
  }
  addInitialAndCampaignProperties(event.event, properties, sets)

  const keepsSets = processPerson && event.event !== '$groupidentify'
  if (!keepsSets && Object.hasOwn(properties, '$unset')) {
    delete properties.$unset
    propertiesText = null
  }
  if (processPerson) delete properties.$process_person_profile
  else properties.$process_person_profile = false
  return { properties, sets: keepsSets ? sets : NO_SETS, geo, propertiesText, processPerson, dropReason, warnings }
}
