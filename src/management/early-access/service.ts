/**
 * Early access feature use-cases, as PostHog's EarlyAccessFeatureViewSet: list, read, create (linking a flag or
 * creating one), change and delete, each in one IMMEDIATE transaction. Every change to the linked flag goes
 * through the FeatureFlags service (its rules, version, activity entry and the evaluation caches' notice apply;
 * nested calls become savepoints):
 *
 * - a feature created without a flag creates one keyed by the slug of its name, at 0%, and a linked flag of
 *   a feature in an active stage (alpha, beta, general-availability) gets `feature_enrollment: true`, so the
 *   people who opt in (`$feature_enrollment/<key>`) get it;
 * - moving into an active stage turns enrollment on, moving to any other stage turns it off, and moving to
 *   general-availability with `rollout_to_all` serves the flag to everyone instead;
 * - deleting the feature turns enrollment off and leaves the flag.
 */
import { iso, type Clock } from '../../common/clock.js'
import { AppError, ValidationError } from '../../common/errors.js'
import { normaliseUuid, uuidv7 } from '../../common/ids.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import type { Page } from '../../common/pagination.js'
import type { Db } from '../../storage/sqlite/database.js'
import { userSummary, type Accounts, type Project } from '../accounts.js'
import { DEFAULT_FILTERS, minimalFlag, type FeatureFlagRecord, type FeatureFlags } from '../feature-flags/index.js'
import { NEW_FLAG_GROUPS, rolledOutToAll, slugify, withEnrollment } from './enrollment.js'
import { readAssignee, readCreate, readUpdate, type AssigneeRef } from './input.js'
import { isActiveStage, type EarlyAccessFeatureRecord } from './record.js'
import { EarlyAccessRepository } from './repository.js'
import { toEarlyAccessFeatureObject, toPublicFeature, type EarlyAccessFeatureObject, type PublicEarlyAccessFeature } from './serialize.js'

export const LINKED_FLAG_DENIED = "You don't have sufficient permissions to modify the linked feature flag."

export interface EarlyAccessDeps {
  db: Db
  clock: Clock
  accounts: Accounts
  featureFlags: FeatureFlags
}

const invalid = (detail: string) => new ValidationError('invalid', detail)

function variantsOf(flag: FeatureFlagRecord): unknown[] {
  const multivariate = flag.filters.multivariate
  return isPlainObject(multivariate) && Array.isArray(multivariate.variants) ? multivariate.variants : []
}

/** The flag service applies `filters` only with `groups` in them; a flag stored without keeps what it evaluated. */
const withGroups = (filters: JsonObject): JsonObject => ('groups' in filters ? filters : { ...filters, groups: structuredClone(DEFAULT_FILTERS.groups) })

export class EarlyAccessFeatures {
  readonly #deps: EarlyAccessDeps
  readonly #repo: EarlyAccessRepository

  constructor(deps: EarlyAccessDeps) {
    this.#deps = deps
    this.#repo = new EarlyAccessRepository(deps.db)
  }

  /** The feature of the project, by its UUID in any form Python's uuid.UUID takes, or 404. */
  record(project: Project, id: string): EarlyAccessFeatureRecord {
    const uuid = normaliseUuid(id)
    const feature = uuid === null ? null : this.#repo.get(project.id, uuid)
    if (!feature) throw new AppError('not_found')
    return feature
  }

  toObject(feature: EarlyAccessFeatureRecord): EarlyAccessFeatureObject {
    const flag = feature.feature_flag_id === null ? null : this.#deps.featureFlags.repository.get(feature.team_id, feature.feature_flag_id)
    const creator = feature.created_by_id === null ? null : this.#deps.accounts.userById(feature.created_by_id)
    return toEarlyAccessFeatureObject(feature, flag ? minimalFlag(flag) : null, creator ? userSummary(creator) : null)
  }

  list(project: Project, page: Page): { count: number; results: EarlyAccessFeatureObject[] } {
    const { count, records } = this.#repo.list(project.id, page.limit, page.offset)
    return { count, results: records.map((f) => this.toObject(f)) }
  }

  get(project: Project, id: string): EarlyAccessFeatureObject {
    return this.toObject(this.record(project, id))
  }

  /** posthog-js's list: the project's features in one of `stages`. */
  publicList(teamId: number, stages: readonly string[]): PublicEarlyAccessFeature[] {
    return this.#repo.inStages(teamId, stages).map(toPublicFeature)
  }

