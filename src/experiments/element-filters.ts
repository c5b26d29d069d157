/**
 * Element filters (`type: "element"`) on a metric's events, as PostHog's `property_to_expr` reads them:
 * `selector` and `tag_name` (`exact` or `is_not` only) match the elements chain as an action step's selector and
 * tag name do; `href` compares the chain's first href and `text` any one of its texts, with a property filter's
 * operators (the regex ones too). A list of values is any of them, or every one for a negated operator; a single-item list is its
 * item. Other keys are a 400.
 */
import { ValidationError } from '../common/errors.js'
import type { JsonObject } from '../common/json.js'
import { chainCondition, stepRunnable, storesCanRun } from '../management/index.js'
import { readPropertyFilter, type ActionStepCondition, type EventPropertyFilter, type NodeRefusal, type PropertyNode } from '../storage/events/index.js'

const NEGATED: ReadonlySet<string> = new Set(['is_not', 'not_icontains'])
/** What matches no event (an empty list of values, a selector the stores can't run). */
const NOTHING: PropertyNode = { distinctIds: [] }

const invalid = (detail: string) => new ValidationError('invalid', detail)

export function elementFilter(leaf: JsonObject, refuse: (refusal: NodeRefusal) => never): PropertyNode {
  const { key, operator, value } = readPropertyFilter(leaf, 'properties', { kind: () => (f) => f, regex: storesCanRun, refuse }) as EventPropertyFilter
  if (key !== 'selector' && key !== 'tag_name' && key !== 'href' && key !== 'text') {
    throw invalid(`Element filters on ${JSON.stringify(key)} are not supported; selector, tag_name, href and text are.`)
  }
  if (Array.isArray(value) && value.length !== 1) {
    const negated = NEGATED.has(operator)
    if (value.length === 0) return negated ? { type: 'AND', values: [] } : NOTHING
    return { type: negated ? 'AND' : 'OR', values: value.map((one) => elementFilter({ ...leaf, value: one }, refuse)) }
  }
  const one = Array.isArray(value) ? value[0] : value
  if (key === 'href' || key === 'text') return { element: key, filter: { key, operator, value: one } }
  if (operator !== 'exact' && operator !== 'is_not') throw invalid(`Element ${key} filters take only the exact and is_not operators.`)
  if (one === null || one === undefined) throw invalid(`An element ${key} filter needs a value.`)
  const text = String(one)
  const step: ActionStepCondition = { event: null, url: null, href: null, text: null, properties: [], ...chainCondition(key === 'selector' ? text : null, key === 'tag_name' ? text : null) }
  const node: PropertyNode = stepRunnable(step) ? { actionSteps: [step] } : NOTHING
  return operator === 'is_not' ? { not: node } : node
}
