/**
 * The /decide use-case: gather what the project's flags need for this request (request overrides, GeoIP
 * filling gaps, stored person and group properties, static cohort membership, experience-continuity hash
 * keys), then evaluate — inline for small flag sets, in the worker pool for large ones (the hop costs
 * ≈66 µs here; below FLAGS_INLINE_MAX flags evaluating in place is cheaper). A failure while loading
 * stored data marks the response `errorsWhileComputingFlags` instead of failing the request, as PostHog does.
 */
import type { GeoIp } from '../geoip/index.js'
import { copyObject, mergeObjects, type JsonObject } from '../common/json.js'
import type { CompiledFlagSet } from './flag-set.js'
import type { ProjectFlagCache, ProjectFlags } from './project-cache.js'
import type { DecideRequest } from './request.js'
import { EVERY_FLAG, type RequestScope } from './scope.js'
import type { EvaluationInput, EvaluationList, EvaluationResponse, PersonState } from './types.js'

/** The persons.db reads evaluation needs (PersonReader fulfils it). */
export interface PersonLookup {
  personFor(teamId: number, distinctId: string): { id: number; properties: JsonObject } | null
  groupProperties(teamId: number, groupTypeIndex: number, groupKey: string): JsonObject | null
  staticCohortIdsFor(personId: number): number[]
  hashKeyOverrides(teamId: number, personIds: readonly number[]): Record<string, string>
}

export interface HashKeyWriter {
  writeHashKeyOverrides(teamId: number, personIds: readonly number[], flagKeys: readonly string[], hashKey: string): number
}

/** Evaluates in a pool worker that compiles the same revision from its own connections. */
export type OffloadEvaluation = (teamId: number, revision: string, scope: RequestScope, input: EvaluationInput) => Promise<EvaluationResponse>

export interface FlagEvaluatorOptions {
  cache: ProjectFlagCache
  persons: PersonLookup
  hashKeys: HashKeyWriter | null
  geoip: GeoIp | null
  now: () => number
  offload: OffloadEvaluation | null
  inlineMax: number
}

export interface PreparedEvaluation {
  project: ProjectFlags
  /** The project's flags the request gets (its scope). */
  set: CompiledFlagSet
  input: EvaluationInput
  /** Loading stored data failed somewhere: answer with what could be computed, flagged. */
  loadFailed: boolean
}

/**
 * The stored properties merged with overrides made only of the GeoIP result and the distinct id, by the
 * stored object (PersonReader hands out one per person until it changes). A person's repeated /decide
 * calls from one address reuse it instead of copying twenty-odd properties each time; evaluation never
 * writes to it (`withInitialProperties` copies first). Beside it, the holder in which the flag engine keeps
 * its work for the next request (a plain object: a WeakMap keyed by `merged` cost ≈3 µs per first-seen person).
 */
interface Merged {
  geo: JsonObject | null
  distinctId: string
  merged: JsonObject
  /** The flag engine's holder for work on `merged` (EvaluationInput.personState). */
  state: PersonState
}
const MERGED = new WeakMap<JsonObject, Merged>()

function mergedOnce(stored: JsonObject, overrides: JsonObject, geo: JsonObject | null, distinctId: string): Merged {
  const last = MERGED.get(stored)
  if (last !== undefined && last.geo === geo && last.distinctId === distinctId) return last
  const entry = { geo, distinctId, merged: mergeObjects(stored, overrides), state: {} }
  MERGED.set(stored, entry)
  return entry
}

function isEmpty(o: JsonObject): boolean {
  for (const _ in o) return false
  return true
}

export class FlagEvaluator {
  readonly #o: FlagEvaluatorOptions

  constructor(options: FlagEvaluatorOptions) {
    this.#o = options
  }

  get cache(): ProjectFlagCache {
    return this.#o.cache
  }

