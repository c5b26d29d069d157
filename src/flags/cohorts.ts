/**
 * Cohort membership as PostHog's flag service decides it: static cohorts from the membership the caller
 * loaded, dynamic cohorts from their two-level filter tree (`{type: AND|OR, values: [{type: AND|OR|property,
 * values: [filters]}]}`) evaluated on the person's properties, nested cohorts first. A missing or deleted
 * cohort, a dependency cycle or unreadable filters are evaluation errors of the flag that needs the cohort.
 */
import { compileFilter, FilterShapeError, type CompiledFilter, type CohortTest } from './filters.js'
import { EVALUATION_ERRORS, FlagEvaluationError } from './reasons.js'
import type { CohortDefinition } from './types.js'
import { lookup } from './values.js'

interface Group {
  op: string
  filters: CompiledFilter[]
}

interface DynamicCohort {
  id: number
  and: boolean
  groups: Group[]
  /** Cohorts this one refers to, in filter order. */
  deps: number[]
}

type Entry = { kind: 'static' } | { kind: 'dynamic'; cohort: DynamicCohort | null } | { kind: 'broken' }

/** What a request supplies for cohort checks; results are memoised per request. */
export interface CohortScope {
  person: Record<string, unknown>
  staticIds: ReadonlySet<number>
  now: number
  memo: Map<number, boolean | FlagEvaluationError>
}

export class CohortSet {
  readonly #entries = new Map<number, Entry>()
  /** Per cohort, the evaluation error its dependency graph implies (missing, cycle, unreadable), if any. */
  readonly #graphError = new Map<number, FlagEvaluationError | null>()

  constructor(cohorts: readonly CohortDefinition[], tz: string) {
    for (const c of cohorts) {
      if (c.deleted === true) continue
      if (c.is_static) this.#entries.set(c.id, { kind: 'static' })
      else this.#entries.set(c.id, parseDynamic(c, tz))
    }
  }

