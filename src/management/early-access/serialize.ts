/**
 * The two shapes of a feature: the management object (PostHog's EarlyAccessFeatureSerializer) and the public
 * one posthog-js reads (MinimalEarlyAccessFeatureSerializer, mirrored by posthog-js's `EarlyAccessFeature`),
 * which is also what a flag object lists in `features`.
 */
import type { JsonObject } from '../../common/json.js'
import type { UserSummary } from '../accounts.js'
import type { MinimalFlag } from '../feature-flags/serialize.js'
import type { EarlyAccessFeatureRecord, Stage } from './record.js'
import type { FeatureWithNames } from './repository.js'

/** The assignee as the management API reads and writes it. */
export type Assignee = { type: 'user'; id: number } | { type: 'role'; id: string }

export interface EarlyAccessFeatureObject {
  id: string
  feature_flag: MinimalFlag | null
  name: string
  description: string
  stage: Stage
  documentation_url: string
  payload: unknown
  created_at: string
  created_by: UserSummary | null
  assignee: Assignee | null
  /** PostHog's access-control level; skylark has no access control on features, so every member edits. */
  user_access_level: 'editor'
}

export interface PublicEarlyAccessFeature {
  id: string
  name: string
  description: string
  stage: Stage
  documentationUrl: string
  flagKey: string | null
  payload: unknown
  /** A display name only: the list is public. */
  assignee: { type: 'user' | 'role'; name: string } | null
}

/** PostHog answers a falsy payload (never stored, or emptied) as `{}`. */
const payloadOf = (payload: unknown): unknown => (payload ? payload : ({} as JsonObject))

export function assigneeOf(feature: EarlyAccessFeatureRecord): Assignee | null {
  if (feature.assigned_user_id !== null) return { type: 'user', id: feature.assigned_user_id }
  if (feature.assigned_role_id !== null) return { type: 'role', id: feature.assigned_role_id }
  return null
}

export function toEarlyAccessFeatureObject(feature: EarlyAccessFeatureRecord, flag: MinimalFlag | null, createdBy: UserSummary | null): EarlyAccessFeatureObject {
  return {
    id: feature.id,
    feature_flag: flag,
    name: feature.name,
    description: feature.description,
    stage: feature.stage,
    documentation_url: feature.documentation_url,
    payload: payloadOf(feature.payload),
    created_at: feature.created_at,
    created_by: createdBy,
    assignee: assigneeOf(feature),
    user_access_level: 'editor',
  }
}

/**
 * PostHog's public assignee: a user by first and last name (none when both are blank, rather than a nameless
 * one), a role by its name.
 */
function publicAssignee(f: FeatureWithNames): PublicEarlyAccessFeature['assignee'] {
  if (f.assigned_user_id !== null && f.assignee_first_name !== null) {
    const name = `${f.assignee_first_name} ${f.assignee_last_name ?? ''}`.trim()
    return name ? { type: 'user', name } : null
  }
  if (f.assigned_role_id !== null && f.assignee_role_name !== null) return { type: 'role', name: f.assignee_role_name }
  return null
}

export function toPublicFeature(f: FeatureWithNames): PublicEarlyAccessFeature {
  return {
    id: f.id,
    name: f.name,
    description: f.description,
    stage: f.stage,
    documentationUrl: f.documentation_url,
    flagKey: f.flag_key,
    payload: payloadOf(f.payload),
    assignee: publicAssignee(f),
  }
}
