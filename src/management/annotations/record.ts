/** An annotation as stored (one row of `annotations`) and as the domain handles it. */

import { ANNOTATION_CREATION_TYPES, ANNOTATION_SCOPES } from '../../schemas/annotation.js'

export { ANNOTATION_SCOPES }
export type AnnotationScope = (typeof ANNOTATION_SCOPES)[number]

export const CREATION_TYPES = ANNOTATION_CREATION_TYPES
export type CreationType = (typeof CREATION_TYPES)[number]

export interface AnnotationRecord {
  id: number
  team_id: number
  organization_id: string
  content: string | null
  date_marker: string | null
  creation_type: CreationType
  scope: AnnotationScope
  dashboard_id: number | null
  emoji: string | null
  hidden_in_user_interface: boolean | null
  tags: string[]
  deleted: boolean
  created_by_id: number | null
  created_at: string
  updated_at: string
}

export interface AnnotationRow extends Omit<AnnotationRecord, 'hidden_in_user_interface' | 'tags' | 'deleted'> {
  hidden_in_user_interface: number | null
  tags: string
  deleted: number
}

export const toRecord = (row: AnnotationRow): AnnotationRecord => ({
  ...row,
  hidden_in_user_interface: row.hidden_in_user_interface === null ? null : row.hidden_in_user_interface === 1,
  tags: JSON.parse(row.tags) as string[],
  deleted: row.deleted === 1,
})

export const toRow = (record: AnnotationRecord): AnnotationRow => ({
  ...record,
  hidden_in_user_interface: record.hidden_in_user_interface === null ? null : record.hidden_in_user_interface ? 1 : 0,
  tags: JSON.stringify(record.tags),
  deleted: record.deleted ? 1 : 0,
})
