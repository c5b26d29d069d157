/**
 * Turns stored flag definitions into the form `evaluate.ts` runs: filters compiled (regexes included), group
 * type indexes resolved to names, variant bounds summed, dependencies planned. A definition PostHog could not
 * read becomes a flag that fails with `flag_data_parsing_error` on evaluation; it never breaks the set.
 */
import { CohortSet } from './cohorts.js'
import { isValidTimeZone } from './dates.js'
import { planDependencies, type DependencyPlan } from './deps.js'
import { compileFilter, FilterShapeError, parseI32, type CohortTest, type FlagTest, type PropertyTest } from './filters.js'
import { EVALUATION_ERRORS, type FlagEvaluationError } from './reasons.js'
import type { CompileOptions, FlagDefinition } from './types.js'

/** A property test with the group type name it reads, resolved once (null: person properties or unmapped). */
export interface ResolvedPropertyTest extends PropertyTest {
  groupName: string | null
  /**
   * Shared by every test of the set that reads the same value with the same operator and filter value:
   * tests are pure functions of (value, now), so a request computes each slot once (see `match.ts`).
   */
  slot: number
}

export interface CompiledCondition {
  index: number
  /** Group type index the condition aggregates by (per-condition value, else the flag's), null for persons. */
  aggregation: number | null
  groupName: string | null
  /** Property and flag-dependency tests in stored order; cohort tests run after them. */
  tests: readonly (ResolvedPropertyTest | FlagTest)[]
  cohorts: readonly CohortTest[]
  rollout: number
  /** `rollout / 100`, the bound a hash must not exceed. */
  threshold: number
  /** The condition's variant override, kept only when it names an existing variant. */
  variant: string | null
}

export interface CompiledFlag {
  position: number
  definition: FlagDefinition
  key: string
  /** `key + "."`, built once: the rollout hash input is this plus the identifier. */
  hashPrefix: string
  id: number
  version: number
  hasExperiment: boolean
  aggregation: number | null
  conditions: CompiledCondition[]
  /** Variants with their cumulative upper bounds, summed in order exactly as PostHog does. */
  variants: { key: string; upper: number }[]
  payloads: Record<string, unknown> | null
  enrollmentKey: string | null
  superCondition: { condition: CompiledCondition; keys: string[] } | null
  holdout: { percentage: number; variant: string } | null
  deviceBucketing: boolean
  /** `filters.early_exit`: a condition whose properties match but whose rollout leaves the user out ends the flag. */
  earlyExit: boolean
  error: FlagEvaluationError | null
  /** The answer follows from the person's properties and distinct id alone (`personAlone`). */
  personAlone: boolean
}

/** Source properties whose `$initial_` twin PostHog fills in when ingestion has not written it yet. */
const INITIAL_SOURCES = [
  '$app_build', '$app_name', '$app_namespace', '$app_version', '$browser', '$browser_version', '$device_type',
  '$current_url', '$pathname', '$os', '$os_version', '$referring_domain', '$referrer', '$screen_height',
  '$screen_width', '$viewport_height', '$viewport_width', '$raw_user_agent', 'utm_source', 'utm_medium',
  'utm_campaign', 'utm_content', 'utm_term', 'gclid', 'gad_source', 'gclsrc', 'dclid', 'gbraid', 'wbraid',
  'fbclid', 'msclkid', 'twclid', 'li_fat_id', 'mc_cid', 'igshid', 'ttclid', 'rdt_cid', 'epik', 'qclid', 'sccid',
  'irclid', '_kx',
]
export const INITIAL_PROPERTY = new Map(INITIAL_SOURCES.map((k) => [(k.startsWith('$') ? '$initial_' + k.slice(1) : '$initial_' + k), k]))

class DefinitionError extends Error {}

