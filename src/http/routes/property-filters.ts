/**
 * The `properties` query parameter of the read APIs (events, persons), as PostHog takes it: a JSON list of
 * `{key, value, operator, type}` filters that must all hold, or a group `{type: "AND"|"OR", values: […]}`,
 * where a value may itself be a group. Each endpoint says how it evaluates each filter type; any other type
 * answers 400 rather than being tested as something it is not.
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject } from '../../common/json.js'
import { isFilterScalar, MAX_PROPERTY_DEPTH, PROPERTY_OPERATORS, type EventPropertyFilter, type PropertyNode, type PropertyOperator } from '../../storage/events/index.js'

/**
 * The filter types an endpoint evaluates, each with what a filter of that type becomes: itself (a condition on
 * the listed rows' properties) or another condition. A Map: the type comes from the request.
 */
export interface FilterKinds {
  /** The type of a filter that names none. */
  readonly byDefault: string
  readonly kinds: ReadonlyMap<string, (filter: EventPropertyFilter) => PropertyNode>
}

export const asIs = (filter: EventPropertyFilter): PropertyNode => filter

const OPERATORS: readonly PropertyOperator[] = PROPERTY_OPERATORS

const MAX_DEPTH = MAX_PROPERTY_DEPTH

const invalid = (detail: string) => new ValidationError('invalid_input', detail, 'properties')

const isScalar = isFilterScalar

function parseNode(node: unknown, path: string, kinds: FilterKinds, depth: number): PropertyNode {
  if (!isPlainObject(node)) throw invalid(`${path} must be a property filter or a group.`)
  if (Array.isArray(node.values) && (node.type === 'AND' || node.type === 'OR')) {
    if (depth >= MAX_DEPTH) throw invalid(`properties nest at most ${MAX_DEPTH} groups deep.`)
    return { type: node.type, values: node.values.map((v, i) => parseNode(v, `${path}.values[${i}]`, kinds, depth + 1)) }
  }
  if (typeof node.key !== 'string') throw invalid(`${path} needs a string key.`)
  const type = node.type === undefined ? kinds.byDefault : node.type
  const kind = typeof type === 'string' ? kinds.kinds.get(type) : undefined
  if (kind === undefined) {
    throw invalid(`${path} has type ${JSON.stringify(node.type)}; this endpoint filters on ${[...kinds.kinds.keys()].join(' or ')} properties only.`)
  }
  const operator = (node.operator ?? 'exact') as PropertyOperator
  if (!OPERATORS.includes(operator)) throw invalid(`${path}.operator must be one of ${OPERATORS.join(', ')}.`)
  const value = node.value
  if (!(value === undefined || isScalar(value) || (Array.isArray(value) && value.every(isScalar)))) {
    throw invalid(`${path}.value must be a scalar or a list of scalars.`)
  }
  return kind({ key: node.key, operator, value: value as EventPropertyFilter['value'] })
}

/** The filters that must all hold, or undefined without the parameter. */
export function parsePropertyFilters(raw: string | null, kinds: FilterKinds): PropertyNode[] | undefined {
  if (raw === null || raw === '') return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw invalid('properties must be a JSON list of property filters.')
  }
  if (isPlainObject(parsed)) return [parseNode(parsed, 'properties', kinds, 0)]
  if (!Array.isArray(parsed)) throw invalid('properties must be a JSON list of property filters.')
  return parsed.map((node, i) => parseNode(node, `properties[${i}]`, kinds, 1))
}

/** 400 for a parameter PostHog filters by and this endpoint does not: answering unfiltered would mislead. */
export function refuseUnsupported(query: URLSearchParams, names: readonly string[]): void {
  for (const name of names) {
    if ((query.get(name) ?? '') !== '') throw new ValidationError('unsupported', `Filtering by ${name} is not supported.`, name)
  }
}
