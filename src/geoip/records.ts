/**
 * Turning one .mmdb record into PostHog's `$geoip_*` properties. Two layouts are read:
 *
 * - MaxMind GeoLite2/GeoIP2 City: `city.names.en`, `country.iso_code`/`names.en`, `continent.code`/`names.en`,
 *   `postal.code`, `location.{latitude,longitude,accuracy_radius,time_zone}`, `subdivisions[].{iso_code,names.en}`.
 * - ip-location-db (the bundled npm database): flat `country_code, state1, state2, city, postcode, latitude,
 *   longitude, timezone`, without names, continents or subdivision codes.
 *
 * Like PostHog's GeoIP transformation, a key is present only when its section exists in the record (a record
 * without a city gives no `$geoip_city_name`). Country and continent names missing from a record come from the
 * `countries-list` package (annexare/Countries, ISO 3166-1 with each country's main continent).
 */
import { continents, countries } from 'countries-list'

/** The keys PostHog's GeoIP transformation writes (as `$geoip_<key>` and `$initial_geoip_<key>`). */
export const GEO_FIELDS = [
  'city_name',
  'city_confidence',
  'subdivision_2_name',
  'subdivision_2_code',
  'subdivision_1_name',
  'subdivision_1_code',
  'country_name',
  'country_code',
  'continent_name',
  'continent_code',
  'postal_code',
  'latitude',
  'longitude',
  'accuracy_radius',
  'time_zone',
] as const

export type GeoField = (typeof GEO_FIELDS)[number]
export type GeoKey = `$geoip_${GeoField}`
export type GeoValue = string | number | null
export type GeoProperties = Partial<Record<GeoKey, GeoValue>>

interface Names {
  names?: Record<string, string>
}

/** The part of a MaxMind City record that is read (mmdb-lib returns the raw snake_case layout). */
interface MaxMindRecord {
  city?: Names
  continent?: Names & { code?: string }
  country?: Names & { iso_code?: string }
  postal?: { code?: string }
  location?: { latitude?: number; longitude?: number; accuracy_radius?: number; time_zone?: string }
  subdivisions?: Array<Names & { iso_code?: string }>
}

/** The ip-location-db city layout. */
interface FlatRecord {
  country_code?: string
  state1?: string
  state2?: string
  city?: string
  postcode?: string
  latitude?: number
  longitude?: number
  timezone?: string
}

const COUNTRIES = countries as Record<string, { name: string; continent: string } | undefined>
const CONTINENTS = continents as Record<string, string | undefined>

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}

function number(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null
}

/** Float32 artefacts (51.40359878540039) rounded to the 4 decimals MaxMind publishes. */
function coordinate(value: unknown): number | null {
  const n = number(value)
  return n === null ? null : Math.round(n * 1e4) / 1e4
}

export function countryName(code: string): string | null {
  return COUNTRIES[code.toUpperCase()]?.name ?? null
}

export function continentOf(countryCode: string): { code: string; name: string } | null {
  const code = COUNTRIES[countryCode.toUpperCase()]?.continent
  const name = code ? CONTINENTS[code] : undefined
  return code && name ? { code, name } : null
}

function fromMaxMind(record: MaxMindRecord): GeoProperties {
  const out: GeoProperties = {}
  if (record.city) out.$geoip_city_name = text(record.city.names?.en)
  if (record.country) {
    const code = text(record.country.iso_code)
    out.$geoip_country_name = text(record.country.names?.en) ?? (code ? countryName(code) : null)
    out.$geoip_country_code = code
  }
  if (record.continent) {
    const code = text(record.continent.code)
    out.$geoip_continent_name = text(record.continent.names?.en) ?? (code ? (CONTINENTS[code] ?? null) : null)
    out.$geoip_continent_code = code
  } else if (out.$geoip_country_code) {
    const continent = continentOf(out.$geoip_country_code as string)
    if (continent) {
      out.$geoip_continent_name = continent.name
      out.$geoip_continent_code = continent.code
    }
  }
  if (record.postal) out.$geoip_postal_code = text(record.postal.code)
  if (record.location) {
    out.$geoip_latitude = number(record.location.latitude)
    out.$geoip_longitude = number(record.location.longitude)
    out.$geoip_accuracy_radius = number(record.location.accuracy_radius)
    out.$geoip_time_zone = text(record.location.time_zone)
  }
  record.subdivisions?.slice(0, 2).forEach((subdivision, i) => {
    const n = (i + 1) as 1 | 2
    out[`$geoip_subdivision_${n}_code`] = text(subdivision.iso_code)
    out[`$geoip_subdivision_${n}_name`] = text(subdivision.names?.en)
  })
  return out
}

function fromFlat(record: FlatRecord): GeoProperties {
  const out: GeoProperties = {}
  const city = text(record.city)
  if (city) out.$geoip_city_name = city
  const code = text(record.country_code)?.toUpperCase() ?? null
  if (code) {
    out.$geoip_country_name = countryName(code)
    out.$geoip_country_code = code
    const continent = continentOf(code)
    if (continent) {
      out.$geoip_continent_name = continent.name
      out.$geoip_continent_code = continent.code
    }
  }
  const postcode = text(record.postcode)
  if (postcode) out.$geoip_postal_code = postcode
  const latitude = coordinate(record.latitude)
  const longitude = coordinate(record.longitude)
  if (latitude !== null && longitude !== null) {
    out.$geoip_latitude = latitude
    out.$geoip_longitude = longitude
  }
  const timeZone = text(record.timezone)
  if (timeZone) out.$geoip_time_zone = timeZone
  const state1 = text(record.state1)
  if (state1) out.$geoip_subdivision_1_name = state1
  const state2 = text(record.state2)
  if (state2) out.$geoip_subdivision_2_name = state2
  return out
}

/** The `$geoip_*` properties of a record in either layout; null when the record says nothing usable. */
export function geoPropertiesOf(record: unknown): GeoProperties | null {
  if (typeof record !== 'object' || record === null) return null
  const r = record as Record<string, unknown>
  const isFlat = typeof r.country_code === 'string' || typeof r.city === 'string'
  const out = isFlat ? fromFlat(r as FlatRecord) : fromMaxMind(r as MaxMindRecord)
  return Object.keys(out).length > 0 ? out : null
}
