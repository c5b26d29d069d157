/**
 * An action (PostHog's steps, as src/management/actions describes them) as a condition over events.db. SQLite
 * has neither ClickHouse's LIKE (its own ignores ASCII case) nor regexes nor the chain's materialised
 * columns, so the read connection gets them as functions running the same code the action matcher runs:
 * `skylark_like` and the chain's href and value lists (`registerActionFunctions`), and `skylark_regex` (the safe
 * engine the composition root hands in; registered with the filters' functions, sqlite-filters.ts).
 */
import { like } from '../../common/sql-like.js'
import { chainHref, chainValues, type ChainColumn } from './elements-chain.js'
import type { Db } from '../sqlite/database.js'
import type { ActionCondition, ActionStepCondition, PropertyNode, TextMatch } from './types.js'

interface SqlFragment {
  sql: string
  params: unknown[]
}

/** What the filters compiler lends: property conditions and the text of `$current_url`. */
export interface ActionSqlContext {
  properties(nodes: readonly PropertyNode[]): SqlFragment
  currentUrl: SqlFragment
}

/**
 * A regex search engine (the flags' safe engine as ClickHouse's match reads patterns, compileSearchRegex): a pattern's
 * test, its shape and first match (HogQL's extract and replaceRegexp*, hogql-regex.ts), or null for a pattern it
 * refuses (which then matches nothing).
 */
export type RegexEngine = (pattern: string) => {
  test(text: string): boolean | null
  find(text: string, from?: number): Int32Array | null | undefined
  readonly groups: number
  readonly canMatchEmpty: boolean
  readonly fancy: boolean
} | null

const text = (v: unknown) => (typeof v === 'string' ? v : null)

/**
 * `skylark_regex(text, pattern)`, the regex operators' search, on any connection whose conditions may hold one
 * (events.db's reads, and persons.db's for person and group filters). Without an engine a query with one fails.
 */
export function registerRegexFunction(db: Db, regex: RegexEngine | null): void {
  db.function('skylark_regex', { deterministic: true }, (value, pattern) => {
    if (regex === null) throw new Error('no regex engine was given to this connection')
    const t = text(value)
    return t !== null && regex(String(pattern))?.test(t) === true ? 1 : 0
  })
}

export function registerActionFunctions(db: Db): void {
  db.function('skylark_like', { deterministic: true }, (value, pattern, ci) => {
    const t = text(value)
    return t !== null && like(t, String(pattern), ci === 1) ? 1 : 0
  })
  db.function('skylark_chain_href', { deterministic: true }, (chain) => chainHref(text(chain) ?? ''))
  db.function('skylark_chain_values', { deterministic: true }, (chain, column) =>
    JSON.stringify(chainValues(text(chain) ?? '', String(column) as Exclude<ChainColumn, 'href'>)),
  )
}

function textMatch(expression: SqlFragment, m: TextMatch): SqlFragment {
  const { sql, params } = expression
  switch (m.mode) {
    case 'exact':
      return { sql: `coalesce(${sql} = ?, 0)`, params: [...params, m.pattern] }
    case 'like':
    case 'ilike':
      return { sql: `skylark_like(${sql}, ?, ${m.mode === 'ilike' ? 1 : 0})`, params: [...params, m.pattern] }
    case 'regex':
      return { sql: `skylark_regex(${sql}, ?)`, params: [...params, m.pattern] }
  }
}

const values = (column: Exclude<ChainColumn, 'href'>) => `json_each(skylark_chain_values(elements_chain, '${column}'))`

function stepCondition(step: ActionStepCondition, ctx: ActionSqlContext): SqlFragment {
  const parts: SqlFragment[] = []
  if (step.event !== null) parts.push({ sql: 'event = ?', params: [step.event] })
  for (const regex of step.chainRegexes) parts.push(textMatch({ sql: 'elements_chain', params: [] }, { mode: 'regex', pattern: regex }))
  for (const id of step.chainIds) parts.push({ sql: `EXISTS (SELECT 1 FROM ${values('attr_id')} WHERE value = ?)`, params: [id] })
  if (step.chainTags.length > 0) {
    parts.push({ sql: `EXISTS (SELECT 1 FROM ${values('element')} WHERE value IN (SELECT value FROM json_each(?)))`, params: [JSON.stringify(step.chainTags)] })
  }
  if (step.href !== null) parts.push(textMatch({ sql: 'skylark_chain_href(elements_chain)', params: [] }, step.href))
  if (step.text !== null) {
    const inner = textMatch({ sql: 'value', params: [] }, step.text)
    parts.push({ sql: `EXISTS (SELECT 1 FROM ${values('text')} WHERE ${inner.sql})`, params: inner.params })
  }
  if (step.url !== null) parts.push(textMatch(ctx.currentUrl, step.url))
  if (step.properties.length > 0) parts.push(ctx.properties(step.properties))
  if (parts.length === 0) return { sql: '1', params: [] }
  return { sql: `(${parts.map((p) => p.sql).join(' AND ')})`, params: parts.flatMap((p) => p.params) }
}

/** Any step of the action; an action without steps holds for every event. */
export function actionCondition(node: ActionCondition, ctx: ActionSqlContext): SqlFragment {
  if (node.actionSteps.length === 0) return { sql: '1', params: [] }
  const steps = node.actionSteps.map((s) => stepCondition(s, ctx))
  return { sql: `(${steps.map((s) => s.sql).join(' OR ')})`, params: steps.flatMap((s) => s.params) }
}
