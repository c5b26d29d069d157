/**
 * A shared metric's `query`, as PostHog's ExperimentSavedMetricService writes it
 * (products/experiments/backend/experiment_saved_metric_service.py): an ExperimentMetric checked as an
 * experiment's inline metrics are (with "Invalid metric: " in front of the message), which keeps one
 * uuid for life. Pure.
 */
import { randomUUID } from 'node:crypto'
import { pyTruthy } from '../../common/drf-fields.js'
import { ValidationError } from '../../common/errors.js'
import type { JsonObject } from '../../common/json.js'
import { jsonEqual } from '../../management/index.js'
import { checkMetric } from '../settings-validation.js'

const fail = (detail: string) => new ValidationError('invalid', detail)

/**
 * The query to store. A new metric gets a new uuid, even when the body sends one: a client promoting an
 * inline metric sends its uuid, and sharing it would make the two read each other's results. An edit
 * keeps the stored uuid (refusing another one). A query sent back unchanged is not checked again, so a
 * rule added after it was saved does not block renaming it.
 */
export function queryToStore(query: unknown, stored: JsonObject | null): JsonObject {
  const unchanged = stored !== null && pyTruthy(query) && jsonEqual(query, stored)
  if (!unchanged) {
    if (!pyTruthy(query)) throw fail('Query is required to create a saved metric')
    checkMetric(query, 'Invalid metric: ', null)
  }
  const normalized = { ...(query as JsonObject) }
  const storedUuid = stored?.uuid
  if (pyTruthy(storedUuid) && pyTruthy(normalized.uuid) && normalized.uuid !== storedUuid) throw fail('Saved metric UUID cannot be changed')
  normalized.uuid = pyTruthy(storedUuid) ? storedUuid! : randomUUID()
  return normalized
}
