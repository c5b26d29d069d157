/**
 * Flag definitions for evaluation: the stored fields an evaluator needs, `filters` parsed. Live flags
 * only; `activeFlagDefinitions` is what `/decide` evaluates, `liveFlagDefinitions` (inactive included) is
 * what local evaluation hands to SDKs. `has_experiment` is PostHog's: whether a live (not deleted) experiment uses
 * the flag.
 */
import type { JsonObject } from '../../common/json.js'
import type { Db } from '../../storage/sqlite/database.js'
import type { FeatureFlagRecord } from './record.js'
import { FlagRepository } from './repository.js'

export interface FlagDefinition {
  id: number
  team_id: number
  key: string
  name: string
  filters: JsonObject
  active: boolean
  deleted: boolean
  ensure_experience_continuity: boolean
  version: number
  evaluation_runtime: string
  evaluation_tags: string[]
  bucketing_identifier: string | null
  is_remote_configuration: boolean
  has_encrypted_payloads: boolean
  has_experiment: boolean
}

function toDefinition(flag: FeatureFlagRecord, experimentFlags: ReadonlySet<number>): FlagDefinition {
  return {
    id: flag.id,
    team_id: flag.team_id,
    key: flag.key,
    name: flag.name,
    filters: flag.filters,
    active: flag.active,
    deleted: flag.deleted,
    ensure_experience_continuity: flag.ensure_experience_continuity,
    version: flag.version,
    evaluation_runtime: flag.evaluation_runtime,
    evaluation_tags: flag.evaluation_tags,
    bucketing_identifier: flag.bucketing_identifier,
    is_remote_configuration: flag.is_remote_configuration,
    has_encrypted_payloads: flag.has_encrypted_payloads,
    has_experiment: experimentFlags.has(flag.id),
  }
}

function definitions(db: Db, teamId: number, activeOnly: boolean): FlagDefinition[] {
  const experimentFlags = new Set(db.prepare('SELECT feature_flag_id FROM experiments WHERE team_id = ? AND deleted = 0').pluck().all(teamId) as number[])
  return new FlagRepository(db).definitions(teamId, activeOnly).map((flag) => toDefinition(flag, experimentFlags))
}

/** Active, non-deleted flags of the project, by id. */
export function activeFlagDefinitions(db: Db, teamId: number): FlagDefinition[] {
  return definitions(db, teamId, true)
}

/** Every non-deleted flag of the project, inactive ones included, by id. */
export function liveFlagDefinitions(db: Db, teamId: number): FlagDefinition[] {
  return definitions(db, teamId, false)
}
