/**
 * The legacy engine's custom exposure, `parameters.custom_exposure_filter`: a filter of events or actions whose
 * first entity (by `order`, PostHog's `Filter.entities[0]`) says who was exposed, instead of `$feature_flag_called`
 * for the flag. Two readers use it, each as PostHog does:
 *
 * - the exposure cohort (`create_exposure_cohort_for_experiment`) keeps of the entity's properties only the event,
 *   feature and element ones (HogQL ones are refused here), flattened, and drops person and cohort filters; it
 *   puts no condition on the flag;
 * - the primary trend metric's results (`ClickhouseTrendExperimentResult`) apply them all, and count the entity
 *   by its math (`dau`: unique persons, else events).
 *
 * An empty filter, or a first entity without an id, is none (PostHog's `if exposure_filter_data` and `if
 * entity.id`).
 */
import { ValidationError } from '../common/errors.js'
import { isPlainObject, type JsonObject } from '../common/json.js'
import { actionEntity, eventEntity, type ActionById, type Entity, type MetricStep } from './metrics.js'
import type { ExperimentRecord } from './record.js'

export interface CustomExposure {
  /** The filter as stored, echoed in the results' `exposure_filters`. */
  filter: JsonObject
  step: MetricStep
  math: 'events' | 'persons'
}

/** What PostHog's exposure cohort keeps of the entity's property filters; a filter without a type is an event one. */
const COHORT_TYPES: ReadonlySet<unknown> = new Set([undefined, null, 'event', 'feature', 'element', 'hogql'])

const refuse = (detail: string) => new ValidationError('invalid', detail)

/** Every leaf of a property list or group, ANDed (PostHog's `property_groups.flat`). */
function flatLeaves(node: unknown): unknown[] {
  if (Array.isArray(node)) return node.flatMap(flatLeaves)
  if (isPlainObject(node) && Array.isArray(node.values) && (node.type === 'AND' || node.type === 'OR')) return node.values.flatMap(flatLeaves)
  return [node]
}

/** A `feature` filter compares an event property (`$feature/<key>`), as PostHog's `property_to_expr` reads it. */
function featureAsEvent(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(featureAsEvent)
  if (!isPlainObject(node)) return node
  if (Array.isArray(node.values) && (node.type === 'AND' || node.type === 'OR')) return { ...node, values: node.values.map(featureAsEvent) }
  return node.type === 'feature' ? { ...node, type: 'event' } : node
}

/**
 * The experiment's custom exposure, or null. `forCohort` reads the entity's properties as the exposure cohort
 * does (see above).
 */
export function customExposure(experiment: ExperimentRecord, actionById: ActionById, forCohort: boolean): CustomExposure | null {
  const filter = experiment.parameters?.custom_exposure_filter
  if (!isPlainObject(filter) || Object.keys(filter).length === 0) return null
  const events = Array.isArray(filter.events) ? filter.events : []
  const actions = Array.isArray(filter.actions) ? filter.actions : []
  const candidates = [
    ...events.map((raw, index) => ({ raw, index, type: 'events' as const })),
    ...actions.map((raw, i) => ({ raw, index: events.length + i, type: 'actions' as const })),
  ].flatMap(({ raw, index, type }) => (isPlainObject(raw) ? [{ raw, index, type, order: typeof raw.order === 'number' ? raw.order : index }] : []))
  const first = candidates.sort((a, b) => a.order - b.order)[0]
  if (!first?.raw.id) return null
  const { raw } = first
  const properties = featureAsEvent(raw.properties ?? [])
  const entity = { ...raw, properties: forCohort ? flatLeaves(properties).filter((leaf) => isPlainObject(leaf) && COHORT_TYPES.has(leaf.type)) : properties }
  let read: Entity
  if (first.type === 'events') read = eventEntity(entity, first.index)
  else {
    if (!/^\s*\d+\s*$/.test(String(raw.id))) throw refuse('Invalid action ID')
    read = actionEntity(entity, first.index, actionById)
  }
  const { math, ...step } = read
  if (math !== undefined && math !== null && math !== 'total' && math !== 'dau' && !forCohort) {
    throw refuse(`Exposure math "${String(math)}" is not supported in custom exposure filters; only the total count and dau are.`)
  }
  return { filter, step, math: math === 'dau' ? 'persons' : 'events' }
}
