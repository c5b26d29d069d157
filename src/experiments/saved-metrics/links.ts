/**
 * Experiments' links to shared metrics: `saved_metrics_ids` on create and update (PostHog's
 * `validate_saved_metrics_ids` and the link sync of products/experiments/backend/experiment_service.py),
 * and the `saved_metrics` an experiment answers (PostHog's ExperimentToSavedMetricSerializer, the query
 * carrying its fingerprint for this experiment's settings).
 */
import { iso, type Clock } from '../../common/clock.js'
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { jsonEqual } from '../../management/index.js'
import type { Db } from '../../storage/index.js'
import { fingerprint, fingerprintContext } from '../metric-list.js'
import type { ExperimentRecord } from '../record.js'
import type { LinkedUuids } from './ordering.js'
import { isPrimary, type SavedMetricRecord } from './record.js'
import { SavedMetricRepository } from './repository.js'

/** A link a write asks for: the project's metric and the metadata sent (null when the item has none). */
export interface RequestedLink {
  metric: SavedMetricRecord
  metadata: JsonObject | null
}

export type SavedMetricLinkObject = {
  id: number
  experiment: number
  saved_metric: number
  metadata: JsonObject
  created_at: string
  query: JsonObject
  name: string
}

/** An id as Django's IntegerField lookup takes it: an integer, or a string of digits; anything else matches no row. */
function rowId(value: unknown): number | null {
  const n = typeof value === 'string' && /^\s*[+-]?\d{1,15}\s*$/.test(value) ? Number(value) : value
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : null
}

const uuidOf = (query: JsonObject): string | null => (typeof query.uuid === 'string' && query.uuid !== '' ? query.uuid : null)

/** The linked queries' uuids by list. */
export function uuidsByList(links: readonly RequestedLink[]): { primary: string[]; secondary: string[] } {
  const out = { primary: [] as string[], secondary: [] as string[] }
  for (const link of links) {
    const uuid = uuidOf(link.metric.query)
    if (uuid) (isPrimary(link.metadata) ? out.primary : out.secondary).push(uuid)
  }
  return out
}

/** The uuids of a new experiment's links. */
export const linkedOnCreate = (links: readonly RequestedLink[] | null): LinkedUuids => ({ ...uuidsByList(links ?? []), before: null })

export class SavedMetricLinks {
  readonly #repo: SavedMetricRepository
  readonly #clock: Clock

  constructor(db: Db, clock: Clock) {
    this.#repo = new SavedMetricRepository(db)
    this.#clock = clock
  }

  /**
   * The links `saved_metrics_ids` (its shape already checked) asks for, in its order; null when absent.
   * Every id must be a different metric of the project: PostHog counts the rows found against the list.
   */
  resolve(teamId: number, value: unknown): RequestedLink[] | null {
    if (!Array.isArray(value)) return null
    const items = value as JsonObject[]
    const ids = items.map((item) => rowId(item.id))
    const found = new Map(this.#repo.many(teamId, ids.filter((id): id is number => id !== null)).map((m) => [m.id, m]))
    if (found.size !== items.length || ids.some((id) => id === null)) {
      throw new ValidationError('invalid', 'Saved metric does not exist or does not belong to this project', 'saved_metrics_ids')
    }
    return items.map((item, i) => ({ metric: found.get(ids[i]!)!, metadata: isPlainObject(item.metadata) ? item.metadata : null }))
  }

  /** The experiment's links as a write would ask for them (duplicate copies them). */
  current(teamId: number, experimentId: number): RequestedLink[] {
    const links = this.#repo.links(experimentId)
    const metrics = new Map(this.#repo.many(teamId, links.map((l) => l.saved_metric_id)).map((m) => [m.id, m]))
    return links.flatMap((l) => (metrics.has(l.saved_metric_id) ? [{ metric: metrics.get(l.saved_metric_id)!, metadata: l.metadata }] : []))
  }

  /** The uuids of an update: `requested` links replace the current ones (undefined: the update leaves them). */
  onUpdate(teamId: number, experimentId: number, requested: RequestedLink[] | undefined): LinkedUuids {
    const current = uuidsByList(this.current(teamId, experimentId))
    return requested === undefined ? { ...current, before: null } : { ...uuidsByList(requested), before: current }
  }

  /**
   * Create: one link per item. As PostHog's link serializer, an item without metadata is refused (the
   * model's metadata may not be null); the transaction then leaves nothing behind.
   */
  create(experimentId: number, links: readonly RequestedLink[]): void {
    const now = iso(this.#clock.now())
    for (const link of links) {
      if (link.metadata === null) throw new ValidationError('null', 'This field may not be null.', 'metadata')
      this.#repo.insertLink(experimentId, link.metric.id, link.metadata, now)
    }
  }

  /** Update: links not asked for go, asked-for ones get the metadata sent (`{}` without), new ones are made. */
  sync(experimentId: number, links: readonly RequestedLink[]): void {
    const now = iso(this.#clock.now())
    const existing = new Map(this.#repo.links(experimentId).map((l) => [l.saved_metric_id, l]))
    const wanted = new Set(links.map((l) => l.metric.id))
    for (const [metricId, link] of existing) if (!wanted.has(metricId)) this.#repo.deleteLink(link.id)
    for (const { metric, metadata } of links) {
      const link = existing.get(metric.id)
      if (!link) this.#repo.insertLink(experimentId, metric.id, metadata ?? {}, now)
      else if (!jsonEqual(link.metadata, metadata ?? {})) this.#repo.updateLinkMetadata(link.id, metadata ?? {}, now)
    }
  }

  /** The experiment's `saved_metrics`, oldest link first. */
  answer(experiment: ExperimentRecord): SavedMetricLinkObject[] {
    const links = this.#repo.links(experiment.id)
    if (links.length === 0) return []
    const metrics = new Map(this.#repo.many(experiment.team_id, links.map((l) => l.saved_metric_id)).map((m) => [m.id, m]))
    const ctx = fingerprintContext(experiment, experiment.start_date)
    return links.flatMap((l) => {
      const metric = metrics.get(l.saved_metric_id)
      if (!metric) return []
      const query = { ...metric.query, fingerprint: fingerprint(metric.query, ctx) }
      return [{ id: l.id, experiment: l.experiment_id, saved_metric: metric.id, metadata: l.metadata, created_at: l.created_at, query, name: metric.name }]
    })
  }
}
