/**
 * A metric query's answer as PostHog's metrics facade makes it (facade/api.py, formula.py): one series per
 * clause and label set on one grid of buckets (every bucket any clause has, a missing point 0), at most 100 per
 * clause (the largest by summed magnitude), each with the unit its series share; or, with a formula, the
 * formula's series alone, clauses matched by label set (an ungrouped clause applies to every set).
 */
import { compareText } from '../storage/events/index.js'
import { ValidationError } from '../common/errors.js'
import { isoformat } from '../common/time-zones.js'
import { MAX_SERIES, type ClausePoint, type MetricClause } from './query.js'

export interface MetricSeries {
  labels: Record<string, string>
  points: Array<{ time: string; value: number | null }>
  metric_name: string | null
  clause: string
  unit: string | null
}

type Node = { n: number } | { id: string } | { neg: Node } | { op: string; l: Node; r: Node }

const TOKEN = /\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(\d+(?:\.\d+)?)|([()+\-*/]))/y

const formulaError = (detail: string) => new ValidationError('parse_error', detail)

/** expr := term (('+'|'-') term)* ; term := factor (('*'|'/') factor)* ; factor := number | clause | '(' expr ')' | '-' factor */
export function parseFormula(formula: string, clauses: ReadonlySet<string>): Node {
  const tokens: Array<[kind: 'id' | 'n' | 'op', text: string]> = []
  TOKEN.lastIndex = 0
  while (TOKEN.lastIndex < formula.length) {
    const at = TOKEN.lastIndex
    const m = TOKEN.exec(formula)
    if (!m) {
      const rest = formula.slice(at).trim()
      if (!rest) break
      throw formulaError(`Unexpected character in formula: '${rest[0]}'`)
    }
    tokens.push(m[1] ? ['id', m[1]] : m[2] ? ['n', m[2]] : ['op', m[3]!])
  }
  if (tokens.length === 0) throw formulaError('Formula is empty')
  let i = 0
  const peek = () => tokens[i]
  const take = () => {
    const t = tokens[i++]
    if (!t) throw formulaError('Unexpected end of formula')
    return t
  }
  const expr = (): Node => {
    let node = term()
    while (peek()?.[0] === 'op' && '+-'.includes(peek()![1])) node = { op: take()[1], l: node, r: term() }
    return node
  }
  const term = (): Node => {
    let node = factor()
    while (peek()?.[0] === 'op' && '*/'.includes(peek()![1])) node = { op: take()[1], l: node, r: factor() }
    return node
  }
  const factor = (): Node => {
    const [kind, text] = take()
    if (kind === 'op' && text === '-') return { neg: factor() }
    if (kind === 'op' && text === '(') {
      const node = expr()
      const close = take()
      if (close[0] !== 'op' || close[1] !== ')') throw formulaError('Unbalanced parentheses in formula')
      return node
    }
    if (kind === 'n') return { n: Number(text) }
    if (kind === 'id') {
      if (!clauses.has(text)) throw formulaError(`Unknown clause '${text}' in formula; available clauses: [${[...clauses].sort().map((c) => `'${c}'`).join(', ')}]`)
      return { id: text }
    }
    throw formulaError(`Unexpected token in formula: '${text}'`)
  }
  const node = expr()
  if (i < tokens.length) throw formulaError(`Unexpected token in formula: '${tokens[i]![1]}'`)
  return node
}

/** One grid point; dividing by zero gives 0, as charts and alert thresholds want a number. */
export function evaluate(node: Node, values: Record<string, number>): number {
  if ('n' in node) return node.n
  if ('id' in node) return values[node.id]!
  if ('neg' in node) return -evaluate(node.neg, values)
  const l = evaluate(node.l, values)
  const r = evaluate(node.r, values)
  if (node.op === '+') return l + r
  if (node.op === '-') return l - r
  if (node.op === '*') return l * r
  return r === 0 ? 0 : l / r
}

