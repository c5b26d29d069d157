/** A persons.db person row and how both readers (reader.ts for flags, listing.ts for the API) turn it into a record. */
import { isPlainObject, type JsonObject } from '../common/json.js'

export interface PersonRecord {
  /** Row id: what cohorts and hash-key overrides reference. */
  id: number
  uuid: string
  properties: JsonObject
  is_identified: boolean
  /** ISO 8601. */
  created_at: string
}

export interface PersonRowDb {
  id: number
  uuid: string
  properties: string
  is_identified: number
  created_at: string
}

/** A stored JSON object; anything else (never written, but a hand-edited file may hold it) reads as `{}`. */
export function parseObject(text: string): JsonObject {
  try {
    const value = JSON.parse(text) as unknown
    return isPlainObject(value) ? value : {}
  } catch {
    return {}
  }
}

export function toPerson(row: PersonRowDb): PersonRecord {
  return {
    id: row.id,
    uuid: row.uuid,
    properties: parseObject(row.properties),
    is_identified: row.is_identified === 1,
    created_at: row.created_at,
  }
}
