/**
 * PostHog's `transform_cohort_filters_for_easy_evaluation`: local-evaluation definitions served without
 * cohorts (no `send_cohorts`) inline a flag's one cohort as person-property conditions, so SDKs that never
 * ask for cohorts can still evaluate it. Only when the flag reaches exactly one cohort (nested ones count),
 * no condition overrides a variant, the cohort's condition has no other property, and the cohort is plain
 * person properties without negation that fit "OR of ANDs"; otherwise the conditions are served unchanged
 * (null here) and SDKs fall back to the server for them.
 */
import { isPlainObject, type JsonObject } from '../common/json.js'
import type { CohortDefinition } from './types.js'

type Node = { kind: 'leaf'; leaf: JsonObject } | { kind: 'group'; op: string; values: Node[] }

/** Python's `int(value)` on a JSON value; undefined where it would raise. */
function pyInt(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value)
  if (typeof value === 'boolean') return Number(value)
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) return Number(value)
  return undefined
}

function parse(value: unknown): Node {
  // An old-style list of properties is an AND group, as PostHog's Filter reads it.
  if (Array.isArray(value)) return { kind: 'group', op: 'AND', values: value.map(parse) }
  if (isPlainObject(value) && (value.type === 'AND' || value.type === 'OR') && Array.isArray(value.values)) {
    return { kind: 'group', op: value.type, values: value.values.map(parse) }
  }
  return { kind: 'leaf', leaf: isPlainObject(value) ? value : {} }
}

const leaves = (node: Node): JsonObject[] => (node.kind === 'leaf' ? [node.leaf] : node.values.flatMap(leaves))

/** A group's members when all are properties; null for a group mixing properties and groups (not a valid cohort). */
const leafMembers = (nodes: Node[]): JsonObject[] | null =>
  nodes.every((n) => n.kind === 'leaf') ? leaves({ kind: 'group', op: 'AND', values: nodes }) : null

/** PostHog's `clear_excess_levels`: a one-member group is its member, except directly under a wider group. */
function clearExcessLevels(node: Node, skip = false): Node {
  if (node.kind === 'leaf') return node
  if (node.values.length === 1) {
    return skip ? { ...node, values: [clearExcessLevels(node.values[0])] } : clearExcessLevels(node.values[0])
  }
  return { ...node, values: node.values.map((v) => clearExcessLevels(v, true)) }
}

const propertiesOf = (condition: unknown): unknown[] =>
  isPlainObject(condition) && Array.isArray(condition.properties) ? condition.properties : []

/** The cohorts a flag's conditions reach, nested ones included (`get_cohort_ids`); undefined where Python raises. */
function reachedCohorts(conditions: unknown[], cohorts: ReadonlyMap<number, CohortDefinition>): Set<number> | undefined {
  const reached = new Set<number>()
  const visit = (id: number): void => {
    const cohort = cohorts.get(id)
    if (!cohort || reached.has(id)) return
    reached.add(id)
    for (const leaf of leaves(parse(cohort.filters?.properties))) {
      const nested = leaf.type === 'cohort' ? pyInt(leaf.value) : undefined
      if (nested !== undefined) visit(nested)
    }
  }
  for (const condition of conditions) {
    for (const prop of propertiesOf(condition)) {
      if (!isPlainObject(prop) || prop.type !== 'cohort') continue
      const id = pyInt(prop.value)
      if (id === undefined) return undefined
      visit(id)
    }
  }
  return reached
}

/** The flag's conditions with its cohort inlined, or null when they are served unchanged. */
export function inlineSingleCohort(conditions: unknown, cohorts: ReadonlyMap<number, CohortDefinition>): JsonObject[] | null {
  if (!Array.isArray(conditions) || reachedCohorts(conditions, cohorts)?.size !== 1) return null
  const kept: JsonObject[] = []
  let cohort: CohortDefinition | undefined
  // As PostHog: the inlined conditions take the rollout of the flag's last condition, whichever it is.
  let rollout: unknown = null
  for (const condition of conditions) {
    if (!isPlainObject(condition)) return null
    if (condition.variant) return null
    const props = propertiesOf(condition)
    rollout = condition.rollout_percentage ?? null
    let hasCohort = false
    for (const prop of props) {
      if (!isPlainObject(prop) || prop.type !== 'cohort') continue
      hasCohort = true
      const id = pyInt(prop.value)
      if (!id) continue
      if (props.length > 1) return null
      cohort = cohorts.get(id)
      if (!cohort) return null
    }
    if (!hasCohort) kept.push(condition)
  }
  if (!cohort) return null
  const tree = parse(cohort.filters?.properties)
  const all = leaves(tree)
  if (all.length === 0 || all.some((leaf) => leaf.type !== 'person' || leaf.negation)) return null

  const condition = (properties: JsonObject[]): JsonObject => ({ properties, rollout_percentage: rollout as number | null })
  const target = clearExcessLevels(tree)
  if (target.kind === 'leaf') return [...kept, condition([target.leaf])]
  if (target.values[0].kind === 'leaf') {
    const props = leafMembers(target.values)
    if (!props) return null
    return target.op === 'AND' ? [...kept, condition(props)] : [...kept, ...props.map((p) => condition([p]))]
  }
  // Nested groups: only an OR of ANDs (or of one-member ORs) becomes conditions.
  if (target.op === 'AND') return null
  for (const group of target.values) {
    if (group.kind === 'leaf' || (group.op === 'OR' && group.values.length > 1)) return null
    const props = group.values.length > 0 ? leafMembers(group.values) : null
    if (!props) return null
    kept.push(condition(props))
  }
  return kept
}
