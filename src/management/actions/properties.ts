/**
 * An action step's `properties` read as skylark's event property filters (the operators and text forms of
 * src/storage/events, which the SQL stores apply): a list of `{key, value, operator, type}` that must all
 * hold, where an item may be an AND/OR group, HogQL filters (hogql-math.ts's subset) and the regex operators
 * (patterns the stores run, regex.ts). PostHog also evaluates person, element and cohort filters here; a step
 * holding one of those can't be evaluated by skylark, and says which (`null` answers: nothing is refused).
 */
import { isPlainObject } from '../../common/json.js'
import { compileSearchRegex } from '../../flags/index.js'
import {
  eventFiltersOnly,
  hogqlFilter,
  hogqlHolds,
  MAX_PROPERTY_DEPTH,
  readPropertyNode,
  readsPersons,
  textNumber,
  type EventPropertyFilter,
  type NodeRefusal,
  type NodeRules,
  type PropertyNode,
  type PropertyPath,
} from '../../storage/events/index.js'
import { storesCanRun } from './regex.js'

export type StepProperties = { nodes: PropertyNode[] } | { unsupported: string }

/** A step's property node skylark can't evaluate, and what it is. */
class Unsupported {
  constructor(readonly reason: string) {}
}

function reason(r: NodeRefusal): string {
  switch (r.why) {
    case 'not_object':
      return 'a property filter that is not an object'
    case 'too_deep':
      return `property groups nested over ${MAX_PROPERTY_DEPTH} deep`
    case 'type':
      return `${String(r.node.type)} property filters`
    case 'no_key':
      return 'a property filter without a key'
    case 'operator':
      return `the property operator ${JSON.stringify(r.node.operator)}`
    case 'value':
      return 'a property filter value that is not a scalar or a list of them (a text, for a regex)'
    case 'regex':
      return `the regex ${JSON.stringify(r.node.value)}, which the stores can't run`
  }
}

/** A HogQL filter on the event's properties; one on a person's can't be evaluated on a step. */
function stepHogqlFilter(filter: EventPropertyFilter): PropertyNode {
  const refuse = (detail: string): never => {
    throw new Unsupported(`the HogQL filter ${JSON.stringify(filter.key)} (${detail})`)
  }
  const condition = hogqlFilter(filter, refuse, storesCanRun)
  return readsPersons(condition, refuse) ? refuse('person properties') : condition
}

/** The nodes as storage/events/property-nodes.ts reads them, event property filters only; a refusal says what can't be evaluated. */
const STEP_RULES: NodeRules = {
  kind: (type) => (type === 'hogql' ? stepHogqlFilter : eventFiltersOnly(type)),
  regex: storesCanRun,
  refuse: (r) => {
    throw new Unsupported(reason(r))
  },
}

export function readStepProperties(properties: readonly unknown[] | null): StepProperties {
  try {
    return { nodes: (properties ?? []).map((item) => readPropertyNode(item, 'properties', 1, STEP_RULES)) }
  } catch (error) {
    if (error instanceof Unsupported) return { unsupported: error.reason }
    throw error
  }
}

/** A top-level property's text form, as the stores compare it: strings as they are, other JSON as written. */
export function propertyText(properties: Record<string, unknown>, key: string): string | null {
  return pathText(properties, [key])
}

/** The text form of a property path's value (HogQL's `properties.a.b`): each key after the first within an object. */
export function pathText(properties: Record<string, unknown>, path: PropertyPath): string | null {
  let value: unknown = properties
  for (const key of path) {
    if (!isPlainObject(value) || !Object.hasOwn(value, key)) return null
    value = value[key]
  }
  if (value === null || value === undefined) return null
  return typeof value === 'string' ? value : JSON.stringify(value)
}

const textOf = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value))

function filterHolds(filter: EventPropertyFilter, properties: Record<string, unknown>): boolean {
  const text = propertyText(properties, filter.key)
  const values = (Array.isArray(filter.value) ? filter.value : [filter.value]).filter((v) => v !== null && v !== undefined).map(textOf)
  switch (filter.operator) {
    case 'exact':
      return text !== null && values.includes(text)
    case 'is_not':
      return text === null || !values.includes(text)
    case 'icontains':
      return text !== null && text.toLowerCase().includes(textOf(filter.value).toLowerCase())
    case 'not_icontains':
      return text === null || !text.toLowerCase().includes(textOf(filter.value).toLowerCase())
    case 'is_set':
      return Object.hasOwn(properties, filter.key)
    case 'is_not_set':
      return !Object.hasOwn(properties, filter.key)
    case 'regex':
    case 'not_regex':
      return (text !== null && compileSearchRegex(String(filter.value))?.test(text) === true) === (filter.operator === 'regex')
    default: {
      const bound = Number(filter.value)
      const n = text === null ? null : textNumber(text)
      if (n === null || !Number.isFinite(bound)) return false
      return filter.operator === 'gt' ? n > bound : filter.operator === 'gte' ? n >= bound : filter.operator === 'lt' ? n < bound : n <= bound
    }
  }
}

/** What property filters read of an event: its properties, and HogQL filters its name and distinct id too. */
export interface FilteredEvent {
  event: string
  distinct_id: string
  properties: Record<string, unknown>
}

/** Whether every node holds on the event; an empty group holds. */
export function propertiesHold(nodes: readonly PropertyNode[], e: FilteredEvent): boolean {
  return nodes.every((node) => nodeHolds(node, e))
}

function nodeHolds(node: PropertyNode, e: FilteredEvent): boolean {
  const { properties } = e
  if ('key' in node) return filterHolds(node, properties)
  // A filter reads these two fields only (hogql-parse.ts).
  if ('hogql' in node) return hogqlHolds(node.hogql, (path) => pathText(properties, path), compileSearchRegex, (field) => e[field as 'event' | 'distinct_id'])
  // None is ever read from a step's properties.
  if ('distinctIds' in node || 'groupKeys' in node || 'actionSteps' in node || 'element' in node || 'not' in node || 'staticCohort' in node || 'personsOf' in node) return false
  if (node.values.length === 0) return true
  return node.type === 'OR' ? node.values.some((v) => nodeHolds(v, e)) : node.values.every((v) => nodeHolds(v, e))
}
