/**
 * An action (PostHog's steps, as src/management/actions describes them) as a ClickHouse condition, written as
 * PostHog's `action_to_expr` compiles it: `like` (case-sensitive, `%`/`_` wildcards) and `lowerUTF8` on both
 * sides for ILIKE (18.16 has no ILIKE), re2's `match` for regexes, and the chain's materialised columns
 * computed from `elements_chain` with the same patterns (`extract`, `extractAll`). Every function here exists
 * on 18.16.
 */
import { matchSql, quote } from './clickhouse-schema.js'
import { CHAIN_PATTERNS, type ChainColumn } from './elements-chain.js'
import type { ActionCondition, ActionStepCondition, PropertyNode, TextMatch } from './types.js'

/** What the filters compiler lends: property conditions and the text of `$current_url`. */
export interface ClickHouseActionContext {
  properties(nodes: readonly PropertyNode[]): string
  currentUrl: string
}

function textMatch(expression: string, m: TextMatch): string {
  const p = quote(m.pattern)
  switch (m.mode) {
    case 'exact':
      return `ifNull(${expression} = ${p}, 0)`
    case 'like':
      return `ifNull(like(${expression}, ${p}), 0)`
    case 'ilike':
      return `ifNull(like(lowerUTF8(${expression}), lowerUTF8(${p})), 0)`
    case 'regex':
      return `ifNull(${matchSql(expression, m.pattern)}, 0)`
  }
}

/** The chain's values of a column (its materialised column's expression), and its first href ('' without one). */
export const chainValuesExpr = (column: Exclude<ChainColumn, 'href'>) => `extractAll(elements_chain, ${quote(CHAIN_PATTERNS[column])})`
export const chainHrefExpr = `extract(elements_chain, ${quote(CHAIN_PATTERNS.href)})`

function stepCondition(step: ActionStepCondition, ctx: ClickHouseActionContext): string {
  const parts: string[] = []
  if (step.event !== null) parts.push(`event = ${quote(step.event)}`)
  for (const regex of step.chainRegexes) parts.push(matchSql('elements_chain', regex))
  for (const id of step.chainIds) parts.push(`has(${chainValuesExpr('attr_id')}, ${quote(id)})`)
  if (step.chainTags.length > 0) parts.push(`hasAny(${chainValuesExpr('element')}, [${step.chainTags.map(quote).join(', ')}])`)
  if (step.href !== null) parts.push(textMatch(chainHrefExpr, step.href))
  if (step.text !== null) parts.push(`arrayExists(_text -> ${textMatch('_text', step.text)}, ${chainValuesExpr('text')})`)
  if (step.url !== null) parts.push(textMatch(ctx.currentUrl, step.url))
  if (step.properties.length > 0) parts.push(ctx.properties(step.properties))
  return parts.length === 0 ? '1' : `(${parts.join(' AND ')})`
}

/** Any step of the action; an action without steps holds for every event. */
export function clickHouseActionCondition(node: ActionCondition, ctx: ClickHouseActionContext): string {
  if (node.actionSteps.length === 0) return '1'
  return `(${node.actionSteps.map((s) => stepCondition(s, ctx)).join(' OR ')})`
}
