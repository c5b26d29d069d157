/**
 * The `properties` query parameter of the read APIs (events, persons), as PostHog takes it: a JSON list of
 * `{key, value, operator, type}` filters that must all hold, or a group `{type: "AND"|"OR", values: […]}`,
 * where a value may itself be a group (read by storage/events/property-nodes.ts). Each endpoint says how it
 * evaluates each filter type; any other type answers 400 rather than being tested as something it is not.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import {
  MAX_PROPERTY_DEPTH,
  PROPERTY_OPERATORS,
  readPropertyNode,
  REGEX_LIMITS,
  type EventPropertyFilter,
  type NodeRefusal,
  type NodeRules,
  type PropertyNode,
} from '../../storage/events/index.js'

/**
 * The filter types an endpoint evaluates, each with what a filter of that type becomes: itself (a condition on
 * the listed rows' properties) or another condition. A Map: the type comes from the request.
 */
export interface FilterKinds {
  /** The type of a filter that names none. */
  readonly byDefault: string
  readonly kinds: ReadonlyMap<string, (filter: EventPropertyFilter) => PropertyNode>
  /** Whether the stores run a regex operator's pattern (NodeRules.regex); absent, the operators are refused. */
  readonly regex?: (pattern: string) => boolean
  /** What a cohort filter (`type: "cohort"`) becomes; absent, cohort filters are refused. */
  readonly cohort?: (leaf: JsonObject) => PropertyNode
}

export const asIs = (filter: EventPropertyFilter): PropertyNode => filter

const invalid = (detail: string) => new ValidationError('invalid_input', detail, 'properties')

/** A 400 for a HogQL filter (`type: "hogql"`), saying what in its expression can't be read. */
export function refuseHogql(filter: EventPropertyFilter, detail: string): never {
  throw invalid(`The HogQL filter ${JSON.stringify(filter.key)}: ${detail}`)
}

/** Each refusal as a 400 naming where in the parameter it is. */
function refusal(r: NodeRefusal, kinds: FilterKinds): ValidationError {
  switch (r.why) {
    case 'not_object':
      return invalid(`${r.path} must be a property filter or a group.`)
    case 'too_deep':
      return invalid(`properties nest at most ${MAX_PROPERTY_DEPTH} groups deep.`)
    case 'no_key':
      return invalid(`${r.path} needs a string key.`)
    case 'type':
      return invalid(`${r.path} has type ${JSON.stringify(r.node.type)}; this endpoint filters on ${[...kinds.kinds.keys(), ...(kinds.cohort ? ['cohort'] : [])].join(' or ')} properties only.`)
    case 'operator':
      return invalid(`${r.path}.operator must be one of ${PROPERTY_OPERATORS.join(', ')}${kinds.regex ? ', regex, not_regex' : ''}.`)
    case 'value':
      return invalid(`${r.path}.value must be a scalar or a list of scalars (a text, for a regex).`)
    case 'regex':
      return invalid(`${r.path}.value ${JSON.stringify(r.node.value)} is a regex skylark's stores can't run (${REGEX_LIMITS}).`)
  }
}

/** The node rules of an endpoint: its filter types (a missing key is named first), refused with a 400. */
function rulesOf(kinds: FilterKinds): NodeRules {
  return {
    kind: (type) => {
      const named = type === undefined ? kinds.byDefault : type
      return typeof named === 'string' ? kinds.kinds.get(named) : undefined
    },
    keyFirst: true,
    regex: kinds.regex,
    whole: kinds.cohort ? (node) => (node.type === 'cohort' ? kinds.cohort!(node) : undefined) : undefined,
    refuse: (r) => {
      throw refusal(r, kinds)
    },
  }
}

/** The filters that must all hold, or undefined without the parameter. */
export function parsePropertyFilters(raw: string | null, kinds: FilterKinds): PropertyNode[] | undefined {
  return readPropertyFilters(propertiesJson(raw), kinds)
}

/** The parameter's JSON (undefined without one), for a reader that looks at it before readPropertyFilters. */
export function propertiesJson(raw: string | null): unknown {
  if (raw === null || raw === '') return undefined
  try {
    return JSON.parse(raw)
  } catch {
    throw invalid('properties must be a JSON list of property filters.')
  }
}

/** parsePropertyFilters of the parameter's JSON already parsed. */
export function readPropertyFilters(parsed: unknown, kinds: FilterKinds): PropertyNode[] | undefined {
  if (parsed === undefined) return undefined
  const rules = rulesOf(kinds)
  if (isPlainObject(parsed)) return [readPropertyNode(parsed, 'properties', 0, rules)]
  if (!Array.isArray(parsed)) throw invalid('properties must be a JSON list of property filters.')
  return parsed.map((node, i) => readPropertyNode(node, `properties[${i}]`, 1, rules))
}

/** 400 for a parameter PostHog filters by and this endpoint does not: answering unfiltered would mislead. */
export function refuseUnsupported(query: URLSearchParams, names: readonly string[]): void {
  for (const name of names) {
    if ((query.get(name) ?? '') !== '') throw new ValidationError('unsupported', `Filtering by ${name} is not supported.`, name)
  }
}
