/**
 * Reading a metric from PostHog's insight filter format (`filters` and each secondary metric's
 * `filters`): `insight` FUNNELS or TRENDS, `events` and `actions` with `id` and `order`, optional
 * event-property filters per step, and the funnel conversion window. An action becomes the stores' condition
 * for its steps (src/management/actions), read from the events its steps name (any event when one names
 * none). HogQL filters (`type: 'hogql'`) read the subset hogql-math.ts names. What skylark cannot compute is
 * refused with a 400 naming it, rather than answered wrongly: person/cohort property filters (events carry no
 * person properties here, in actions' steps neither), and trend math other than the total count.
 */
import { ValidationError } from '../common/errors.js'
import { isPlainObject, type JsonObject } from '../common/json.js'
import { actionCondition, storesCanRun, type ActionRecord } from '../management/index.js'
import { elementFilter } from './element-filters.js'
import { eventFiltersOnly, hogqlFilter, MAX_EXPERIMENT_STEPS, readPropertyFilter, readsPersons, REGEX_LIMITS, type EventPropertyFilter, type NodeRefusal, type NodeRules, type HolderBreakdown, type PersonProperty, type PropertyNode, type PropertyPath } from '../storage/events/index.js'

export interface MetricStep {
  /** The entity as the filters name it (an event's name, an action's id), echoed in the answer. */
  id: string | number
  type: 'events' | 'actions'
  /** The event names read: one, any of an action's, or any event (null). */
  event: string | string[] | null
  name: string
  custom_name: string | null
  order: number
  properties: PropertyNode[]
}

/** An action of the experiment's project by id (a deleted one too, as PostHog's `Entity.get_action`), or null. */
export type ActionById = (id: number) => Pick<ActionRecord, 'name' | 'steps'> | null

export type Metric =
  | { insight: 'FUNNELS'; steps: MetricStep[]; windowMs: number }
  | { insight: 'TRENDS'; series: MetricStep }

const DAY_MS = 86_400_000
/** A Map: the unit comes from the request, and a plain object would also answer `constructor`. */
const UNIT_MS: ReadonlyMap<string, number> = new Map([
  ['second', 1000],
  ['minute', 60_000],
  ['hour', 3_600_000],
  ['day', DAY_MS],
  ['week', 7 * DAY_MS],
  ['month', 30 * DAY_MS],
])
/** PostHog's default funnel conversion window. */
export const DEFAULT_FUNNEL_WINDOW_MS = 14 * DAY_MS

const refuse = (detail: string) => new ValidationError('invalid', detail)

/** Leaves of a property list or an AND group; OR groups of several conditions can't be expressed as one step filter. */
export function propertyLeaves(node: unknown): JsonObject[] {
  if (node === undefined || node === null) return []
  if (Array.isArray(node)) return node.flatMap(propertyLeaves)
  if (!isPlainObject(node)) throw refuse('Metric property filters must be objects.')
  if (Array.isArray(node.values) && (node.type === 'AND' || node.type === 'OR')) {
    if (node.type === 'OR' && node.values.length > 1) throw refuse('OR groups of property filters are not supported in experiment metrics.')
    return node.values.flatMap(propertyLeaves)
  }
  return [node]
}

function leafRefusal(r: NodeRefusal): ValidationError {
  switch (r.why) {
    case 'type':
      return refuse(`Only event and HogQL property filters are supported in experiment metrics, not "${String(r.node.type)}".`)
    case 'no_key':
      return refuse('Every metric property filter needs a key.')
    case 'operator':
      return refuse(`Unsupported property operator in experiment metrics: ${String(r.node.operator)}.`)
    case 'value':
      return refuse(`Metric property filter "${String(r.node.key)}" needs a scalar value or a list of them (a text, for a regex).`)
    case 'regex':
      return refuse(`Metric property filter "${String(r.node.key)}": skylark's stores can't run the regex ${JSON.stringify(r.node.value)} (${REGEX_LIMITS}).`)
    default:
      // propertyLeaves reads the structure (objects, groups): the leaf reader refuses neither.
      return refuse('Metric property filters must be objects.')
  }
}

/**
 * What person property and cohort filters read as in the new engine (the distinct ids of the persons they
 * match now, src/experiments/query/person-filters.ts); absent where they are refused.
 */
export interface PersonLookup {
  person(filter: EventPropertyFilter): PropertyNode
  /** A `type: "cohort"` leaf, as found. */
  cohort(leaf: JsonObject): PropertyNode
  /** A breakdown by a person property, or with `groupTypeIndex` by a property of the groups of that type. */
  breakdown(key: string, groupTypeIndex?: number | null): HolderBreakdown
  /** A `type: "group"` leaf, as found. */
  group(leaf: JsonObject): PropertyNode
  /** A HogQL filter reading person properties (readsPersons), by its key. */
  hogql(key: string): PropertyNode
  /** A person property (path) HogQL math reads, as the persons of each distinct id have it now. */
  personProperty(path: PropertyPath): PersonProperty
}

/** A HogQL filter's expression it can't read, named. */
const hogqlRefusal = (filter: EventPropertyFilter) => (detail: string): never => {
  throw refuse(`HogQL filter ${JSON.stringify(filter.key)}: ${detail}`)
}

function leafRules(lookup: PersonLookup | null): NodeRules {
  return {
    kind: (type) => {
      if (type === 'hogql') {
        return (filter) => {
          const refusal = hogqlRefusal(filter)
          const condition = hogqlFilter(filter, refusal, storesCanRun)
          if (!readsPersons(condition, refusal)) return condition
          return lookup !== null ? lookup.hogql(filter.key) : refusal('Person properties are not read here.')
        }
      }
      return type === 'person' && lookup !== null ? (filter) => lookup.person(filter) : eventFiltersOnly(type)
    },
    regex: storesCanRun,
    refuse: (r) => {
      throw leafRefusal(r)
    },
  }
}

