/**
 * Compiled flag sets per project, rebuilt only when the project's flags, cohorts or group types change.
 * The definitions come through `FlagSource` (management fulfils it; flags never import management), and
 * the group type mapping through `GroupTypeSource` (persons.db, written by the ingest consumer). New group
 * types are noticed within `GROUP_TYPES_TTL_MS`.
 */
import { compileFlags, type CompiledFlagSet } from './index.js'
import { scopedSets, type RequestScope } from './scope.js'
import type { CohortDefinition, FlagDefinition } from './types.js'

export interface FlagSource {
  /** `timezone`: the project's, in which date filters read dates without an offset and relative dates. */
  load(teamId: number): { flags: FlagDefinition[]; cohorts: CohortDefinition[]; timezone?: string }
  /** Changes whenever the project's flags, cohorts or timezone change. */
  revision(teamId: number): string
}

export interface GroupTypeSource {
  groupTypeMapping(teamId: number): Record<string, string>
}

export interface ProjectFlags {
  /** Every flag /flags evaluates, whatever its runtime. */
  set: CompiledFlagSet
  /**
   * The flags a request gets (`RequestScope`), as PostHog filters them before evaluating: the others are
   * neither evaluated nor answered, and `false` to the flags depending on them. `set` itself when the request
   * leaves nothing out.
   */
  setFor(scope: RequestScope): CompiledFlagSet
  /** Flags and cohorts revision plus the group type mapping it was compiled with. */
  revision: string
  definitions: FlagDefinition[]
  cohorts: CohortDefinition[]
  groupTypeMapping: Record<string, string>
  /** The mapping read the other way: group type name → index. */
  groupTypeIndexByName: ReadonlyMap<string, number>
  activeCount: number
  /**
   * Every active continuity flag of the project, whatever the request leaves out or how the flag buckets:
   * the keys PostHog writes a person's hash-key override rows for (`try_set_feature_flag_hash_key_overrides`).
   */
  continuityFlagKeys: readonly string[]
}

const GROUP_TYPES_TTL_MS = 1000

interface Entry extends ProjectFlags {
  /** The flags and cohorts revision alone: compared as it is, not as a prefix of `revision` made per request. */
  flagsRevision: string
  mappingCheckedAt: number
}

export class ProjectFlagCache {
  readonly #flags: FlagSource
  readonly #groupTypes: GroupTypeSource
  readonly #now: () => number
  readonly #entries = new Map<number, Entry>()

  constructor(flags: FlagSource, groupTypes: GroupTypeSource, now: () => number = Date.now) {
    this.#flags = flags
    this.#groupTypes = groupTypes
    this.#now = now
  }

  get(teamId: number): ProjectFlags {
    const now = this.#now()
    const flagsRevision = this.#flags.revision(teamId)
    const cached = this.#entries.get(teamId)
    if (cached && cached.flagsRevision === flagsRevision) {
      if (now - cached.mappingCheckedAt < GROUP_TYPES_TTL_MS) return cached
      const mapping = this.#groupTypes.groupTypeMapping(teamId)
      cached.mappingCheckedAt = now
      if (JSON.stringify(mapping) === JSON.stringify(cached.groupTypeMapping)) return cached
    }
    return this.#build(teamId, flagsRevision, now)
  }

  /** Compiles for a revision someone else already computed (the pool worker path); null if it moved on. */
  getAt(teamId: number, revision: string): ProjectFlags | null {
    const cached = this.#entries.get(teamId)
    if (cached?.revision === revision) return cached
    const fresh = this.#build(teamId, this.#flags.revision(teamId), this.#now())
    return fresh.revision === revision ? fresh : null
  }

  #build(teamId: number, flagsRevision: string, now: number): Entry {
    const { flags, cohorts, timezone } = this.#flags.load(teamId)
    const groupTypeMapping = this.#groupTypes.groupTypeMapping(teamId)
    // PostHog's flags cache leaves these out: their payloads are ciphertext only /remote_config decrypts.
    const evaluated = flags.filter((f) => !(f.is_remote_configuration === true && f.has_encrypted_payloads === true))
    const set = compileFlags(evaluated, { groupTypeMapping, cohorts, timezone })
    const entry: Entry = {
      set,
      setFor: scopedSets(set, evaluated),
      revision: `${flagsRevision}#${JSON.stringify(groupTypeMapping)}`,
      flagsRevision,
      definitions: flags,
      cohorts,
      groupTypeMapping,
      groupTypeIndexByName: new Map(Object.entries(groupTypeMapping).map(([index, name]) => [name, Number(index)])),
      activeCount: evaluated.filter((f) => f.active && !f.deleted).length,
      continuityFlagKeys: flags.filter((f) => f.active && !f.deleted && f.ensure_experience_continuity).map((f) => f.key),
      mappingCheckedAt: now,
    }
    this.#entries.set(teamId, entry)
    return entry
  }
}
