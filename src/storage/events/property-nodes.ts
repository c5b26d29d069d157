/**
 * Reading a property node as PostHog writes one (`{key, value, operator, type}`, or an AND/OR group of nodes)
 * into what the stores evaluate (types.ts). Three places read them: the read APIs' `properties` parameter
 * (src/http/routes/property-filters.ts), action steps (src/management/actions/properties.ts) and experiment
 * metrics' step filters (src/experiments/metrics.ts, leaves only). The shape is read once here; each caller
 * decides which filter types it evaluates and words its own refusals (a 400 in the envelope, the reason a step
 * can't be evaluated, a metric's 400), so the refusal callback throws and the read stops at the first.
 */
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { HogqlMathError, hogqlHolders, hogqlPatterns, parseHogqlCondition } from './hogql-math.js'
import { isFilterScalar, MAX_PROPERTY_DEPTH, PROPERTY_OPERATORS, REGEX_LIMITS, REGEX_OPERATORS, type EventPropertyFilter, type HogqlCondition, type PropertyNode, type PropertyOperator } from './types.js'

/** What can't be read, with where (`properties[0].values[1]`, from the caller's `path`) and the node read. */
export type NodeRefusal =
  | { why: 'not_object' | 'too_deep'; path: string }
  | { why: 'no_key' | 'type' | 'operator' | 'value' | 'regex'; path: string; node: JsonObject }

export interface NodeRules {
  /** What a filter of the node's `type` (as sent: absent and null included) becomes; undefined refuses it. */
  kind(type: unknown): ((filter: EventPropertyFilter) => PropertyNode) | undefined
  /** A missing key is refused before a refused type (the read APIs' order); by default after it. */
  keyFirst?: boolean
  /**
   * Whether every store runs a pattern of the regex operators (REGEX_OPERATORS); absent, they are refused as
   * other operators are. A pattern it refuses is a `regex` refusal. A reader sets it only where each filter type
   * it takes is evaluated where `skylark_regex` is (events.db, persons.db) or by the matcher's engine.
   */
  regex?: (pattern: string) => boolean
  refuse(refusal: NodeRefusal): never
  /** A filter the reader reads whole (a cohort filter, whose operators are its own); undefined: read as the others. */
  whole?(node: JsonObject): PropertyNode | undefined
}

const OPERATORS: readonly PropertyOperator[] = PROPERTY_OPERATORS

/** NodeRules.kind of a reader of event property filters only: a filter without a type (or a null one) is one. */
export const eventFiltersOnly: NodeRules['kind'] = (type) => ((type ?? 'event') === 'event' ? (filter) => filter : undefined)

/** A node at `depth` (a list's items are at 1): a group of nodes, nested at most MAX_PROPERTY_DEPTH deep, or a filter. */
export function readPropertyNode(node: unknown, path: string, depth: number, rules: NodeRules): PropertyNode {
  if (!isPlainObject(node)) return rules.refuse({ why: 'not_object', path })
  if (Array.isArray(node.values) && (node.type === 'AND' || node.type === 'OR')) {
    if (depth >= MAX_PROPERTY_DEPTH) return rules.refuse({ why: 'too_deep', path })
    return { type: node.type, values: node.values.map((v, i) => readPropertyNode(v, `${path}.values[${i}]`, depth + 1, rules)) }
  }
  return readPropertyFilter(node, path, rules)
}

/** A node that is no group: its type, key, operator (`exact` when absent) and value (a scalar or a list of them). */
export function readPropertyFilter(node: JsonObject, path: string, rules: NodeRules): PropertyNode {
  const whole = rules.whole?.(node)
  if (whole !== undefined) return whole
  if (rules.keyFirst && typeof node.key !== 'string') return rules.refuse({ why: 'no_key', path, node })
  const kind = rules.kind(node.type) ?? rules.refuse({ why: 'type', path, node })
  if (typeof node.key !== 'string') return rules.refuse({ why: 'no_key', path, node })
  const operator = (node.operator ?? 'exact') as PropertyOperator
  const regex = (REGEX_OPERATORS as readonly unknown[]).includes(operator)
  if (!OPERATORS.includes(operator) && !(regex && rules.regex)) return rules.refuse({ why: 'operator', path, node })
  const value = node.value
  if (regex && typeof value !== 'string') return rules.refuse({ why: 'value', path, node })
  if (!(value === undefined || isFilterScalar(value) || (Array.isArray(value) && value.every(isFilterScalar)))) return rules.refuse({ why: 'value', path, node })
  if (regex && !rules.regex!(value as string)) return rules.refuse({ why: 'regex', path, node })
  return kind({ key: node.key, operator, value: value as EventPropertyFilter['value'] })
}

/**
 * A HogQL filter (`type: 'hogql'`): its key is the expression, read as a condition (parseHogqlCondition), and
 * its operator and value are not read, as PostHog's `property_to_expr`. `refuse` words what can't be read.
 * `regex` says whether every store runs a match() pattern (NodeRules.regex); undefined refuses match().
 */
export function hogqlFilter(filter: EventPropertyFilter, refuse: (detail: string) => never, regex: ((pattern: string) => boolean) | undefined): HogqlCondition {
  let condition: HogqlCondition
  try {
    condition = { hogql: parseHogqlCondition(filter.key) }
  } catch (error) {
    if (error instanceof HogqlMathError) return refuse(error.message)
    throw error
  }
  for (const pattern of hogqlPatterns(condition.hogql)) {
    if (regex === undefined) return refuse('match() is not read here.')
    if (!regex(pattern)) return refuse(`match()'s pattern ${JSON.stringify(pattern)} is one skylark's stores can't run (${REGEX_LIMITS}).`)
  }
  return condition
}

/**
 * Whether a HogQL filter reads a person's properties (`person.properties.<key>`): it is then resolved against
 * persons.db's persons, as a person property filter is, apart from the events; so one reading the event's
 * properties as well is refused.
 */
export function readsPersons(condition: HogqlCondition, refuse: (detail: string) => never): boolean {
  const { event, person } = hogqlHolders(condition.hogql)
  if (event && person) return refuse("It reads both the event (its properties or fields) and the person's properties; skylark evaluates person properties apart (split it into two filters).")
  return person
}
