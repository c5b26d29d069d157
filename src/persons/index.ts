/**
 * Persons and groups: the ingestion stage that keeps persons.db current (PersonsStage) and the readers that
 * flags and the API use (PersonReader and its PersonListing, HashKeyOverrideWriter). Imports: common, config, storage,
 * observability, geoip.
 */
export { PersonsStage, type CapturedEvent, type GroupColumns, type PersonOutcome, type PersonsStageOptions } from './stage.js'
export { PersonReader, type GroupTypeRecord } from './reader.js'
export { personScanThread, type PersonScans } from './scans.js'
export { DefinitionRecorder, PROPERTY_KINDS } from './definitions.js'
export { DefinitionBackfill, type BackfillState, type StoredDefinitionSource } from './definition-backfill.js'
export {
  DefinitionReads,
  type EventDefinitionFilter,
  type EventDefinitionRecord,
  type EventOrderField,
  type PropertyDefinitionFilter,
  type PropertyDefinitionRecord,
} from './definition-reads.js'
export { detectPropertyType, type PropertyType } from './property-types.js'
export { GroupReads } from './group-reads.js'
export { PersonListing, type GroupRecord, type IngestionWarningRecord, type PersonListFilter, type PersonWithDistinctIds } from './listing.js'
export type { PersonRecord } from './rows.js'
export { notAPersonIdDetail, parsePersonId, type PersonIdRef } from './person-id.js'
export { HashKeyOverrideWriter } from './hash-key-overrides.js'
export { StaticCohortWriter } from './static-cohorts.js'
export { PERSON_UUID_NAMESPACE, personUuidFor } from './store.js'
export { distinctIdsToSplit, originDistinctId } from './split.js'
export { MAX_GROUP_TYPES_PER_TEAM, mergeGroupProperties, unsetGroupProperties } from './groups.js'
export {
  FILTERED_PERSON_UPDATE_PROPERTIES,
  NO_PERSON_UPDATE_EVENTS,
  NO_SETS,
  PERSON_ONLY_EVENTS,
  addGeoProperties,
  addInitialAndCampaignProperties,
  applyPropertyUpdates,
  computePropertyUpdates,
  isDistinctIdIllegal,
  isDistinctIdUnmergeable,
  isIgnorableUpdate,
  splitSets,
  storedProperties,
  storedPropertiesJson,
  type EventSets,
} from './properties.js'
export { CookielessIngest, type CookielessProject } from './cookieless-ingest.js'
export { CookielessState } from './cookieless-state.js'
export { COOKIELESS_SENTINEL, CookielessMode } from './cookieless.js'
