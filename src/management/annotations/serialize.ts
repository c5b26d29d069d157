/** The annotation object, in the field order of PostHog's AnnotationSerializer. */
import type { UserSummary } from '../accounts.js'
import type { AnnotationScope, CreationType } from './record.js'
import type { AnnotationWithNames } from './repository.js'

export interface AnnotationObject {
  id: number
  content: string | null
  date_marker: string | null
  creation_type: CreationType
  /** The insight: skylark has none, so always null (a write naming one is refused). */
  dashboard_item: null
  dashboard_id: number | null
  dashboard_name: string | null
  insight_short_id: null
  insight_name: null
  insight_derived_name: null
  created_by: UserSummary | null
  created_at: string
  updated_at: string
  deleted: boolean
  scope: AnnotationScope
  emoji: string | null
  hidden_in_user_interface: boolean | null
  tags: string[]
}

export function toAnnotationObject(a: AnnotationWithNames, createdBy: UserSummary | null): AnnotationObject {
  return {
    id: a.id,
    content: a.content,
    date_marker: a.date_marker,
    creation_type: a.creation_type,
    dashboard_item: null,
    dashboard_id: a.dashboard_id,
    dashboard_name: a.dashboard_name,
    insight_short_id: null,
    insight_name: null,
    insight_derived_name: null,
    created_by: createdBy,
    created_at: a.created_at,
    updated_at: a.updated_at,
    deleted: a.deleted,
    scope: a.scope,
    emoji: a.emoji,
    hidden_in_user_interface: a.hidden_in_user_interface,
    tags: a.tags,
  }
}