  create(project: Project, body: unknown, userId: number): EarlyAccessFeatureObject {
    return this.#deps.db
      .transaction(() => {
        const fields = readCreate(body)
        const linked = fields.feature_flag_id === null ? null : this.#linkable(project, fields.feature_flag_id)
        // By default a feature is assigned to whoever created it.
        const assignee: AssigneeRef = 'assignee' in fields ? this.#assignee(project, fields.assignee) : { user: userId, role: null }
        const active = isActiveStage(fields.stage)
        let flagId: number
        if (linked) {
          // Linking a flag changes it only when the stage serves the enrolled.
          if (active) this.#changeFlag(project, linked, withEnrollment(linked.filters, true), userId)
          flagId = linked.id
        } else {
          const filters: JsonObject = { groups: structuredClone(NEW_FLAG_GROUPS) }
          if (active) filters.feature_enrollment = true
          const body = { key: slugify(fields.name), name: `Feature Flag for Early Access Feature ${fields.name}`, filters, creation_context: 'early_access_features' }
          flagId = this.#deps.featureFlags.create(project, body, userId).id
        }
        const feature: EarlyAccessFeatureRecord = {
          id: uuidv7(this.#deps.clock.now()),
          team_id: project.id,
          feature_flag_id: flagId,
          name: fields.name,
          description: fields.description ?? '',
          stage: fields.stage,
          documentation_url: fields.documentation_url ?? '',
          payload: fields.payload,
          created_by_id: userId,
          assigned_user_id: assignee.user,
          assigned_role_id: assignee.role,
          created_at: iso(this.#deps.clock.now()),
        }
        this.#repo.insert(feature)
        return this.toObject(feature)
      })
      .immediate()
  }

  update(project: Project, id: string, body: unknown, userId: number): EarlyAccessFeatureObject {
    return this.#deps.db
      .transaction(() => {
        const current = this.record(project, id)
        const fields = readUpdate(body)
        const assignee = 'assignee' in fields ? this.#assignee(project, fields.assignee) : null
        const stage = fields.stage
        const flag = this.#flagOf(current)
        if (flag && stage !== undefined) {
          let filters: JsonObject | null = null
          if (stage !== current.stage && stage === 'general-availability' && fields.rollout_to_all) filters = rolledOutToAll(flag.filters)
          else if (!isActiveStage(current.stage) && isActiveStage(stage)) filters = withEnrollment(flag.filters, true)
          // As PostHog, every PATCH naming a stage that does not serve the enrolled turns enrollment off.
          else if (!isActiveStage(stage)) filters = withEnrollment(flag.filters, null)
          if (filters) this.#changeFlag(project, flag, filters, userId)
        }
        const next: EarlyAccessFeatureRecord = {
          ...current,
          name: fields.name ?? current.name,
          description: fields.description ?? current.description,
          stage: stage ?? current.stage,
          documentation_url: fields.documentation_url ?? current.documentation_url,
          payload: 'payload' in fields ? fields.payload : current.payload,
          assigned_user_id: assignee ? assignee.user : current.assigned_user_id,
          assigned_role_id: assignee ? assignee.role : current.assigned_role_id,
        }
        this.#repo.update(next)
        return this.toObject(next)
      })
      .immediate()
  }

  /** Deletes the feature; its flag stays, with enrollment off. */
  delete(project: Project, id: string, userId: number): void {
    this.#deps.db
      .transaction(() => {
        const current = this.record(project, id)
        const flag = this.#flagOf(current)
        if (flag) this.#changeFlag(project, flag, withEnrollment(flag.filters, null), userId)
        this.#repo.delete(project.id, current.id)
      })
      .immediate()
  }

  #flagOf(feature: EarlyAccessFeatureRecord): FeatureFlagRecord | null {
    return feature.feature_flag_id === null ? null : this.#deps.featureFlags.repository.get(feature.team_id, feature.feature_flag_id)
  }

  /** PostHog's checks on `feature_flag_id`, in its order (a deleted flag of the project may be linked, as there). */
  #linkable(project: Project, flagId: number): FeatureFlagRecord {
    const flag = this.#deps.featureFlags.repository.get(project.id, flagId)
    if (!flag) throw invalid('Feature Flag with this ID does not exist')
    if (this.#repo.flagHasFeature(flag.id)) throw invalid(`Linked feature flag ${flag.key} already has a feature attached to it.`)
    if ((flag.filters.aggregation_group_type_index ?? null) !== null) throw invalid('Group-based feature flags are not supported for Early Access Features.')
    if (variantsOf(flag).length > 0) throw invalid('Multivariate feature flags are not supported for Early Access Features.')
    return flag
  }

  #assignee(project: Project, value: unknown): AssigneeRef {
    const ref = readAssignee(value, normaliseUuid)
    if (ref.user !== null && this.#deps.accounts.membershipLevel(project.organization_id, ref.user) === null) {
      throw new ValidationError('invalid', 'Assignee user does not belong to this organization.', 'assignee')
    }
    if (ref.role !== null && !this.#repo.roleInOrganization(ref.role, project.organization_id)) {
      throw new ValidationError('invalid', 'Assignee role does not belong to this organization.', 'assignee')
    }
    return ref
  }

  /** A change to the linked flag, by someone who may edit it (PostHog's RBAC check on the flag itself). */
  #changeFlag(project: Project, flag: FeatureFlagRecord, filters: JsonObject, userId: number): void {
    if (!this.#deps.featureFlags.canEdit(project, flag, userId)) throw new AppError('permission_denied', { detail: LINKED_FLAG_DENIED })
    this.#deps.featureFlags.update(project, flag.id, { filters: withGroups(filters) }, userId)
  }
}