const LEAF_RULES = leafRules(null)

/**
 * A property list's leaves as filters (storage/events/property-nodes.ts): event and element ones
 * (element-filters.ts), and person, cohort and group ones where `lookup` reads them; anything else a metric's 400.
 */
export function propertyFilters(node: unknown, lookup: PersonLookup | null = null): PropertyNode[] {
  const rules = lookup === null ? LEAF_RULES : leafRules(lookup)
  return propertyLeaves(node).map((leaf) => {
    if (lookup !== null && leaf.type === 'cohort') return lookup.cohort(leaf)
    if (lookup !== null && leaf.type === 'group') return lookup.group(leaf)
    if (leaf.type === 'element') return elementFilter(leaf, (r) => { throw leafRefusal(r) })
    return readPropertyFilter(leaf, 'properties', rules)
  })
}

/** A metric step with the `math` its entity asked for (read by the caller). */
export interface Entity extends MetricStep {
  math: unknown
}

export function eventEntity(entity: unknown, index: number): Entity {
  if (!isPlainObject(entity) || typeof entity.id !== 'string' || entity.id === '') {
    throw refuse('Every metric event needs an event name as its id (all events is not supported).')
  }
  return {
    id: entity.id,
    type: 'events',
    event: entity.id,
    name: typeof entity.name === 'string' ? entity.name : entity.id,
    custom_name: typeof entity.custom_name === 'string' ? entity.custom_name : null,
    order: typeof entity.order === 'number' ? entity.order : index,
    properties: propertyFilters(entity.properties),
    math: entity.math,
  }
}

/** An `actions` entity: the action's steps as one condition, read from the events they name. */
export function actionEntity(entity: unknown, index: number, actionById: ActionById): Entity {
  const raw = isPlainObject(entity) ? entity.id : undefined
  const id = typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : raw
  if (!isPlainObject(entity) || typeof id !== 'number' || !Number.isSafeInteger(id)) throw refuse('Every metric action needs an action id.')
  const action = actionById(id)
  // PostHog's Entity.get_action message.
  if (!action) throw refuse(`Action ID ${id} does not exist!`)
  const named = action.steps.every((step) => step.event)
  return {
    id,
    type: 'actions',
    event: action.steps.length > 0 && named ? [...new Set(action.steps.map((step) => step.event!))] : null,
    name: typeof entity.name === 'string' ? entity.name : (action.name ?? String(id)),
    custom_name: typeof entity.custom_name === 'string' ? entity.custom_name : null,
    order: typeof entity.order === 'number' ? entity.order : index,
    properties: [...propertyFilters(entity.properties), actionCondition(action.steps)],
    math: entity.math,
  }
}

/** `events` and `actions` together, by `order` (position when missing), as PostHog orders funnel steps. */
function steps(filters: JsonObject, actionById: ActionById): MetricStep[] {
  const events = Array.isArray(filters.events) ? filters.events : []
  const actions = Array.isArray(filters.actions) ? filters.actions : []
  return [...events.map(eventEntity), ...actions.map((a, i) => actionEntity(a, events.length + i, actionById))]
    .sort((a, b) => a.order - b.order)
    .map(({ math, ...step }) => {
      if (math !== undefined && math !== null && math !== 'total' && filters.insight === 'TRENDS') {
        throw refuse(`Trend math "${String(math)}" is not supported in experiment metrics; only the total count is.`)
      }
      return step
    })
}

/** `funnel_window_interval` + `_unit`, else the legacy `funnel_window_days`, else 14 days. */
function funnelWindowMs(filters: JsonObject): number {
  const interval = filters.funnel_window_interval
  if (typeof interval === 'number' && interval > 0) {
    const unit = typeof filters.funnel_window_interval_unit === 'string' ? filters.funnel_window_interval_unit : 'day'
    const ms = UNIT_MS.get(unit)
    if (!ms) throw refuse(`Unknown funnel_window_interval_unit "${unit}".`)
    return interval * ms
  }
  const days = filters.funnel_window_days
  if (typeof days === 'number' && days > 0) return days * DAY_MS
  return DEFAULT_FUNNEL_WINDOW_MS
}

/** The insight type as PostHog decides it: the primary metric is a funnel unless it says TRENDS. */
export function metricInsight(filters: JsonObject, secondary: boolean): 'FUNNELS' | 'TRENDS' {
  const insight = typeof filters.insight === 'string' ? filters.insight.toUpperCase() : 'FUNNELS'
  if (insight === 'TRENDS') return 'TRENDS'
  if (secondary && insight !== 'FUNNELS') throw refuse('Secondary metrics need to be funnel or trend insights')
  return 'FUNNELS'
}

export function parseMetric(filters: JsonObject, secondary: boolean, actionById: ActionById): Metric {
  const insight = metricInsight(filters, secondary)
  const all = steps({ ...filters, insight }, actionById)
  if (all.length === 0) throw refuse(secondary ? 'Secondary metric has no events' : 'Experiment has no target metric')
  if (insight === 'TRENDS') return { insight, series: all[0] }
  // The store walks a funnel's steps as one number's bits (legacy-funnel.ts).
  if (all.length > MAX_EXPERIMENT_STEPS + 1) throw refuse(`Funnel metrics take at most ${MAX_EXPERIMENT_STEPS + 1} steps here.`)
  return { insight, steps: all, windowMs: funnelWindowMs(filters) }
}
