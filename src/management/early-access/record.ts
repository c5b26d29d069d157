/** An early access feature as stored (one row of `early_access_features`) and as the domain handles it. */

import { EARLY_ACCESS_STAGES } from '../../schemas/early-access-feature.js'

/** PostHog's `EarlyAccessFeature.Stage`, in its order. */
export const STAGES = EARLY_ACCESS_STAGES
export type Stage = (typeof STAGES)[number]

/**
 * PostHog's `ActiveStage`: the stages whose flag serves enrolled people (`feature_enrollment`). `concept` left it
 * in 2025: a concept gauges interest, so opting in must not switch the feature on.
 */
export const ACTIVE_STAGES: readonly Stage[] = ['alpha', 'beta', 'general-availability']

export const isActiveStage = (stage: string | null | undefined): boolean => (ACTIVE_STAGES as readonly string[]).includes(stage ?? '')

export interface EarlyAccessFeatureRecord {
  id: string
  team_id: number
  feature_flag_id: number | null
  name: string
  description: string
  stage: Stage
  documentation_url: string
  /** Any JSON value, as PostHog's JSONField keeps it; answered as `{}` when falsy. */
  payload: unknown
  created_by_id: number | null
  assigned_user_id: number | null
  assigned_role_id: string | null
  created_at: string
}

export interface EarlyAccessFeatureRow extends Omit<EarlyAccessFeatureRecord, 'payload'> {
  payload: string
}

export const toRecord = (row: EarlyAccessFeatureRow): EarlyAccessFeatureRecord => ({ ...row, payload: JSON.parse(row.payload) as unknown })

export const toRow = (record: EarlyAccessFeatureRecord): EarlyAccessFeatureRow => ({ ...record, payload: JSON.stringify(record.payload ?? {}) })
