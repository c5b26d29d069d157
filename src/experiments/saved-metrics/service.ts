/**
 * PostHog's shared ("saved") experiment metrics (ee/clickhouse/views/experiment_saved_metrics.py,
 * products/experiments/backend/experiment_saved_metric_service.py): list (by name; `search` and `event`
 * filters), create, read, change and delete. A metric's query is an ExperimentMetric with a uuid of its
 * own; experiments link metrics through `saved_metrics_ids` (links.ts). Deleting one drops its links, as
 * PostHog's cascade does; the experiments' ordering lists keep its uuid, as PostHog's do. Each write runs
 * in one IMMEDIATE transaction on management.db.
 */
import { iso, type Clock } from '../../common/clock.js'
import { AppError, ValidationError } from '../../common/errors.js'
import type { JsonObject } from '../../common/json.js'
import type { Page } from '../../common/pagination.js'
import { normaliseTags, userSummary, type Accounts, type Project, type UserSummary } from '../../management/index.js'
import type { Db } from '../../storage/index.js'
import { idsNamingEvent, liveActionIds, type ProjectActions } from '../action-refs.js'
import { checkMetricActions, metricActionIds } from '../settings-validation.js'
import { readSavedMetricBody } from './input.js'
import { queryToStore } from './query.js'
import type { SavedMetricRecord } from './record.js'
import { SavedMetricRepository } from './repository.js'

export interface SavedMetricObject {
  id: number
  name: string
  description: string | null
  query: JsonObject
  created_by: UserSummary | null
  created_at: string
  updated_at: string
  tags: string[]
  user_access_level: 'editor'
}

export interface SavedMetricDeps {
  db: Db
  clock: Clock
  accounts: Accounts
  /** The project's actions, which ActionsNodes must name. */
  actions: ProjectActions
}

/** DRF's SearchFilter: every term (split on spaces and commas) in the name, the description or a tag. */
function matchesSearch(metric: SavedMetricRecord, search: string): boolean {
  const terms = search.replace(/\0/g, '').split(/[\s,]+/).filter(Boolean).map((t) => t.toLowerCase())
  const fields = [metric.name, metric.description ?? '', ...metric.tags].map((f) => f.toLowerCase())
  return terms.every((term) => fields.some((f) => f.includes(term)))
}

export class SavedMetrics {
  readonly #deps: SavedMetricDeps
  readonly #repo: SavedMetricRepository

  constructor(deps: SavedMetricDeps) {
    this.#deps = deps
    this.#repo = new SavedMetricRepository(deps.db)
  }

  #record(project: Project, id: number): SavedMetricRecord {
    const metric = this.#repo.get(project.id, id)
    if (!metric) throw new AppError('not_found')
    return metric
  }

  toObject(m: SavedMetricRecord): SavedMetricObject {
    const creator = m.created_by_id === null ? null : this.#deps.accounts.userById(m.created_by_id)
    return {
      id: m.id,
      name: m.name,
      description: m.description,
      query: m.query,
      created_by: creator ? userSummary(creator) : null,
      created_at: m.created_at,
      updated_at: m.updated_at,
      tags: m.tags,
      user_access_level: 'editor',
    }
  }

  get(project: Project, id: number): SavedMetricObject {
    return this.toObject(this.#record(project, id))
  }

  list(project: Project, query: URLSearchParams, page: Page): { count: number; results: SavedMetricObject[] } {
    const search = query.get('search')
    const event = query.get('event')
    const all = this.#repo.all(project.id)
    const naming = event ? idsNamingEvent(this.#deps.actions, project.id, all.map((m) => ({ id: m.id, queries: m.query })), event) : null
    const matching = all.filter((m) => (!search || matchesSearch(m, search)) && (!naming || naming.has(m.id)))
    return { count: matching.length, results: matching.slice(page.offset, page.offset + page.limit).map((m) => this.toObject(m)) }
  }

  create(project: Project, body: unknown, userId: number): SavedMetricObject {
    return this.#deps.db
      .transaction(() => {
        const fields = readSavedMetricBody(body, true, (name) => this.#checkNameFree(project, name, null))
        const now = iso(this.#deps.clock.now())
        const record: Omit<SavedMetricRecord, 'id'> = {
          team_id: project.id,
          name: fields.name!,
          description: fields.description ?? null,
          query: this.#query(project, fields.query, null),
          tags: normaliseTags(fields.tags ?? []),
          created_by_id: userId,
          created_at: now,
          updated_at: now,
        }
        return this.toObject({ ...record, id: this.#repo.insert(record) })
      })
      .immediate()
  }

  update(project: Project, id: number, body: unknown): SavedMetricObject {
    return this.#deps.db
      .transaction(() => {
        const current = this.#record(project, id)
        const fields = readSavedMetricBody(body, false, (name) => this.#checkNameFree(project, name, current.id))
        const next: SavedMetricRecord = {
          ...current,
          name: fields.name ?? current.name,
          description: fields.description === undefined ? current.description : fields.description,
          query: fields.query === undefined ? current.query : this.#query(project, fields.query, current.query),
          tags: fields.tags === undefined ? current.tags : normaliseTags(fields.tags),
          updated_at: iso(this.#deps.clock.now()),
        }
        this.#repo.update(next)
        return this.toObject(next)
      })
      .immediate()
  }

  delete(project: Project, id: number): void {
    this.#deps.db
      .transaction(() => {
        this.#repo.delete(project.id, this.#record(project, id).id)
      })
      .immediate()
  }

  /** The query to store, whose ActionsNodes name live actions of the project (those already stored excepted). */
  #query(project: Project, query: unknown, stored: JsonObject | null): JsonObject {
    const next = queryToStore(query, stored)
    checkMetricActions([next], project.id, liveActionIds(this.#deps.actions), metricActionIds(stored ? [stored] : []))
    return next
  }

  /** Names are unique within a project, ignoring case (PostHog's `name__iexact`). */
  #checkNameFree(project: Project, name: string, exceptId: number | null): void {
    const folded = name.toUpperCase()
    if (this.#repo.names(project.id, exceptId).some((n) => n.toUpperCase() === folded)) {
      throw new ValidationError('invalid', 'A shared metric with this name already exists.', 'name')
    }
  }
}
