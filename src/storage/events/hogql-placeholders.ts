/**
 * A HogQLQuery's placeholders (`{name}`, PostHog's `values`): each replaced, before the query is read, by tokens of
 * its value as a constant (a text, a number, true, false or null, or a list of them for IN), so no value is ever
 * read as HogQL. `{filters}` without a value is PostHog's placeholder of the query's filters: none are given here,
 * so it is `true`, as PostHog reads it then.
 */
import { HogqlMathError, type Token } from './hogql-tokens.js'

/** The values a query's placeholders name (PostHog's `values`). */
export type PlaceholderValues = Readonly<Record<string, unknown>>

const MAX_LIST = 1000

const punct = (value: string, at: Token): Token => ({ kind: 'punct', value, start: at.start, end: at.end })

/** The tokens of one scalar value, placed where the placeholder `at` stood. */
function scalar(value: unknown, name: string, at: Token): Token[] {
  const { start, end } = at
  if (typeof value === 'string') return [{ kind: 'text', value, start, end }]
  if (typeof value === 'boolean' || value === null) return [{ kind: 'name', value: String(value), quoted: false, start, end }]
  if (typeof value === 'number' && Number.isFinite(value)) {
    const n: Token = { kind: 'number', value: Math.abs(value), start, end }
    return value < 0 || Object.is(value, -0) ? [punct('(', at), punct('-', at), n, punct(')', at)] : [n]
  }
  throw new HogqlMathError(`The value of {${name}} is a text, a number, true, false, null or a list of them here.`)
}

/** `tokens` with each `{name}` replaced by its value's tokens. */
export function fillPlaceholders(tokens: Token[], values: PlaceholderValues): Token[] {
  const out: Token[] = []
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]
    if (t.kind !== 'punct' || (t.value !== '{' && t.value !== '}')) {
      out.push(t)
      continue
    }
    const [name, close] = [tokens[i + 1], tokens[i + 2]]
    if (t.value === '}' || name?.kind !== 'name' || close?.kind !== 'punct' || close.value !== '}') throw new HogqlMathError(`A placeholder is a name in braces, as in {name}, at position ${t.start}.`)
    const at: Token = { ...t, end: close.end }
    i += 2
    if (!Object.hasOwn(values, name.value)) {
      if (name.value === 'filters') {
        out.push({ kind: 'name', value: 'true', quoted: false, start: at.start, end: at.end })
        continue
      }
      throw new HogqlMathError(`The placeholder {${name.value}} has no value: give it in the query's values.`)
    }
    const value = values[name.value]
    if (!Array.isArray(value)) {
      out.push(...scalar(value, name.value, at))
      continue
    }
    if (value.length === 0 || value.length > MAX_LIST) throw new HogqlMathError(`The list {${name.value}} holds 1 to ${MAX_LIST} values here.`)
    out.push(punct('(', at))
    value.forEach((item, k) => out.push(...(k > 0 ? [punct(',', at)] : []), ...scalar(item, name.value, at)))
    out.push(punct(')', at))
  }
  return out
}
