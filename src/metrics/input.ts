/**
 * The metrics API's input as PostHog's MetricsViewSet reads it (products/metrics/backend/presentation/api.py):
 * DRF's field rules and messages, attrs named as its nested errors are (`query__metricName`), and the query
 * runner's own refusals (a range over 31 days, an interval making more than 10,000 buckets, a bad regex) as
 * ParseErrors. Everything here is pure; the route reads the store.
 */
import { drfDateTime, drfDict, drfInteger, drfList, drfText } from '../common/drf-fields.js'
import { ValidationError } from '../common/errors.js'
import { isPlainObject } from '../common/json.js'
import { pyTypeName } from '../common/python-format.js'
import { METRIC_TYPES, type MetricType } from './otlp.js'
import { AGGREGATIONS, INTERVALS, MAX_BUCKETS, MAX_SPAN_MS, pickInterval, type Interval, type MetricClause } from './query.js'
import { parseFormula } from './series.js'
import type { AttributeScope, MetricFilter } from './types.js'

const MAX_CLAUSES = 10
const OPS = ['eq', 'neq', 'regex', 'not_regex'] as const
const SCOPES = ['resource', 'attribute', 'auto'] as const

function choice<T extends string>(value: unknown, choices: readonly T[], attr: string, fallback: T | null): T | null {
  if (value === undefined) return fallback
  if (value === null) {
    if (fallback === null) return null
    throw new ValidationError('null', 'This field may not be null.', attr)
  }
  if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as T
  throw new ValidationError('invalid_choice', `"${String(value)}" is not a valid choice.`, attr)
}

function dict(value: unknown, attr: string): Record<string, unknown> {
  if (value === undefined) throw new ValidationError('required', 'This field is required.', attr)
  if (!isPlainObject(value)) throw new ValidationError('invalid', `Invalid data. Expected a dictionary, but got ${pyTypeName(value)}.`, attr)
  return value
}

function required<T>(value: unknown, attr: string, read: (v: unknown) => T): T {
  if (value === undefined) throw new ValidationError('required', 'This field is required.', attr)
  return read(value)
}

function list(value: unknown, attr: string, maxLength?: number): unknown[] {
  return value === undefined ? [] : drfList(value, attr, { maxLength })
}

function scope(value: unknown, attr: string): AttributeScope {
  return choice(value, SCOPES, attr, 'auto')!
}

function filters(value: unknown, attr: string): MetricFilter[] {
  return list(value, attr).map((f, i) => {
    const at = `${attr}__${i}`
    const o = dict(f, at)
    const filter: MetricFilter = {
      key: required(o.key, `${at}__key`, (v) => drfText(v, `${at}__key`, { maxLength: 255 })),
      op: choice(o.op, OPS, `${at}__op`, 'eq')!,
      value: required(o.value, `${at}__value`, (v) => drfText(v, `${at}__value`, { allowBlank: true, maxLength: 1024 })),
      scope: scope(o.scope, `${at}__scope`),
    }
    if (filter.op === 'regex' || filter.op === 'not_regex') {
      try {
        new RegExp(filter.value, 'u')
      } catch (error) {
        throw new ValidationError('parse_error', `Invalid regular expression for filter '${filter.key}': ${(error as Error).message}`)
      }
    }
    return filter
  })
}

function quantileField(value: unknown, attr: string): number | null {
  if (value === undefined || value === null) return null
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new ValidationError('invalid', 'A valid number is required.', attr)
  if (n < 0) throw new ValidationError('min_value', 'Ensure this value is greater than or equal to 0.0.', attr)
  if (n > 1) throw new ValidationError('max_value', 'Ensure this value is less than or equal to 1.0.', attr)
  return n
}

function clause(o: Record<string, unknown>, attr: string, name: string): MetricClause {
  const aggregation = choice(o.aggregation, AGGREGATIONS, `${attr}aggregation`, 'sum')!
  const quantile = quantileField(o.quantile, `${attr}quantile`)
  if (aggregation === 'histogram_quantile' && (quantile === null || quantile <= 0 || quantile >= 1)) {
    throw new ValidationError('parse_error', 'histogram_quantile requires a quantile in (0, 1)')
  }
  return {
    name,
    metricName: required(o.metricName, `${attr}metricName`, (v) => drfText(v, `${attr}metricName`, { maxLength: 255 })),
    metricType: choice(o.metricType, METRIC_TYPES, `${attr}metricType`, null),
    aggregation,
    quantile,
    filters: filters(o.filters, `${attr}filters`),
    groupBy: list(o.groupBy, `${attr}groupBy`).map((g, i) => {
      const at = `${attr}groupBy__${i}`
      const go = dict(g, at)
      return { key: required(go.key, `${at}__key`, (v) => drfText(v, `${at}__key`, { maxLength: 255 })), scope: scope(go.scope, `${at}__scope`) }
    }),
  }
}

function dateField(value: unknown, attr: string): number {
  return Date.parse(drfDateTime(value, attr)!)
}

export interface ParsedMetricQuery {
  clauses: MetricClause[]
  /** The range's start, moved back to its bucket's (ms). */
  fromMs: number
  toMs: number
  interval: Interval
  formula: string | null
}