/** A label set's key: its pairs sorted, as Python sorts a tuple of pairs. */
const labelKey = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort(([a], [b]) => compareText(a, b)))

/** A clause's series on the grid (`times`: the grid's buckets as the answer writes them). */
function assemble(points: readonly ClausePoint[], clause: MetricClause, grid: number[], times: string[]): MetricSeries[] {
  const sets = new Map<string, { labels: Record<string, string>; values: Map<number, number | null>; units: Set<string> }>()
  for (const p of points) {
    const key = labelKey(p.labels)
    let set = sets.get(key)
    if (!set) sets.set(key, (set = { labels: p.labels, values: new Map(), units: new Set() }))
    set.values.set(p.time, p.value)
    for (const u of p.units) set.units.add(u)
  }
  const ranked = [...sets.entries()]
    .map(([key, set]) => ({ key, set, magnitude: [...set.values.values()].reduce<number>((a, v) => a + Math.abs(v ?? 0), 0) }))
    .sort((a, b) => b.magnitude - a.magnitude || compareText(a.key, b.key))
  return ranked.slice(0, MAX_SERIES).map(({ set }) => ({
    labels: set.labels,
    points: grid.map((t, i) => ({ time: times[i]!, value: set.values.has(t) ? set.values.get(t)! : 0 })),
    metric_name: clause.metricName,
    clause: clause.name,
    unit: set.units.size === 1 && !set.units.has('') ? [...set.units][0]! : null,
  }))
}

function applyFormula(node: Node, byClause: Map<string, MetricSeries[]>, times: string[]): MetricSeries[] {
  const broadcasts = new Map<string, MetricSeries>()
  const grouped = new Map<string, Map<string, MetricSeries>>()
  for (const [name, list] of byClause) {
    if (list.length === 1 && Object.keys(list[0]!.labels).length === 0) broadcasts.set(name, list[0]!)
    else grouped.set(name, new Map(list.map((s) => [labelKey(s.labels), s])))
  }
  let keys = [labelKey({})]
  if (grouped.size > 0) {
    const [first, ...rest] = [...grouped.values()]
    keys = [...first!.keys()].filter((k) => rest.every((m) => m.has(k))).sort()
  }
  return keys.map((key) => {
    const inputs = [...byClause.keys()].map((name) => [name, grouped.get(name)?.get(key) ?? broadcasts.get(name)!] as const)
    return {
      labels: Object.fromEntries(JSON.parse(key) as Array<[string, string]>),
      points: times.map((time, i) => {
        const values: Record<string, number> = {}
        for (const [name, s] of inputs) {
          const v = s.points[i]!.value
          if (v === null) return { time, value: null }
          values[name] = v
        }
        const result = evaluate(node, values)
        return { time, value: Number.isFinite(result) ? result : null }
      }),
      metric_name: null,
      clause: 'formula',
      unit: null,
    }
  })
}

/** The answer's series: the clauses' (each clause's points keyed by its name), or the formula's. */
export function metricSeries(clauses: readonly MetricClause[], points: ReadonlyMap<string, ClausePoint[]>, formula: string | null, zone: string): MetricSeries[] {
  const node = formula === null ? null : parseFormula(formula, new Set(clauses.map((c) => c.name)))
  const grid = [...new Set([...points.values()].flatMap((list) => list.map((p) => p.time)))].sort((a, b) => a - b)
  if (grid.length === 0) {
    const first = clauses[0]!
    return [{ labels: {}, points: [], metric_name: node ? null : first.metricName, clause: node ? 'formula' : first.name, unit: null }]
  }
  const times = grid.map((t) => isoformat(t * 1000, zone))
  const byClause = new Map(clauses.map((c) => [c.name, assemble(points.get(c.name) ?? [], c, grid, times)]))
  if (node) return applyFormula(node, byClause, times)
  return [...byClause.values()].flat()
}
