/**
 * PostHog's property filters (`{key, value, operator, type}`, lists of them, `{type: "AND"|"OR", values}` groups) as
 * the HogQL condition its property_to_expr makes of them, for `{filters}`'s `properties` and `filterTestAccounts`
 * (hogql-placeholders.ts): event properties as `properties['key']`, person properties as `person.properties['key']`,
 * a group's as `group_<n>.properties['key']` (hogql-lookups.ts), a cohort as `person_id [NOT] IN COHORT <id>`, a
 * HogQL filter as its own text, each operator as PostHog writes it (`icontains` as `toString(x) ILIKE '%v%'`, `%` and
 * `_` of the value left as wildcards as PostHog leaves them; `regex` as `ifNull(match(toString(x), 'v'), 0)`;
 * `is_set` as isNotNull). A list of values is IN for exact and is_not, else each value's condition joined by OR (AND
 * for the negative operators); an empty list or group holds. Other filter types and operators are a HogqlMathError
 * naming them.
 */
import { isPlainObject } from '../../common/json.js'
import { HogqlMathError } from './hogql-tokens.js'

const refuse = (detail: string) => new HogqlMathError(detail)

/** A HogQL literal of a filter's value: a text quoted with HogQL's escapes, a number, true, false or null. */
function literal(value: unknown, path: string): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
  if (typeof value === 'number' && Number.isFinite(value)) return value < 0 ? `(${value})` : String(value)
  if (typeof value === 'boolean' || value === null) return String(value)
  throw refuse(`${path}.value must be a text, a number, true, false, null or a list of them.`)
}

/** The condition of one operator on `field`, of one value (two for between). */
function compare(field: string, operator: string, value: unknown, path: string): string {
  const text = () => (typeof value === 'string' || typeof value === 'number' ? String(value) : literal(value, path))
  switch (operator) {
    case 'is_set':
      return `isNotNull(${field})`
    case 'is_not_set':
      return `isNull(${field})`
    case 'icontains':
    case 'not_icontains':
      return `toString(${field}) ${operator === 'icontains' ? '' : 'NOT '}ILIKE ${literal(`%${text()}%`, path)}`
    case 'regex':
      return `ifNull(match(toString(${field}), ${literal(text(), path)}), 0)`
    case 'not_regex':
      return `ifNull(NOT match(toString(${field}), ${literal(text(), path)}), 1)`
    case 'exact':
    case 'is_date_exact':
      return `${field} = ${literal(value, path)}`
    case 'is_not':
      return `${field} != ${literal(value, path)}`
    case 'lt':
    case 'is_date_before':
      return `${field} < ${literal(value, path)}`
    case 'gt':
    case 'is_date_after':
      return `${field} > ${literal(value, path)}`
    case 'lte':
    case 'max':
      return `${field} <= ${literal(value, path)}`
    case 'gte':
    case 'min':
      return `${field} >= ${literal(value, path)}`
    case 'between':
    case 'not_between': {
      if (!Array.isArray(value) || value.length !== 2 || !value.every((v) => Number.isFinite(Number(v))) || Number(value[0]) > Number(value[1])) {
        throw refuse(`${path}: ${operator} takes a list of two numbers [min, max], min first.`)
      }
      const [low, high] = value.map((v) => literal(v, path))
      return operator === 'between' ? `(${field} >= ${low} AND ${field} <= ${high})` : `(${field} < ${low} OR ${field} > ${high})`
    }
    default:
      throw refuse(`${path}.operator ${JSON.stringify(operator)} is not read in {filters} here.`)
  }
}

/** One filter's condition. */
function leaf(filter: Record<string, unknown>, path: string): string {
  const type = filter.type ?? 'event'
  if (typeof filter.key !== 'string') throw refuse(`${path} needs its key, a text.`)
  if (type === 'hogql') return `(${filter.key})`
  if (type === 'cohort' || type === 'static-cohort' || type === 'precalculated-cohort') {
    const id = Number(filter.value)
    if (!Number.isSafeInteger(id) || id <= 0 || (typeof filter.value !== 'number' && typeof filter.value !== 'string')) throw refuse(`${path} is a cohort filter: its value is the cohort's id.`)
    return `person_id ${filter.operator === 'not_in' ? 'NOT ' : ''}IN COHORT ${id}`
  }
  if (type !== 'event' && type !== 'person' && type !== 'group') throw refuse(`${path} has type ${JSON.stringify(type)}; {filters} reads event, person, group, cohort and hogql filters here.`)
  const index = filter.group_type_index
  if (type === 'group' && !(typeof index === 'number' && Number.isInteger(index) && index >= 0 && index <= 4)) throw refuse(`${path} is a group filter: its group_type_index is 0 to 4.`)
  const key = literal(filter.key, path)
  const holder = type === 'person' ? 'person.' : type === 'group' ? `group_${index}.` : ''
  const field = type === 'event' && filter.key === '$elements_chain' ? 'elements_chain' : `${holder}properties[${key}]`
  const operator = typeof filter.operator === 'string' ? filter.operator : 'exact'
  let value = filter.value
  if (Array.isArray(value) && operator !== 'between' && operator !== 'not_between') {
    if (value.length === 0) return '1'
    if (value.length === 1) value = value[0]
    else if (['exact', 'is_not', 'in', 'not_in'].includes(operator)) {
      return `${field} ${operator === 'exact' || operator === 'in' ? '' : 'NOT '}IN (${value.map((v) => literal(v, path)).join(', ')})`
    } else {
      const each = value.map((v) => compare(field, operator, v, path))
      return `(${each.join(['is_not', 'not_icontains', 'not_regex'].includes(operator) ? ' AND ' : ' OR ')})`
    }
  }
  if (operator === 'in' || operator === 'not_in') throw refuse(`${path}: ${operator} takes a list of values.`)
  return compare(field, operator, value, path)
}

/** The HogQL condition of a list of filters (all hold), a group, or one filter; `path` names it in refusals. */
export function propertyFiltersHogql(node: unknown, path: string, depth = 0): string {
  if (depth > 8) throw refuse(`${path} nests too deep.`)
  if (Array.isArray(node)) return node.length === 0 ? '1' : node.map((item, i) => `(${propertyFiltersHogql(item, `${path}[${i}]`, depth + 1)})`).join(' AND ')
  if (!isPlainObject(node)) throw refuse(`${path} must be a property filter or a group of them.`)
  if (node.type === 'AND' || node.type === 'OR') {
    const values = Array.isArray(node.values) ? node.values : []
    if (values.length === 0) return '1'
    return values.map((item, i) => `(${propertyFiltersHogql(item, `${path}.values[${i}]`, depth + 1)})`).join(` ${node.type} `)
  }
  return leaf(node, path)
}
