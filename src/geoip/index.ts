/**
 * GeoIP: `$geoip_*` properties for an IP address (PostHog's GeoIP transformation, §5.3). Used by person
 * processing on ingestion and by flag evaluation for request addresses. Imports: common, config.
 */
export { openGeoIp, loadGeoIpData, bundledDatabaseDir, type GeoIp, type GeoIpData, type GeoIpOptions } from './geoip.js'
export { publicAddress, type LookupAddress } from './addresses.js'
export { GEO_FIELDS, geoPropertiesOf, type GeoField, type GeoKey, type GeoProperties, type GeoValue } from './records.js'
export { Lru } from './lru.js'
