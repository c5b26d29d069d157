/**
 * Scheduled change use-cases, as PostHog's ScheduledChangeViewSet: list (filtered by `model_name` and
 * `record_id`), read, create, change and delete, each in one IMMEDIATE transaction. Writing one needs edit
 * rights on its flag (PostHog's `_check_target_edit_permission`); applying it is the applier's (applier.ts).
 */
import { iso, type Clock } from '../../common/clock.js'
import { AppError, ValidationError } from '../../common/errors.js'
import type { Page } from '../../common/pagination.js'
import type { Db } from '../../storage/sqlite/database.js'
import { userSummary, type Accounts, type Project } from '../accounts.js'
import { EDIT_DENIED, type FeatureFlagRecord, type FeatureFlags } from '../feature-flags/index.js'
import { readCreate, readUpdate } from './input.js'
import type { ScheduledChangeRecord } from './record.js'
import { ScheduledChangeRepository } from './repository.js'
import { toScheduledChangeObject, type ScheduledChangeObject } from './serialize.js'

export interface ScheduledChangeDeps {
  db: Db
  clock: Clock
  accounts: Accounts
  featureFlags: FeatureFlags
}

export const FLAG_NOT_FOUND = 'Feature flag not found'
/** PostHog's sentence has no full stop here, unlike the flag API's EDIT_DENIED. */
const EDIT_DENIED_HERE = EDIT_DENIED.replace(/\.$/, '')

/** The flag id `record_id` names, read as Django reads an integer primary key from text; null if it names none. */
export function flagIdOf(recordId: string): number | null {
  if (!/^\s*[+-]?\d{1,15}\s*$/.test(recordId)) return null
  return Number(recordId)
}

export class ScheduledChanges {
  readonly #deps: ScheduledChangeDeps
  readonly #repo: ScheduledChangeRepository
  readonly #listeners = new Set<() => void>()

  constructor(deps: ScheduledChangeDeps) {
    this.#deps = deps
    this.#repo = new ScheduledChangeRepository(deps.db)
  }

  get repository(): ScheduledChangeRepository {
    return this.#repo
  }

  /** Calls `listener` after a change was created or rescheduled, so the applier can wake in time for it. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  toObject(record: ScheduledChangeRecord): ScheduledChangeObject {
    const creator = record.created_by_id === null ? null : this.#deps.accounts.userById(record.created_by_id)
    return toScheduledChangeObject(record, creator ? userSummary(creator) : null)
  }

  list(project: Project, query: URLSearchParams, page: Page): { count: number; results: ScheduledChangeObject[] } {
    const filter = { model_name: query.get('model_name') ?? undefined, record_id: query.get('record_id') ?? undefined }
    const { count, records } = this.#repo.list(project.id, filter, page.limit, page.offset)
    return { count, results: records.map((r) => this.toObject(r)) }
  }

  record(project: Project, id: number): ScheduledChangeRecord {
    const record = this.#repo.get(project.id, id)
    if (!record) throw new AppError('not_found')
    return record
  }

  get(project: Project, id: number): ScheduledChangeObject {
    return this.toObject(this.record(project, id))
  }

  create(project: Project, body: unknown, userId: number): ScheduledChangeObject {
    const created = this.#deps.db
      .transaction(() => {
        const fields = readCreate(body)
        const flag = this.#editableFlag(project, fields.record_id, userId)
        const now = iso(this.#deps.clock.now())
        const record: Omit<ScheduledChangeRecord, 'id'> = {
          team_id: project.id,
          // The flag's own id, so `?record_id=` finds the change whatever spelling created it.
          record_id: String(flag.id),
          model_name: fields.model_name,
          payload: fields.payload,
          scheduled_at: fields.scheduled_at,
          executed_at: null,
          failure_reason: null,
          failure_count: 0,
          is_recurring: fields.is_recurring,
          recurrence_interval: fields.recurrence_interval ?? null,
          cron_expression: fields.cron_expression ?? null,
          last_executed_at: null,
          end_date: fields.end_date ?? null,
          // PostHog captures the project's timezone at creation, so a later change of it moves no schedule.
          timezone: project.timezone,
          created_by_id: userId,
          created_at: now,
          updated_at: now,
        }
        return this.get(project, this.#repo.insert(record))
      })
      .immediate()
    this.#changed()
    return created
  }

  update(project: Project, id: number, body: unknown, userId: number): ScheduledChangeObject {
    const updated = this.#deps.db
      .transaction(() => {
        const current = this.record(project, id)
        const fields = readUpdate(body, current)
        this.#editableFlag(project, current.record_id, userId)
        const next: ScheduledChangeRecord = {
          ...current,
          payload: fields.payload !== undefined ? fields.payload : current.payload,
          scheduled_at: fields.scheduled_at ?? current.scheduled_at,
          is_recurring: fields.is_recurring ?? current.is_recurring,
          recurrence_interval: fields.recurrence_interval !== undefined ? fields.recurrence_interval : current.recurrence_interval,
          cron_expression: fields.cron_expression !== undefined ? fields.cron_expression : current.cron_expression,
          end_date: fields.end_date !== undefined ? fields.end_date : current.end_date,
          updated_at: iso(this.#deps.clock.now()),
        }
        this.#repo.update(next)
        return this.toObject(next)
      })
      .immediate()
    this.#changed()
    return updated
  }

  /** Deleting cancels the change, so it needs edit rights on the flag; a change whose flag is gone can always go. */
  delete(project: Project, id: number, userId: number): void {
    this.#deps.db
      .transaction(() => {
        const current = this.record(project, id)
        const flagId = flagIdOf(current.record_id)
        const flag = flagId === null ? null : this.#deps.featureFlags.repository.get(project.id, flagId)
        if (flag && !this.#deps.featureFlags.canEdit(project, flag, userId)) throw new AppError('permission_denied', { detail: EDIT_DENIED_HERE })
        this.#repo.delete(project.id, id)
      })
      .immediate()
  }

  /** The project's flag `recordId` names (deleted ones too, as PostHog's lookup), if the user may edit it. */
  #editableFlag(project: Project, recordId: string, userId: number): FeatureFlagRecord {
    const flagId = flagIdOf(recordId)
    const flag = flagId === null ? null : this.#deps.featureFlags.repository.get(project.id, flagId)
    if (!flag) throw new ValidationError('invalid', FLAG_NOT_FOUND)
    if (!this.#deps.featureFlags.canEdit(project, flag, userId)) throw new ValidationError('invalid', EDIT_DENIED_HERE)
    return flag
  }

  #changed(): void {
    for (const listener of this.#listeners) listener()
  }
}
