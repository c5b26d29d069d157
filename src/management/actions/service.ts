/**
 * Action use-cases, as PostHog's ActionViewSet: list (live actions only), read, create and change (a PATCH
 * with `deleted` soft-deletes or restores; DELETE is refused by the route, as PostHog's ForbidDestroyModel
 * does). Names are unique among a project's live actions. Each write logs an `Action` activity entry in its
 * transaction (a soft delete as `deleted`, as PostHog's signal handler names it). The experiments read the
 * live actions through `live` and `stepEvents`.
 */
import { iso, type Clock } from '../../common/clock.js'
import { AppError, ValidationError } from '../../common/errors.js'
import type { Page } from '../../common/pagination.js'
import type { Db } from '../../storage/sqlite/database.js'
import { userSummary, type Accounts, type Project } from '../accounts.js'
import { changesBetween, type ActivityLog } from '../activity-log.js'
import { readAction, readListQuery, type ActionFields } from './input.js'
import { toStep, type ActionRecord } from './record.js'
import { ActionRepository } from './repository.js'
import { countActionReferences, findActionReferences, referrers } from './references.js'
import { toActionObject, type ActionObject, type ActionReferenceObject } from './serialize.js'

const SCOPE = 'Action'

export interface ActionDeps {
  db: Db
  clock: Clock
  accounts: Accounts
  activity: ActivityLog
}

/** What the activity log compares: the model's fields a write can change. */
const snapshot = (a: ActionRecord): Record<string, unknown> => ({
  name: a.name,
  description: a.description,
  tags: a.tags,
  post_to_slack: a.post_to_slack,
  slack_message_format: a.slack_message_format,
  steps: a.steps,
  deleted: a.deleted,
  pinned_at: a.pinned_at,
})

export class Actions {
  readonly #deps: ActionDeps
  readonly #repo: ActionRepository

  constructor(deps: ActionDeps) {
    this.#deps = deps
    this.#repo = new ActionRepository(deps.db)
  }

  /** Newest first then by name, or as `ordering` asks, narrowed by PostHog's opt-in filters. */
  list(project: Project, query: URLSearchParams, page: Page): { count: number; results: ActionObject[] } {
    const { count, records } = this.#repo.list(project.id, readListQuery(query), page.limit, page.offset)
    const results = records.map((a) => this.#toObject(a))
    if (query.get('include_reference_count')) {
      const all = referrers(this.#deps.db, project.id)
      for (const a of results) a.reference_count = countActionReferences(all, a.id)
    }
    return { count, results }
  }

  /** PostHog's `references/`: the live experiments, then cohorts, naming the action (50 at most). */
  references(project: Project, id: number): ActionReferenceObject[] {
    this.#record(project, id)
    return findActionReferences(referrers(this.#deps.db, project.id), id).map(({ created_by_id, ...ref }) => {
      const creator = created_by_id === null ? null : this.#deps.accounts.userById(created_by_id)
      return { ...ref, created_by: creator ? userSummary(creator) : null }
    })
  }

  get(project: Project, id: number): ActionObject {
    return this.#toObject(this.#record(project, id))
  }

  /** The project's action by id, a deleted one too (PostHog's `Entity.get_action` reads those), or null. */
  byId(teamId: number, id: number): ActionRecord | null {
    return this.#repo.get(teamId, id)
  }

  /** The project's live actions among these ids (a deleted one or another project's is absent). */
  live(teamId: number, ids: readonly number[]): ActionRecord[] {
    return this.#repo.live(teamId, ids)
  }

  create(project: Project, body: unknown, userId: number): ActionObject {
    return this.#deps.db
      .transaction(() => {
        const fields = readAction(body)
        this.#checkName(project, fields, null)
        const now = iso(this.#deps.clock.now())
        const record: Omit<ActionRecord, 'id'> = {
          team_id: project.id,
          name: fields.name ?? null,
          description: fields.description ?? '',
          tags: fields.tags ?? [],
          post_to_slack: fields.post_to_slack ?? false,
          slack_message_format: fields.slack_message_format ?? '',
          steps: (fields.steps ?? []).map(toStep),
          deleted: fields.deleted ?? false,
          pinned_at: fields.pinned_at ?? null,
          created_by_id: userId,
          created_at: now,
          updated_at: now,
          last_calculated_at: now,
        }
        const created: ActionRecord = { ...record, id: this.#repo.insert(record) }
        this.#log(project, created, 'created', [])
        return this.#toObject(created)
      })
      .immediate()
  }

  update(project: Project, id: number, body: unknown): ActionObject {
    return this.#deps.db
      .transaction(() => {
        const current = this.#record(project, id)
        const fields = readAction(body)
        this.#checkName(project, fields, current.id)
        const { steps, pinned_at: pinnedAt, ...rest } = fields
        const next: ActionRecord = { ...current, ...rest, updated_at: iso(this.#deps.clock.now()) }
        if (steps !== undefined) next.steps = steps.map(toStep)
        // PostHog pins with its own time, and a pinned action keeps its first pin; a falsy value unpins.
        if (pinnedAt !== undefined) next.pinned_at = pinnedAt ? (current.pinned_at ?? iso(this.#deps.clock.now())) : null
        this.#repo.update(next)
        const activity = !current.deleted && next.deleted ? 'deleted' : 'updated'
        this.#log(project, next, activity, changesBetween(SCOPE, snapshot(current), snapshot(next)))
        return this.#toObject(next)
      })
      .immediate()
  }

  #record(project: Project, id: number): ActionRecord {
    const action = this.#repo.get(project.id, id)
    if (!action) throw new AppError('not_found')
    return action
  }

  /** PostHog's `validate()`: a name sent may not be another live action's of the project. */
  #checkName(project: Project, fields: ActionFields, exceptId: number | null): void {
    if (fields.name === undefined) return
    const other = this.#repo.namedLike(project.id, fields.name, exceptId)
    if (other !== null) throw new ValidationError('unique', `This project already has an action with this name, ID ${other}`, 'name')
  }

  #toObject(a: ActionRecord): ActionObject {
    const creator = a.created_by_id === null ? null : this.#deps.accounts.userById(a.created_by_id)
    return toActionObject(a, creator ? userSummary(creator) : null)
  }

  /** As PostHog's `handle_action_change`, the entry names the action's creator, whoever made the change. */
  #log(project: Project, a: ActionRecord, activity: 'created' | 'updated' | 'deleted', changes: ReturnType<typeof changesBetween>): void {
    this.#deps.activity.log({ teamId: a.team_id, organizationId: project.organization_id, userId: a.created_by_id, scope: SCOPE, itemId: a.id, activity, name: a.name, changes })
  }
}