/** A flat (non-rope) copy of a string, so the per-request concatenation onto it stays shallow. */
function flat(s: string): string {
  return Object.keys({ [s]: 0 })[0]
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function optionalNumber(v: unknown, what: string): number | null {
  if (v === undefined || v === null) return null
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new DefinitionError(`${what} is not a number`)
  return v
}

function optionalInt(v: unknown, what: string): number | null {
  const n = optionalNumber(v, what)
  if (n !== null && !Number.isInteger(n)) throw new DefinitionError(`${what} is not an integer`)
  return n
}

interface Context {
  mapping: Record<string, string>
  tz: string
  /** Memo slots by test identity (where the value is read from, operator, filter value). */
  slots: Map<string, number>
  /** Slots whose result depends on more than the person's properties. */
  volatile: number[]
}

/** A test whose result follows from the person's properties alone: not a group's, and not read against `now`. */
const readsPersonOnly = (t: PropertyTest): boolean => t.scope === 'person' && !t.readsNow

function slotFor(ctx: Context, t: PropertyTest, groupName: string | null): number {
  const identity = JSON.stringify([t.scope, groupName, t.lookupKey]) + t.signature
  let slot = ctx.slots.get(identity)
  if (slot === undefined) {
    ctx.slots.set(identity, (slot = ctx.slots.size))
    if (!readsPersonOnly(t)) ctx.volatile.push(slot)
  }
  return slot
}

const NO_TESTS: readonly (ResolvedPropertyTest | FlagTest)[] = Object.freeze([])
const NO_COHORTS: readonly CohortTest[] = Object.freeze([])

function compileCondition(raw: unknown, index: number, flagAggregation: number | null, variantKeys: Set<string>, ctx: Context): CompiledCondition {
  if (!isObject(raw)) throw new DefinitionError('condition is not an object')
  const aggregation = 'aggregation_group_type_index' in raw ? optionalInt(raw.aggregation_group_type_index, 'aggregation_group_type_index') : flagAggregation
  const rollout = optionalNumber(raw.rollout_percentage, 'rollout_percentage') ?? 100
  if (raw.variant !== undefined && raw.variant !== null && typeof raw.variant !== 'string') throw new DefinitionError('variant is not a string')
  const props = raw.properties ?? []
  if (!Array.isArray(props)) throw new DefinitionError('properties is not a list')
  const tests: (ResolvedPropertyTest | FlagTest)[] = []
  const cohorts: CohortTest[] = []
  for (const p of props) {
    const f = compileFilter(p, ctx.tz)
    if (f.kind === 'cohort') cohorts.push(f)
    else if (f.kind === 'flag') tests.push(f)
    else {
      const gti = f.scope === 'group' ? (f.groupTypeIndex ?? aggregation) : null
      const groupName = gti === null ? null : (ctx.mapping[String(gti)] ?? null)
      tests.push({ ...f, groupName, slot: slotFor(ctx, f, groupName) })
    }
  }
  const variant = typeof raw.variant === 'string' && variantKeys.has(raw.variant) ? raw.variant : null
  return {
    index,
    aggregation,
    groupName: aggregation === null ? null : (ctx.mapping[String(aggregation)] ?? null),
    // conditions without filters share one empty list: a request reads every condition's lists, and one shared
    // array stays in cache where hundreds of separate empty ones would not
    tests: tests.length === 0 ? NO_TESTS : tests,
    cohorts: cohorts.length === 0 ? NO_COHORTS : cohorts,
    rollout,
    threshold: rollout / 100,
    variant,
  }
}

function compileVariants(raw: unknown): { key: string; upper: number }[] {
  if (raw === undefined || raw === null) return []
  if (!isObject(raw) || !Array.isArray(raw.variants)) throw new DefinitionError('multivariate has no variants list')
  let cumulative = 0
  return raw.variants.map((v: unknown) => {
    if (!isObject(v) || typeof v.key !== 'string' || typeof v.rollout_percentage !== 'number') throw new DefinitionError('malformed variant')
    cumulative += v.rollout_percentage / 100
    return { key: v.key, upper: cumulative }
  })
}

/**
 * PostHog's current service reads `filters.holdout` alone: `holdout_groups`, which flags written before that
 * model carry (and experiments still write as null), applies no holdout.
 */
function compileHoldout(filters: Record<string, unknown>): CompiledFlag['holdout'] {
  const h = filters.holdout
  if (h === undefined || h === null) return null
  if (!isObject(h) || optionalInt(h.id, 'holdout id') === null) throw new DefinitionError('malformed holdout')
  const pct = optionalNumber(h.exclusion_percentage, 'exclusion_percentage')
  if (pct === null) throw new DefinitionError('holdout without exclusion_percentage')
  return { percentage: Math.min(100, Math.max(0, pct)), variant: `holdout-${h.id}` }
}

function compileFlag(def: FlagDefinition, position: number, ctx: Context): CompiledFlag {
  const flag: CompiledFlag = {
    position,
    definition: def,
    key: def.key,
    hashPrefix: flat(def.key + '.'),
    id: def.id,
    version: def.version ?? 0,
    hasExperiment: def.has_experiment === true,
    aggregation: null,
    conditions: [],
    variants: [],
    payloads: null,
    enrollmentKey: null,
    superCondition: null,
    holdout: null,
    deviceBucketing: def.bucketing_identifier === 'device_id',
    earlyExit: isObject(def.filters) && def.filters.early_exit === true,
    error: null,
    personAlone: false,
  }
  try {
    const filters = isObject(def.filters) ? def.filters : {}
    if (!isConfigFormatOne(filters)) throw new DefinitionError('unsupported feature flag configuration format')
    flag.aggregation = optionalInt(filters.aggregation_group_type_index, 'aggregation_group_type_index')
    flag.variants = compileVariants(filters.multivariate)
    const variantKeys = new Set(flag.variants.map((v) => v.key))
    const groups = filters.groups ?? []
    if (!Array.isArray(groups)) throw new DefinitionError('groups is not a list')
    flag.conditions = groups.map((g, i) => compileCondition(g, i, flag.aggregation, variantKeys, ctx))
    flag.payloads = isObject(filters.payloads) ? filters.payloads : null
    if (filters.feature_enrollment === true) flag.enrollmentKey = `$feature_enrollment/${def.key}`
    else if (Array.isArray(filters.super_groups) && isObject(filters.super_groups[0])) {
      const sg = filters.super_groups[0]
      if (Array.isArray(sg.properties) && sg.properties.length > 0) {
        // enrollment is a person concept: the super condition always hashes and reads the person
        const condition = compileCondition({ ...sg, aggregation_group_type_index: null }, 0, null, variantKeys, ctx)
        flag.superCondition = { condition, keys: sg.properties.map((p) => (isObject(p) && typeof p.key === 'string' ? p.key : '')) }
      }
    }
    flag.holdout = compileHoldout(filters)
    flag.personAlone = personAlone(flag)
  } catch (e) {
    if (!(e instanceof DefinitionError) && !(e instanceof FilterShapeError)) throw e
    flag.error = EVALUATION_ERRORS.flagData(e.message)
  }
  return flag
}

/**
 * PostHog's config format 1: `filters.version` absent or a number equal to 1 (a boolean never is). Format 2
 * (rules, typed values) and anything else fail to evaluate, as PostHog's flag service fails them when it
 * cannot read them; skylark refuses to store them (reserved_config_version), but rows written another way
 * (a restored backup, SQL) may hold them.
 */
export function isConfigFormatOne(filters: unknown): boolean {
  return !isObject(filters) || !Object.hasOwn(filters, 'version') || filters.version === 1
}

/**
 * Whether the answer is a function of the person's properties and distinct id (the set being fixed): only
 * person-property tests that do not read `now`, and rollouts and variants hashed by the distinct id. Not:
 * groups, cohorts (static membership is loaded beside the properties), other flags, holdouts, enrollment,
 * device bucketing, experience continuity (the request's anonymous id and stored overrides pick the hash).
 */
function personAlone(f: CompiledFlag): boolean {
  if (f.aggregation !== null || f.holdout !== null || f.enrollmentKey !== null || f.superCondition !== null) return false
  if (f.deviceBucketing || f.definition.ensure_experience_continuity) return false
  return f.conditions.every(
    (c) => c.aggregation === null && c.cohorts.length === 0 && c.tests.every((t) => t.kind === 'property' && readsPersonOnly(t)),
  )
}

/** Flag ids a definition depends on, read the way Django does (release conditions only). */
function dependencyIds(def: FlagDefinition): number[] {
  if (!def.active || def.deleted) return []
  const groups = isObject(def.filters) && Array.isArray(def.filters.groups) ? def.filters.groups : []
  const ids: number[] = []
  for (const g of groups) {
    if (!isObject(g) || !Array.isArray(g.properties)) continue
    for (const p of g.properties) if (isObject(p) && p.type === 'flag' && typeof p.key === 'string' && parseI32(p.key) !== null) ids.push(parseI32(p.key)!)
  }
  return ids
}

export interface CompiledSetData {
  flags: CompiledFlag[]
  cohorts: CohortSet
  mapping: Record<string, string>
  plan: DependencyPlan
  /** Definition position → position in `plan` (deleted flags are not planned). */
  planIndex: Map<number, number>
  planFlags: number[]
  positionById: Map<number, number>
  timezone: string
  warnings: { key: string; message: string }[]
  /** `$initial_*` keys some non-deleted flag or cohort reads, to be filled from their source properties. */
  initialKeys: string[]
  /** Flag values before a request: false for inactive flags, so `flag_evaluates_to: false` can match them. */
  initialValues: (boolean | undefined)[]
  /** `plan.order` resolved to the flags and whether each is active, so the request loop reads no definition. */
  ordered: { pi: number; flag: CompiledFlag; active: boolean }[]
  /** `ordered` without the `personAlone` flags: what a returning person's request evaluates again (evaluate.ts). */
  rerun: { pi: number; flag: CompiledFlag; active: boolean }[]
  /** Definition positions the request leaves out (`excludeFlags`); empty for a compiled set. */
  excluded: ReadonlySet<number>
  /** Some flag that is not left out is in a dependency cycle: the response reports errors. */
  cycleError: boolean
  /** Distinct property tests (`ResolvedPropertyTest.slot` ranges below this). */
  testSlots: number
  /** The slots of group-property and date tests: the request's groups and `now` decide them, not the person alone. */
  volatileSlots: number[]
}

/** What a group of flags reads: person keys, group type indexes, cohorts (transitively). */
export interface Usage {
  personKeys: Set<string>
  groupIndexes: Set<number>
  cohortIds: Set<number>
}

export function collectUsage(flags: readonly CompiledFlag[], cohorts: CohortSet): Usage {
  const usage: Usage = { personKeys: new Set(), groupIndexes: new Set(), cohortIds: new Set() }
  for (const f of flags) {
    if (f.aggregation !== null) usage.groupIndexes.add(f.aggregation)
    if (f.enrollmentKey !== null) usage.personKeys.add(f.enrollmentKey)
    const conditions = f.superCondition === null ? f.conditions : [...f.conditions, f.superCondition.condition]
    for (const k of f.superCondition?.keys ?? []) usage.personKeys.add(k)
    for (const c of conditions) {
      if (c.aggregation !== null) usage.groupIndexes.add(c.aggregation)
      for (const t of c.tests) {
        if (t.kind !== 'property') continue
        if (t.scope === 'person') usage.personKeys.add(t.lookupKey)
        else if ((t.groupTypeIndex ?? c.aggregation) !== null) usage.groupIndexes.add((t.groupTypeIndex ?? c.aggregation)!)
      }
      for (const t of c.cohorts) {
        if (t.cohortId === null) continue
        for (const id of cohorts.reachable(t.cohortId)) usage.cohortIds.add(id)
        for (const k of cohorts.propertyKeys(t.cohortId)) usage.personKeys.add(k)
      }
    }
  }
  return usage
}

export function compileSetData(definitions: readonly FlagDefinition[], options: CompileOptions): CompiledSetData {
  const warnings: { key: string; message: string }[] = []
  let tz = options.timezone ?? 'UTC'
  if (tz !== 'UTC' && !isValidTimeZone(tz)) {
    warnings.push({ key: '', message: `unknown time zone ${tz}; using UTC` })
    tz = 'UTC'
  }
  const ctx: Context = { mapping: options.groupTypeMapping, tz, slots: new Map(), volatile: [] }
  const flags = definitions.map((d, i) => compileFlag(d, i, ctx))
  for (const f of flags) if (f.error !== null && !f.definition.deleted) warnings.push({ key: f.key, message: f.error.description })
  const planFlags = flags.filter((f) => !f.definition.deleted).map((f) => f.position)
  const plan = planDependencies(planFlags.map((p) => ({ id: flags[p].id, active: flags[p].definition.active, deps: dependencyIds(flags[p].definition) })))
  const positionById = new Map<number, number>()
  for (const p of planFlags) positionById.set(flags[p].id, p)
  // a later row with the same id replaces an earlier one, as in PostHog's id-keyed maps
  const isCurrentRow = (f: CompiledFlag): boolean => positionById.get(f.id) === f.position
  for (const f of flags) {
    const conditions = f.superCondition === null ? f.conditions : [...f.conditions, f.superCondition.condition]
    for (const c of conditions) for (const t of c.tests) if (t.kind === 'flag' && t.flagId !== null) t.position = positionById.get(t.flagId) ?? -1
  }
  const cohorts = new CohortSet(options.cohorts, tz)
  const usage = collectUsage(planFlags.map((p) => flags[p]), cohorts)
  const ordered = plan.order.map((pi) => ({ pi, flag: flags[planFlags[pi]], active: flags[planFlags[pi]].definition.active }))
  return {
    flags,
    cohorts,
    mapping: options.groupTypeMapping,
    plan,
    planIndex: new Map(planFlags.map((p, i) => [p, i])),
    planFlags,
    positionById,
    timezone: tz,
    warnings,
    initialKeys: [...usage.personKeys].filter((k) => INITIAL_PROPERTY.has(k)),
    initialValues: flags.map((f) => (isCurrentRow(f) && !f.definition.active ? false : undefined)),
    excluded: new Set(),
    cycleError: plan.cyclic.size > 0,
    testSlots: ctx.slots.size,
    volatileSlots: ctx.volatile,
    ordered,
    rerun: ordered.filter((o) => !o.flag.personAlone),
  }
}

/**
 * `data` with the flags at the `excluded` positions left out of a request, as PostHog's flag service leaves out
 * the flags of another runtime, non-survey flags or flags of other evaluation tags: never evaluated nor
 * answered, yet still in the dependency plan, and `false` to the flags that depend on them (PostHog seeds
 * their value so), so a `flag_evaluates_to: false` condition on one matches. The compiled flags are shared.
 */
export function excludeFlags(data: CompiledSetData, excluded: ReadonlySet<number>): CompiledSetData {
  const kept = (o: { flag: CompiledFlag }): boolean => !excluded.has(o.flag.position)
  return {
    ...data,
    excluded,
    initialValues: data.initialValues.map((v, p) => (excluded.has(p) ? false : v)),
    ordered: data.ordered.filter(kept),
    rerun: data.rerun.filter(kept),
    cycleError: [...data.plan.cyclic].some((pi) => !excluded.has(data.planFlags[pi])),
  }
}