/** `{"query": {...}}` of `metrics/query/`; `align` floors the start onto the interval's grid. */
export function parseMetricQuery(body: unknown, nowMs: number, align: (ms: number, interval: Interval) => number): ParsedMetricQuery {
  const q = dict(drfDict(body).query, 'query')
  const hasSingle = q.metricName !== undefined && q.metricName !== null && q.metricName !== ''
  const hasClauses = Array.isArray(q.clauses) && q.clauses.length > 0
  const rawClauses = list(q.clauses, 'query__clauses', MAX_CLAUSES)
  if (hasSingle === hasClauses) throw new ValidationError('invalid', "Provide exactly one of 'metricName' or 'clauses'.", 'query__non_field_errors')
  const formula = q.formula === undefined || q.formula === null ? null : drfText(q.formula, 'query__formula', { maxLength: 512 })
  if (formula !== null && !hasClauses) throw new ValidationError('invalid', "'formula' requires 'clauses'.", 'query__non_field_errors')
  if (hasClauses && q.metricType !== undefined && q.metricType !== null) {
    throw new ValidationError('invalid', "'metricType' applies to the single-clause shorthand; set it per clause instead.", 'query__non_field_errors')
  }
  const clauses = hasClauses
    ? rawClauses.map((c, i) => {
        const at = `query__clauses__${i}__`
        const o = dict(c, `query__clauses__${i}`)
        return clause(o, at, required(o.name, `${at}name`, (v) => drfText(v, `${at}name`, { maxLength: 64 })))
      })
    : [clause(q, 'query__', 'a')]
  // A bad formula is refused before any clause is read.
  if (formula !== null) parseFormula(formula, new Set(clauses.map((c) => c.name)))
  const interval = choice(q.interval, Object.keys(INTERVALS) as Interval[], 'query__interval', null)
  const fromMs = required(q.dateFrom, 'query__dateFrom', (v) => dateField(v, 'query__dateFrom'))
  const toMs = q.dateTo === undefined ? nowMs : dateField(q.dateTo, 'query__dateTo')
  if (toMs <= fromMs) throw new ValidationError('parse_error', 'date_to must be after date_from')
  if (toMs - fromMs > MAX_SPAN_MS) throw new ValidationError('parse_error', 'date range too wide; the maximum span is 31 days')
  if (interval !== null && (toMs - fromMs) / INTERVALS[interval] > MAX_BUCKETS) {
    throw new ValidationError('parse_error', `interval '${interval}' produces more than ${MAX_BUCKETS} buckets over this range; use a coarser interval or a narrower range`)
  }
  const chosen = interval ?? pickInterval(fromMs, toMs)
  return { clauses, fromMs: align(fromMs, chosen), toMs, interval: chosen, formula }
}

export interface ParsedSamplesQuery {
  metricName: string | null
  metricType: MetricType | null
  fromMs: number
  toMs: number
  traceId: string | null
  spanId: string | null
  filters: MetricFilter[]
  limit: number
}

/** `{"query": {...}}` of `metrics/samples/`. */
export function parseSamplesQuery(body: unknown, nowMs: number): ParsedSamplesQuery {
  const q = dict(drfDict(body).query, 'query')
  const optionalText = (v: unknown, attr: string) => (v === undefined ? '' : drfText(v, attr, { allowBlank: true, maxLength: 255 }))
  const metricName = optionalText(q.metricName, 'query__metricName')
  const traceId = optionalText(q.traceId, 'query__traceId').toLowerCase()
  const spanId = optionalText(q.spanId, 'query__spanId').toLowerCase()
  const fromMs = required(q.dateFrom, 'query__dateFrom', (v) => dateField(v, 'query__dateFrom'))
  const parsed: ParsedSamplesQuery = {
    metricName: metricName || null,
    metricType: choice(q.metricType, METRIC_TYPES, 'query__metricType', null),
    fromMs,
    toMs: q.dateTo === undefined ? nowMs : dateField(q.dateTo, 'query__dateTo'),
    traceId: traceId || null,
    spanId: spanId || null,
    filters: filters(q.filters, 'query__filters'),
    limit: q.limit === undefined ? 100 : drfInteger(q.limit, 'query__limit', { min: 1, max: 1000 })!,
  }
  if (!parsed.metricName && !parsed.traceId) throw new ValidationError('invalid', 'metricName or traceId is required.', 'query__non_field_errors')
  if (parsed.spanId && !parsed.traceId) throw new ValidationError('invalid', 'spanId requires traceId.', 'query__non_field_errors')
  return parsed
}

/** A GET parameter `limit` (1–1,000, 100 by default). */
export function limitParam(raw: string | null): number {
  return raw === null ? 100 : drfInteger(raw, 'limit', { min: 1, max: 1000 })!
}

/**
 * A GET window: `dateFrom`/`dateTo` (ISO 8601), the last seven days by default; the start moved back to its hour
 * (UTC), as the pickers' counts are kept by the hour in PostHog.
 */
export function windowParams(query: URLSearchParams, nowMs: number): { from: number; to: number } {
  const read = (name: string) => {
    const raw = query.get(name)
    return raw === null || raw === '' ? null : dateField(raw, name)
  }
  const to = read('dateTo') ?? nowMs
  const from = read('dateFrom') ?? to - 7 * 86_400_000
  if (to <= from) throw new ValidationError('parse_error', 'date_to must be after date_from')
  return { from: Math.floor(from / 3_600_000) * 3_600_000_000, to: to * 1000 }
}

/** `service` of `metrics/values/`: absent = every service, empty = the senders without a name, else a comma list. */
export function servicesParam(raw: string | null): string[] {
  if (raw === null) return []
  if (raw === '') return ['']
  return raw.split(',').filter((s) => s !== '')
}
