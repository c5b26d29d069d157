/** The `$group_0..4` columns of a stored event, read from its (normalised) properties. */
import type { JsonObject } from '../common/json.js'
import { MAX_GROUP_TYPES_PER_TEAM } from './groups.js'

export type GroupColumns = [string, string, string, string, string]

export const noGroups = (): GroupColumns => ['', '', '', '', '']
export const GROUP_COLUMN_KEYS = Array.from({ length: MAX_GROUP_TYPES_PER_TEAM }, (_, i) => `$group_${i}`)

function columnValue(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

export function groupColumns(properties: JsonObject): GroupColumns {
  const columns = noGroups()
  for (let i = 0; i < MAX_GROUP_TYPES_PER_TEAM; i++) {
    const key = GROUP_COLUMN_KEYS[i]
    if (Object.hasOwn(properties, key)) columns[i] = columnValue(properties[key])
  }
  return columns
}