  /**
   * The flags' answer: at once when evaluated inline, a promise when the set is large enough for the pool
   * (a promise on the inline path cost /decide two promise jobs a request for nothing).
   */
  evaluate(
    teamId: number,
    request: DecideRequest,
    distinctId: string,
    ip: string | null,
    scope: RequestScope = EVERY_FLAG,
  ): EvaluationList | Promise<EvaluationList> {
    const prepared = this.prepare(teamId, request, distinctId, ip, scope)
    const { project, set, input, loadFailed } = prepared
    if (project.activeCount === 0) return { results: [], errorsWhileComputingFlags: loadFailed }
    if (this.#o.offload && project.activeCount > this.#o.inlineMax) {
      // the worker gets a copy of the properties: nothing to keep beside it
      return this.#o.offload(teamId, project.revision, scope, { ...input, personState: undefined }).then((offloaded) => ({
        results: Object.values(offloaded.flags),
        errorsWhileComputingFlags: offloaded.errorsWhileComputingFlags || loadFailed,
      }))
    }
    const result = set.evaluateList(input)
    if (loadFailed) result.errorsWhileComputingFlags = true
    result.personState = input.personState
    return result
  }

  /** Everything but the evaluation itself: also used by evaluation_reasons and blast radius. */
  prepare(teamId: number, request: DecideRequest, distinctId: string, ip: string | null, scope: RequestScope = EVERY_FLAG): PreparedEvaluation {
    const project = this.#o.cache.get(teamId)
    const set = project.setFor(scope)
    let loadFailed = false
    // Not a spread: keys added to a spread copy cost ≈1 µs each (see copyObject), ≈8 µs for a GeoIP result.
    const overrides: JsonObject = copyObject(request.personProperties)
    const geo = !request.geoipDisable && ip && this.#o.geoip ? this.#o.geoip.lookup(ip) : null
    // The client's values win; GeoIP only fills keys it left out or sent as null (PostHog's current rule).
    if (geo) for (const [key, value] of Object.entries(geo)) if (overrides[key] === undefined || overrides[key] === null) overrides[key] = value
    if (overrides.distinct_id === undefined) overrides.distinct_id = distinctId

    let personProperties = overrides
    let personState: PersonState | undefined
    let person: { id: number; properties: JsonObject } | null = null
    let staticCohortIds: ReadonlySet<number> | undefined
    const needsStored = project.activeCount > 0 && set.needsStoredProperties(overrides, request.flagKeys)
    const needsOverrides = project.activeCount > 0 && set.needsHashKeyOverrides(request.flagKeys)
    if (needsStored || needsOverrides) {
      try {
        person = this.#o.persons.personFor(teamId, distinctId)
        if (needsStored && person) {
          if (isEmpty(request.personProperties)) {
            const reused = mergedOnce(person.properties, overrides, geo, distinctId)
            personProperties = reused.merged
            personState = reused.state
          } else personProperties = mergeObjects(person.properties, overrides)
          if (set.staticCohortIds.size > 0) staticCohortIds = new Set(this.#o.persons.staticCohortIdsFor(person.id))
        }
      } catch {
        loadFailed = true
      }
    }

    const groupProperties: Record<string, JsonObject> = {}
    for (const [type, key] of Object.entries(request.groups)) {
      let stored: JsonObject | null = null
      const index = project.groupTypeIndexByName.get(type)
      if (set.usesGroups && index !== undefined) {
        try {
          stored = this.#o.persons.groupProperties(teamId, index, key)
        } catch {
          loadFailed = true
        }
      }
      const merged = mergeObjects(stored ?? {}, request.groupProperties[type] ?? {})
      merged.$group_key = key
      groupProperties[type] = merged
    }

    let hashKeyOverrides: Record<string, string> | undefined
    if (needsOverrides) {
      try {
        hashKeyOverrides = this.#continuity(teamId, person, request.anonDistinctId, project.continuityFlagKeys)
      } catch {
        loadFailed = true
      }
    }

    const input: EvaluationInput = {
      distinctId,
      personProperties,
      personState,
      groups: request.groups,
      groupProperties,
      hashKeyOverrides,
      anonDistinctId: request.anonDistinctId ?? undefined,
      staticCohortIds,
      deviceId: request.deviceId,
      now: this.#o.now(),
      flagKeys: request.flagKeys,
    }
    return { project, set, input, loadFailed }
  }

  /**
   * Experience continuity (posthog-semantics §1.9): with `$anon_distinct_id`, the persons of both ids get
   * an override row per active continuity flag of the project, not only those the request evaluates, as
   * PostHog writes them ("first override wins") and the overrides are read back, the
   * first id's winning. Without it the stored overrides of the person are read (the current Rust service
   * does this too, so a user keeps the bucket on later calls that no longer carry the anonymous id).
   */
  #continuity(
    teamId: number,
    person: { id: number } | null,
    anonDistinctId: string | null,
    flagKeys: readonly string[],
  ): Record<string, string> {
    const anon = anonDistinctId === null ? null : this.#o.persons.personFor(teamId, anonDistinctId)
    const personIds = [person?.id, anon?.id].filter((id): id is number => id !== undefined)
    if (personIds.length === 0) return {}
    if (anonDistinctId !== null) this.#o.hashKeys?.writeHashKeyOverrides(teamId, personIds, flagKeys, anonDistinctId)
    return this.#o.persons.hashKeyOverrides(teamId, personIds)
  }
}