  get staticIds(): number[] {
    return [...this.#entries].filter(([, e]) => e.kind === 'static').map(([id]) => id)
  }

  /** Every cohort reachable from `id` (itself included) — what a caller must know about to evaluate it. */
  reachable(id: number, out = new Set<number>()): Set<number> {
    if (out.has(id)) return out
    out.add(id)
    const e = this.#entries.get(id)
    if (e?.kind === 'dynamic' && e.cohort !== null) for (const d of e.cohort.deps) this.reachable(d, out)
    return out
  }

  /** Person-property keys the dynamic cohorts reachable from `id` read. */
  propertyKeys(id: number): string[] {
    const keys: string[] = []
    for (const c of this.reachable(id)) {
      const e = this.#entries.get(c)
      if (e?.kind === 'dynamic' && e.cohort !== null) for (const g of e.cohort.groups) for (const f of g.filters) if (f.kind === 'property') keys.push(f.lookupKey)
    }
    return keys
  }

  /** Breadth-first from `id` like PostHog's graph build: the first missing/broken node wins, a cycle last. */
  #checkGraph(id: number): FlagEvaluationError | null {
    if (this.#graphError.has(id)) return this.#graphError.get(id)!
    let error: FlagEvaluationError | null = null
    const seen = new Set([id])
    const queue = [id]
    const edges = new Map<number, number[]>()
    while (queue.length > 0 && error === null) {
      const cur = queue.shift()!
      const e = this.#entries.get(cur)
      if (e === undefined) error = EVALUATION_ERRORS.cohortNotFound()
      else if (e.kind === 'broken') error = EVALUATION_ERRORS.cohortFilters()
      else if (e.kind === 'dynamic' && e.cohort !== null) {
        edges.set(cur, e.cohort.deps)
        for (const d of e.cohort.deps) if (!seen.has(d)) (seen.add(d), queue.push(d))
      }
    }
    if (error === null && hasCycle(id, edges)) error = EVALUATION_ERRORS.cohortCycle()
    this.#graphError.set(id, error)
    return error
  }

  /** Whether the person is in cohort `id`; throws the cohort's evaluation error. */
  member(id: number, scope: CohortScope): boolean {
    const cached = scope.memo.get(id)
    if (cached !== undefined) {
      if (cached instanceof FlagEvaluationError) throw cached
      return cached
    }
    let result: boolean | FlagEvaluationError
    const e = this.#entries.get(id)
    if (e === undefined) result = EVALUATION_ERRORS.cohortNotFound()
    else if (e.kind === 'static') result = scope.staticIds.has(id)
    else result = this.#checkGraph(id) ?? this.#evaluate(e, scope)
    scope.memo.set(id, result)
    if (result instanceof FlagEvaluationError) throw result
    return result
  }

  #evaluate(e: Entry, scope: CohortScope): boolean | FlagEvaluationError {
    if (e.kind !== 'dynamic' || e.cohort === null) return false
    // dependencies first; the graph check has already ruled out cycles and missing nodes
    for (const d of e.cohort.deps) {
      const dep = this.#entries.get(d)!
      if (dep.kind === 'static') scope.memo.set(d, scope.staticIds.has(d))
      else if (!scope.memo.has(d)) scope.memo.set(d, this.#evaluate(dep, scope))
      const r = scope.memo.get(d)
      if (r instanceof FlagEvaluationError) return r
    }
    try {
      const matches = (g: Group): boolean => evaluateGroup(g, scope)
      return e.cohort.and ? e.cohort.groups.every(matches) : e.cohort.groups.some(matches)
    } catch (err) {
      if (err instanceof FlagEvaluationError) return err
      throw err
    }
  }
}

/** PostHog's `apply_cohort_membership_logic` for one filter: `in` (the default) / `not_in`; any other operator fails. */
export function membershipMatches(f: CohortTest, member: boolean): boolean {
  return f.operator === 'in' ? member : f.operator === 'not_in' ? !member : false
}

function cohortMember(f: CohortTest, scope: CohortScope): boolean {
  if (f.cohortId === null) throw EVALUATION_ERRORS.cohortFilters()
  const r = scope.memo.get(f.cohortId)
  return membershipMatches(f, r === true)
}

/**
 * One inner group. In an OR group a cohort filter's `negation` is ignored, in AND/property groups it
 * inverts — both as in PostHog. Property filters always honour `negation`.
 */
function evaluateGroup(g: Group, scope: CohortScope): boolean {
  const prop = (f: CompiledFilter): boolean => {
    if (f.kind !== 'property') return false
    return f.test(lookup(scope.person, f.lookupKey), scope.now) !== f.negation
  }
  if (g.op === 'OR') return g.filters.some((f) => (f.kind === 'cohort' ? cohortMember(f, scope) : prop(f)))
  if (g.op === 'AND' || g.op === 'property') return g.filters.every((f) => (f.kind === 'cohort' ? cohortMember(f, scope) !== f.negation : prop(f)))
  throw EVALUATION_ERRORS.cohortFilters()
}

function parseDynamic(c: CohortDefinition, tz: string): Entry {
  if (c.filters === null || c.filters === undefined) return { kind: 'dynamic', cohort: null }
  const props = (c.filters as { properties?: unknown }).properties
  if (props === null || typeof props !== 'object' || Array.isArray(props)) return { kind: 'broken' }
  const { type, values } = props as { type?: unknown; values?: unknown }
  if ((type !== 'AND' && type !== 'OR') || !Array.isArray(values)) return { kind: 'broken' }
  try {
    const groups: Group[] = []
    const deps: number[] = []
    for (const v of values) {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return { kind: 'broken' }
      const inner = v as { type?: unknown; values?: unknown }
      if (typeof inner.type !== 'string' || !Array.isArray(inner.values)) return { kind: 'broken' }
      const filters = inner.values.map((f) => compileFilter(f, tz))
      for (const f of filters) {
        if (f.kind !== 'cohort') continue
        // PostHog reads nested cohort ids as JSON integers only when building the graph
        if (!f.numericValue || f.cohortId === null) return { kind: 'broken' }
        deps.push(f.cohortId)
      }
      groups.push({ op: inner.type, filters })
    }
    return { kind: 'dynamic', cohort: { id: c.id, and: type === 'AND', groups, deps } }
  } catch (e) {
    if (e instanceof FilterShapeError) return { kind: 'broken' }
    throw e
  }
}

function hasCycle(start: number, edges: Map<number, number[]>): boolean {
  const state = new Map<number, 1 | 2>()
  const visit = (n: number): boolean => {
    const s = state.get(n)
    if (s === 1) return true
    if (s === 2) return false
    state.set(n, 1)
    for (const d of edges.get(n) ?? []) if (visit(d)) return true
    state.set(n, 2)
    return false
  }
  return visit(start)
}
