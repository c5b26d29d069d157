/**
 * Annotation use-cases, as PostHog's AnnotationsViewSet: list, read, create and change (a PATCH with
 * `deleted` soft-deletes or restores; DELETE is refused by the route, as PostHog's ForbidDestroyModel does).
 * A project sees its own annotations and its organisation's organisation-scoped ones; a PATCH through a
 * project makes the annotation that project's, so one narrowed from organisation to project scope stays
 * where it was being looked at. Each write logs an `Annotation` activity entry in its transaction.
 */
import { iso, type Clock } from '../../common/clock.js'
import { AppError, ValidationError } from '../../common/errors.js'
import type { Page } from '../../common/pagination.js'
import type { Db } from '../../storage/sqlite/database.js'
import { userSummary, type Accounts, type Project } from '../accounts.js'
import { changesBetween, type ActivityLog } from '../activity-log.js'
import { readAnnotation, readListQuery, type AnnotationFields } from './input.js'
import type { AnnotationRecord } from './record.js'
import { AnnotationRepository, type AnnotationWithNames, type Visibility } from './repository.js'
import { toAnnotationObject, type AnnotationObject } from './serialize.js'

const SCOPE = 'Annotation'

export interface AnnotationDeps {
  db: Db
  clock: Clock
  accounts: Accounts
  activity: ActivityLog
}

const visibility = (project: Project): Visibility => ({ teamId: project.id, organizationId: project.organization_id })

/** What the activity log compares: the model's fields, the dashboard described by id and name. */
const snapshot = (a: AnnotationWithNames): Record<string, unknown> => ({
  content: a.content,
  dashboard: a.dashboard_id === null ? null : { id: a.dashboard_id, name: a.dashboard_name },
  scope: a.scope,
  emoji: a.emoji,
  creation_type: a.creation_type,
  date_marker: a.date_marker,
  deleted: a.deleted,
  hidden_in_user_interface: a.hidden_in_user_interface,
  tags: a.tags,
})

/** PostHog's AnnotationContext; insights and recordings don't exist here. */
const context = (a: AnnotationWithNames): Record<string, unknown> => ({
  scope: a.scope,
  dashboard_id: a.dashboard_id,
  dashboard_name: a.dashboard_name,
  dashboard_item_id: null,
  dashboard_item_short_id: null,
  dashboard_item_name: null,
  recording_id: null,
})

export class Annotations {
  readonly #deps: AnnotationDeps
  readonly #repo: AnnotationRepository

  constructor(deps: AnnotationDeps) {
    this.#deps = deps
    this.#repo = new AnnotationRepository(deps.db)
  }

  /** Newest `date_marker` first (undated ones before), narrowed by the query as PostHog's list is. */
  list(project: Project, query: URLSearchParams, page: Page): { count: number; results: AnnotationObject[] } {
    const { count, records } = this.#repo.list(visibility(project), readListQuery(query), page.limit, page.offset)
    return { count, results: records.map((a) => this.#toObject(a)) }
  }

  get(project: Project, id: number): AnnotationObject {
    return this.#toObject(this.#visible(project, id, false))
  }

  create(project: Project, body: unknown, userId: number): AnnotationObject {
    return this.#deps.db
      .transaction(() => {
        const fields = readAnnotation(body)
        const dashboardName = this.#check(project, fields, null)
        const now = iso(this.#deps.clock.now())
        const record: Omit<AnnotationRecord, 'id'> = {
          team_id: project.id,
          organization_id: project.organization_id,
          content: fields.content ?? null,
          date_marker: fields.date_marker ?? null,
          creation_type: fields.creation_type ?? 'USR',
          scope: fields.scope ?? 'dashboard_item',
          dashboard_id: fields.dashboard_id ?? null,
          emoji: fields.emoji ?? null,
          hidden_in_user_interface: fields.hidden_in_user_interface ?? null,
          tags: fields.tags ?? [],
          deleted: fields.deleted ?? false,
          created_by_id: userId,
          created_at: now,
          updated_at: now,
        }
        const created: AnnotationWithNames = { ...record, id: this.#repo.insert(record), dashboard_name: dashboardName }
        this.#log(created, userId, 'created', [])
        return this.#toObject(created)
      })
      .immediate()
  }

  update(project: Project, id: number, body: unknown, userId: number): AnnotationObject {
    return this.#deps.db
      .transaction(() => {
        const current = this.#visible(project, id, true)
        const fields = readAnnotation(body)
        const dashboardName = this.#check(project, fields, current)
        const next: AnnotationWithNames = {
          ...current,
          ...fields,
          team_id: project.id,
          dashboard_name: fields.dashboard_id === undefined ? current.dashboard_name : dashboardName,
          updated_at: iso(this.#deps.clock.now()),
        }
        this.#repo.update(next)
        this.#log(next, userId, 'updated', changesBetween(SCOPE, snapshot(current), snapshot(next)))
        return this.#toObject(next)
      })
      .immediate()
  }

  #visible(project: Project, id: number, includeDeleted: boolean): AnnotationWithNames {
    const annotation = this.#repo.get(visibility(project), id, includeDeleted)
    if (!annotation) throw new AppError('not_found')
    return annotation
  }

  /**
   * The serializer's `validate()`, in its order: the dashboard must be a live one of the project, the recording
   * scope is gone, and tags go with the tag scope only, which needs at least one. Answers the dashboard's name.
   */
  #check(project: Project, fields: AnnotationFields, current: AnnotationRecord | null): string | null {
    let dashboardName: string | null = null
    if (fields.dashboard_id !== undefined && fields.dashboard_id !== null) {
      const dashboard = this.#repo.dashboard(project.id, fields.dashboard_id)
      if (!dashboard) throw new ValidationError('invalid', 'Dashboard not found.', 'dashboard_id')
      dashboardName = dashboard.name
    }
    if (fields.scope === 'recording') throw new ValidationError('invalid', 'Recording scope is deprecated')
    const scope = fields.scope ?? current?.scope ?? null
    if (scope === 'tag') {
      const tags = fields.tags ?? current?.tags ?? []
      if (tags.length === 0) throw new ValidationError('invalid', "At least one tag is required when scope is 'tag'.", 'tags')
    } else if (fields.tags !== undefined && fields.tags.length > 0) {
      throw new ValidationError('invalid', "Tags can only be set when scope is 'tag'.", 'tags')
    }
    return dashboardName
  }

  #toObject(a: AnnotationWithNames): AnnotationObject {
    const creator = a.created_by_id === null ? null : this.#deps.accounts.userById(a.created_by_id)
    return toAnnotationObject(a, creator ? userSummary(creator) : null)
  }

  #log(a: AnnotationWithNames, userId: number, activity: 'created' | 'updated', changes: ReturnType<typeof changesBetween>): void {
    this.#deps.activity.log({
      teamId: a.team_id,
      organizationId: a.organization_id,
      userId,
      scope: SCOPE,
      itemId: a.id,
      activity,
      name: a.content,
      changes,
      context: context(a),
    })
  }
}
