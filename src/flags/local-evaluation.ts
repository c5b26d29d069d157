/**
 * The definitions server SDKs poll for local evaluation (`local_evaluation`, `/flags/definitions`), as
 * PostHog builds them: every live flag of config format 1 but remote-config ones with encrypted payloads, which only
 * `remote_config` decrypts (inactive flags included, so SDKs answer false for them; plain remote-config
 * flags included, so `getFeatureFlagPayload` answers locally), the project's group type mapping, and with
 * cohorts the dynamic cohorts the flags use; without them a flag's one cohort is inlined (cohort-inline.ts).
 * Flag-dependency filters name flags by id in storage; SDKs look flags up by key, so the key is rewritten
 * and `dependency_chain` lists what to evaluate first (topologically, ending with the dependency itself;
 * empty when the chain is broken by a cycle or a missing flag).
 */
import { isPlainObject, type JsonObject } from '../common/json.js'
import { inlineSingleCohort } from './cohort-inline.js'
import { isConfigFormatOne } from './compile.js'
import type { CohortDefinition, FlagDefinition } from './types.js'

export interface LocalEvaluationFlag extends FlagDefinition {
  team_id: number
  name: string
  evaluation_runtime?: string
  is_remote_configuration?: boolean
  has_encrypted_payloads?: boolean
}

export interface LocalEvaluationBody {
  flags: JsonObject[]
  group_type_mapping: Record<string, string>
  cohorts: Record<string, unknown>
}

function flagRefs(filters: unknown): string[] {
  const refs: string[] = []
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit)
    else if (isPlainObject(value)) {
      if (value.type === 'flag' && (typeof value.key === 'string' || typeof value.key === 'number')) refs.push(String(value.key))
      else Object.values(value).forEach(visit)
    }
  }
  visit(filters)
  return refs
}

function cohortRefs(value: unknown, out: Set<number>): void {
  if (Array.isArray(value)) value.forEach((v) => cohortRefs(v, out))
  else if (isPlainObject(value)) {
    if (value.type === 'cohort' && value.value !== undefined && /^\d+$/.test(String(value.value))) out.add(Number(value.value))
    else Object.values(value).forEach((v) => cohortRefs(v, out))
  }
}

export function localEvaluationBody(
  definitions: readonly LocalEvaluationFlag[],
  cohorts: readonly CohortDefinition[],
  groupTypeMapping: Record<string, string>,
  sendCohorts: boolean,
): LocalEvaluationBody {
  // PostHog leaves flags of another config format out: SDKs read format 1 only, and their dependents' chains break.
  const live = definitions.filter((f) => !f.deleted && isConfigFormatOne(f.filters))
  const byId = new Map(live.map((f) => [String(f.id), f]))
  const byKey = new Map(live.map((f) => [f.key, f]))
  const resolve = (ref: string) => byId.get(ref) ?? byKey.get(ref)

  // Topological chain per flag key: its dependencies first, itself last; null when the chain is broken.
  const chains = new Map<string, string[] | null>()
  const chainOf = (flag: LocalEvaluationFlag, visiting: Set<string>): string[] | null => {
    if (chains.has(flag.key)) return chains.get(flag.key)!
    if (visiting.has(flag.key)) return null
    visiting.add(flag.key)
    const order: string[] = []
    let broken = false
    for (const ref of flagRefs(flag.filters)) {
      const dep = resolve(ref)
      const sub = dep ? chainOf(dep, visiting) : null
      if (!sub) broken = true
      else for (const key of sub) if (!order.includes(key)) order.push(key)
    }
    visiting.delete(flag.key)
    const chain = broken ? null : [...order, flag.key]
    chains.set(flag.key, chain)
    return chain
  }

  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite)
    if (!isPlainObject(value)) return value
    if (value.type === 'flag' && value.key !== undefined) {
      const dep = resolve(String(value.key))
      const chain = dep ? chainOf(dep, new Set()) : null
      return { ...value, key: dep ? dep.key : value.key, dependency_chain: chain ?? [] }
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)]))
  }

  const liveCohorts = new Map(cohorts.filter((c) => !c.deleted).map((c) => [c.id, c]))
  const filtersOf = (f: LocalEvaluationFlag): JsonObject => {
    const inlined = sendCohorts ? null : inlineSingleCohort(f.filters.groups, liveCohorts)
    return rewrite(inlined ? { ...f.filters, groups: inlined } : f.filters) as JsonObject
  }
  const served = live.filter((f) => !(f.is_remote_configuration && f.has_encrypted_payloads))
  const flags = served.map((f) => ({
    id: f.id,
    team_id: f.team_id,
    name: f.name,
    key: f.key,
    filters: filtersOf(f),
    deleted: false,
    active: f.active,
    ensure_experience_continuity: f.ensure_experience_continuity,
    has_encrypted_payloads: f.has_encrypted_payloads ?? false,
    has_experiment: f.has_experiment ?? false,
    version: f.version ?? 1,
    evaluation_runtime: f.evaluation_runtime ?? 'all',
    // PostHog renamed the field evaluation_contexts (posthog-node reads it first); older SDKs read evaluation_tags
    evaluation_tags: f.evaluation_tags ?? [],
    evaluation_contexts: f.evaluation_tags ?? [],
    bucketing_identifier: f.bucketing_identifier ?? null,
  }))

  const cohortMap: Record<string, unknown> = {}
  if (sendCohorts) {
    const wanted = new Set<number>()
    for (const f of served) cohortRefs(f.filters, wanted)
    for (const id of wanted) {
      // Cohorts referencing cohorts: send the whole closure, SDKs resolve nested references themselves.
      const cohort = liveCohorts.get(id)
      if (!cohort || cohort.is_static) continue
      cohortMap[String(id)] = cohort.filters?.properties ?? { type: 'AND', values: [] }
      cohortRefs(cohort.filters, wanted)
    }
  }
  return { flags, group_type_mapping: groupTypeMapping, cohorts: cohortMap }
}
