/**
 * The persons stage of ingestion: applies each event's person and group effects to persons.db, in order,
 * and says which person id, `$group_N` values and properties the stored event gets. PostHog's rules
 * (docs/architecture.md "Persons and groups"; plugin-server person-event-processor.ts and friends):
 *
 * - `$process_person_profile: false` → personless: no person write; the event keeps an existing person's
 *   uuid, else the uuid derived from its distinct id; `$set`/`$set_once`/`$unset` and groups are removed.
 * - `$identify` (`$anon_distinct_id`), `$create_alias` and `$merge_dangerously` (`alias`) merge two ids.
 * - Any other event creates its person on first sight and applies `$set_once`, `$set`, `$unset`.
 * - `$groups` fills `$group_0..4`; `$groupidentify` creates or updates the group row.
 * - The groups API's own events (`internal`, personless) write their group: `$groupidentify` sets,
 *   `$delete_group_property` unsets.
 *
 * The event's stored form and whether it gets person processing come from normalise.ts. The caller owns the
 * transaction; a batch runs in one savepoint, redone with a savepoint per event when one breaks on bad
 * content, so that event is rolled back alone and reported as an ingestion warning, while database errors
 * propagate.
 */
import Database from 'better-sqlite3'
import { iso, type Clock } from '../common/clock.js'
import { copyObject, isPlainObject, mergeObjects, type JsonObject } from '../common/json.js'
import type { GeoIp, GeoProperties } from '../geoip/index.js'
import type { Db } from '../storage/index.js'
import { GROUP_COLUMN_KEYS, groupColumns, noGroups, type GroupColumns } from './group-columns.js'
import { GroupStore, MAX_GROUP_TYPES_PER_TEAM } from './groups.js'
import { eventDetails, normaliseEvent, writableProperties, type Normalised } from './normalise.js'
import {
  NO_SETS,
  applyPropertyUpdates,
  computePropertyUpdates,
  initialPersonProperties,
  isDistinctIdUnmergeable,
  isIgnorableUpdate,
  type EventSets,
} from './properties.js'
import { distinctIdsToSplit } from './split.js'
import { PersonStore, personUuidFor, type Person } from './store.js'
import { WarningWriter } from './warnings.js'
import type { CapturedEvent } from '../schemas/captured-event.js'

export type { CapturedEvent } from '../schemas/captured-event.js'

export type { GroupColumns } from './group-columns.js'

/** PostHog's version step for a split-off person: above a deletion's + 100 (SPLIT_VERSION_OFFSET in personhog). */
const SPLIT_VERSION_OFFSET = 101

export interface PersonOutcome {
  /**
   * Person uuid for the stored event; for a personless event whose distinct id has no person, the
   * deterministic uuidv5("${team_id}:${distinct_id}") PostHog uses.
   */
  personId: string
  /** `$group_0`..`$group_4` of the stored event; '' = none. */
  groups: GroupColumns
  /** The stored event's properties but for `sets` and `geo`, which storedPropertiesJson adds to their text. */
  properties: Record<string, unknown>
  /**
   * The stored event's `$set`/`$set_once` (EventSets). NO_SETS: none, for an event that changes no person,
   * or one whose processing failed (which keeps what it sent among its properties).
   */
  sets: EventSets
  /** The GeoIP result whose keys the stored event gets; null = none. */
  geo: GeoProperties | null
  /**
   * JSON.stringify(properties) as UTF-8 when the spool frame had it and processing changed none of them
   * (storedProperties copies it instead of serialising them); null = serialise them.
   */
  propertiesText: Uint8Array | null
  /**
   * Set when PostHog drops the event instead of storing it (an `$identify`, `$create_alias`,
   * `$merge_dangerously` or `$groupidentify` sent with `$process_person_profile: false`): the reason.
   */
  dropReason?: string
}

export interface PersonsStageOptions {
  geoip: GeoIp | null
  clock: Clock
  /** Distinct ids whose person stays in memory (default 20,000). */
  cacheSize?: number
}

/** What one event's person processing needs to know. */
interface EventContext {
  readonly event: CapturedEvent
  readonly properties: JsonObject
  readonly sets: EventSets
  /** Set by a merge attempt between two legal, different ids: the person becomes identified. */
  updateIsIdentified: boolean
}

/** What the stored event gets from its person processing. */
function outcome(personId: string, groups: GroupColumns, n: Normalised): PersonOutcome {
  return { personId, groups, properties: n.properties, sets: n.sets, geo: n.geo, propertiesText: n.propertiesText }
}

export class PersonsStage {
  private readonly persons: PersonStore
  private readonly groups: GroupStore
  private readonly warnings: WarningWriter
  private readonly geoip: GeoIp | null
  private readonly clock: Clock
  private readonly inSavepoint: (event: CapturedEvent, propertiesText: Uint8Array | null) => PersonOutcome
  private readonly inBatchSavepoint: (events: readonly CapturedEvent[], propertiesTexts: ReadonlyArray<Uint8Array | null> | undefined) => PersonOutcome[]

  constructor(db: Db, options: PersonsStageOptions) {
    this.geoip = options.geoip
    this.clock = options.clock
    this.persons = new PersonStore(db, options.cacheSize ?? 20_000)
    this.groups = new GroupStore(db)
    this.warnings = new WarningWriter(db, options.clock)
    // Inside the caller's transaction better-sqlite3 turns this into SAVEPOINT … RELEASE.
    this.inSavepoint = db.transaction((event: CapturedEvent, propertiesText: Uint8Array | null) => this.processOne(event, propertiesText))
    this.inBatchSavepoint = db.transaction((events: readonly CapturedEvent[], propertiesTexts: ReadonlyArray<Uint8Array | null> | undefined) => {
      const outcomes = new Array<PersonOutcome>(events.length)
      for (let i = 0; i < events.length; i++) outcomes[i] = this.processOne(events[i], propertiesTexts?.[i] ?? null)
      return outcomes
    })
  }

  /**
   * Applies the events' person and group effects in order, inside a transaction the caller opened; returns
   * one outcome per event (same order). Bad event content never throws: it becomes an ingestion warning.
   * `propertiesTexts[i]`, when given, is JSON.stringify of `events[i]`'s properties but `$set`/`$set_once`.
   *
   * A savepoint per event costs two statements per event, and bad content is rare: the batch runs in one
   * savepoint, and only when an event fails on its content is it rolled back and redone with one
   * savepoint per event, which gives the same outcome as if every event had had its own.
   */
  process(events: readonly CapturedEvent[], propertiesTexts?: ReadonlyArray<Uint8Array | null>): PersonOutcome[] {
    try {
      return this.inBatchSavepoint(events, propertiesTexts)
    } catch (error) {
      if (error instanceof Database.SqliteError) throw error
      this.resetCache()
    }
    const outcomes = new Array<PersonOutcome>(events.length)
    for (let i = 0; i < events.length; i++) outcomes[i] = this.processSafely(events[i], propertiesTexts?.[i] ?? null)
    return outcomes
  }

  /** Re-derives the outcome of an event that was already processed, changing nothing in persons.db. */
  enrich(event: CapturedEvent): PersonOutcome {
    const n = normaliseEvent(event, null, this.geoip)
    const personless = this.personlessOutcome(event, n)
    if (personless) return personless
    this.addGroupColumns(event, n, false)
    const person = this.persons.fetch(event.team_id, event.distinct_id)
    return outcome(person?.uuid ?? personUuidFor(event.team_id, event.distinct_id), groupColumns(n.properties), n)
  }

  /** Deletes persons inside the caller's transaction (PersonStore.deletePersons); returns their distinct ids. */
  deletePersons(teamId: number, uuids: readonly string[], distinctIds: readonly string[]): string[] {
    return this.persons.deletePersons(teamId, uuids, distinctIds)
  }

  /**
   * Splits a person inside the caller's transaction (PostHog's split_person): the distinct ids
   * `distinctIdsToSplit` chooses move onto new persons of their own (version: the person's + 101, as PostHog's);
   * the person keeps its properties, cohorts and overrides. Returns the new persons' uuids by distinct id.
   */
  splitPerson(teamId: number, uuid: string, main: string | null, only: readonly string[] | null): Array<{ distinctId: string; uuid: string }> {
    const person = this.persons.byUuid(teamId, uuid)
    if (person === null) return []
    const createdAt = iso(this.clock.now())
    return distinctIdsToSplit(this.persons.distinctIdsOf(person.id), main, only).map((distinctId) => ({
      distinctId,
      uuid: this.persons.splitOff(teamId, distinctId, person.version + SPLIT_VERSION_OFFSET, createdAt).uuid,
    }))
  }

  /** Drops in-memory caches (after the caller's transaction rolled back). */
  resetCache(): void {
    this.persons.resetCache()
    this.groups.resetCache()
    this.warnings.resetCache()
  }

  private processSafely(event: CapturedEvent, propertiesText: Uint8Array | null): PersonOutcome {
    try {
      return this.inSavepoint(event, propertiesText)
    } catch (error) {
      if (error instanceof Database.SqliteError) throw error
      // The savepoint was rolled back; cached persons may hold its changes.
      this.resetCache()
      this.warnings.write(event.team_id, 'person_processing_failed', {
        ...eventDetails(event),
        error: error instanceof Error ? error.message : String(error),
      })
      return {
        personId: personUuidFor(event.team_id, event.distinct_id),
        groups: noGroups(),
        properties: isPlainObject(event.properties) ? copyObject(event.properties) : {},
        sets: NO_SETS,
        geo: null,
        propertiesText: null,
      }
    }
  }

  private processOne(event: CapturedEvent, propertiesText: Uint8Array | null): PersonOutcome {
    const n = normaliseEvent(event, propertiesText, this.geoip)
    for (const w of n.warnings) this.warnings.write(event.team_id, w.type, w.details, w.debounceKey)
    const personless = this.personlessOutcome(event, n, true)
    if (personless) {
      if (event.internal === true && personless.dropReason === undefined) this.applyApiGroupWrite(event, n.properties)
      return personless
    }

    this.addGroupColumns(event, n, true)
    const ctx: EventContext = { event, properties: n.properties, sets: n.sets, updateIsIdentified: false }
    if (event.event === '$groupidentify') this.upsertGroup(ctx)
    const person = this.applyPersonEffects(ctx)
    return outcome(person.uuid, groupColumns(n.properties), n)
  }

  /** The outcome of a dropped or personless event, or null when the event gets person processing. */
  private personlessOutcome(event: CapturedEvent, n: Normalised, record = false): PersonOutcome | null {
    if (n.dropReason !== null) {
      return { ...outcome(personUuidFor(event.team_id, event.distinct_id), noGroups(), n), dropReason: n.dropReason }
    }
    if (n.processPerson) return null
    for (const key of GROUP_COLUMN_KEYS) {
      if (Object.hasOwn(n.properties, key)) delete writableProperties(n, event)[key]
    }
    const person = this.persons.fetch(event.team_id, event.distinct_id)
    if (!person && record) this.persons.markPersonless(event.team_id, event.distinct_id)
    return outcome(person?.uuid ?? personUuidFor(event.team_id, event.distinct_id), noGroups(), n)
  }

  /** Only where a row is created: formatting it for every event cost ≈2 % of the consumer thread. */
  private createdAtOf(event: CapturedEvent): string {
    const ms = Number.isFinite(event.timestamp) ? event.timestamp : Number.isFinite(event.now) ? event.now : this.clock.now()
    return iso(ms)
  }

  // ------------------------------------------------------------------------------------------------------
  // Groups

  /** `$groups: {type: key}` → `$group_<index>: key`, creating indexes for new types when `create`. */
  private addGroupColumns(event: CapturedEvent, n: Normalised, create: boolean): void {
    const groups = n.properties.$groups
    if (!isPlainObject(groups)) return
    for (const [groupType, groupKey] of Object.entries(groups)) {
      const index = this.groupTypeIndex(event, groupType, create)
      if (index === null) continue
      writableProperties(n, event)[`$group_${index}`] = groupKey
    }
  }

  private groupTypeIndex(event: CapturedEvent, groupType: string, create: boolean): number | null {
    const resolved = this.groups.resolveType(event.team_id, groupType, create)
    if (resolved.index === null && resolved.refused) {
      this.warnings.write(
        event.team_id,
        'group_type_limit_exceeded',
        { ...eventDetails(event), groupType, maxGroupTypes: MAX_GROUP_TYPES_PER_TEAM },
        groupType,
      )
    }
    return resolved.index
  }

  /**
   * The groups API's writes, personless events skylark sends itself: `$groupidentify` applies `$group_set` as a
   * client's does, `$delete_group_property` removes the `$group_unset` keys. PostHog's API writes these to its
   * databases directly; here they travel the spool, so they land in order after the events acknowledged before
   * them. The API checked that the type exists, so none is created here.
   */
  private applyApiGroupWrite(event: CapturedEvent, properties: JsonObject): void {
    const { $group_type: groupType, $group_key: groupKey } = properties
    if (typeof groupType !== 'string' || typeof groupKey !== 'string') return
    const index = this.groups.resolveType(event.team_id, groupType, false).index
    if (index === null) return
    if (event.event === '$groupidentify') {
      const set = properties.$group_set
      this.groups.upsert(event.team_id, index, groupKey, isPlainObject(set) ? set : {}, this.createdAtOf(event))
    } else if (event.event === '$delete_group_property') {
      this.groups.unset(event.team_id, index, groupKey, properties.$group_unset)
    }
  }

  private upsertGroup(ctx: EventContext): void {
    const { $group_type: groupType, $group_key: groupKey, $group_set: groupSet } = ctx.properties
    if (!groupType || !groupKey) return
    const index = this.groupTypeIndex(ctx.event, String(groupType), true)
    if (index === null) return
    const key = String(groupKey).replace(/\u0000/g, '\uFFFD')
    this.groups.upsert(ctx.event.team_id, index, key, isPlainObject(groupSet) ? groupSet : {}, this.createdAtOf(ctx.event))
  }

  // ------------------------------------------------------------------------------------------------------
  // Persons

  private applyPersonEffects(ctx: EventContext): Person {
    const { event, properties } = ctx
    let person: Person | null = null
    if ((event.event === '$create_alias' || event.event === '$merge_dangerously') && properties.alias) {
      person = this.merge(ctx, String(properties.alias), event.distinct_id)
    } else if (event.event === '$identify' && Object.hasOwn(properties, '$anon_distinct_id')) {
      person = this.merge(ctx, String(properties.$anon_distinct_id), event.distinct_id)
    }
    if (!person) {
      person = this.persons.fetch(event.team_id, event.distinct_id)
      if (!person) {
        const initial = initialPersonProperties(ctx.sets, event.uuid)
        return this.persons.create(event.team_id, [event.distinct_id], initial, ctx.updateIsIdentified, this.createdAtOf(event))
      }
    }
    return this.updateProperties(ctx, person)
  }

  /** Applies `$set_once`, `$set`, `$unset` and a pending "identified" mark; writes only when something changed. */
  private updateProperties(ctx: EventContext, person: Person): Person {
    const updates = computePropertyUpdates(ctx.event.event, ctx.properties, ctx.sets, person.properties)
    const identify = ctx.updateIsIdentified && !person.isIdentified
    if (!identify && isIgnorableUpdate(ctx.event.event, updates, person.properties)) return person
    const { properties, changed } = applyPropertyUpdates(person.properties, updates)
    if (!changed && !identify) return person
    person.properties = properties
    if (identify) person.isIdentified = true
    person.version += 1
    this.persons.save(person)
    return person
  }

  /**
   * Merges the person of `otherId` (the anonymous id or alias) into the person of `intoId` (the event's
   * distinct id). Returns the resulting person, or null when nothing was merged and the event should be
   * processed as an ordinary one.
   */
  private merge(ctx: EventContext, otherId: string, intoId: string): Person | null {
    if (otherId === intoId) return null
    const teamId = ctx.event.team_id
    for (const [illegal, other] of [[intoId, otherId], [otherId, intoId]] as const) {
      if (isDistinctIdUnmergeable(illegal)) {
        this.warnings.write(teamId, 'cannot_merge_with_illegal_distinct_id', {
          illegalDistinctId: illegal,
          otherDistinctId: other,
          eventUuid: ctx.event.uuid,
        })
        return null
      }
    }
    ctx.updateIsIdentified = true
    const other = this.persons.fetch(teamId, otherId)
    const into = this.persons.fetch(teamId, intoId)

    if (other && into) {
      if (other.id === into.id) return into
      return this.mergePersons(ctx, into, intoId, other, otherId)
    }
    if (other || into) {
      const existing = (other ?? into)!
      this.persons.addDistinctId(existing, other ? intoId : otherId)
      return existing
    }
    // Neither id has a person: one person gets both. Its uuid comes from the first id; prefer an id that
    // personless events already used, so those events belong to the new person without any rewrite.
    let ids = [intoId, otherId]
    if (!this.persons.wasPersonless(teamId, intoId) && this.persons.wasPersonless(teamId, otherId)) ids = [otherId, intoId]
    return this.persons.create(teamId, ids, initialPersonProperties(ctx.sets, ctx.event.uuid), true, this.createdAtOf(ctx.event))
  }

  private mergePersons(ctx: EventContext, target: Person, targetId: string, source: Person, sourceId: string): Person {
    if (ctx.event.event !== '$merge_dangerously' && source.isIdentified) {
      this.warnings.write(ctx.event.team_id, 'cannot_merge_already_identified', {
        sourcePersonDistinctId: sourceId,
        targetPersonDistinctId: targetId,
        eventUuid: ctx.event.uuid,
      })
      return target
    }
    // On conflicting keys the target (the event's distinct id) wins; then the event's own updates apply.
    const merged = mergeObjects(source.properties, target.properties)
    target.properties = applyPropertyUpdates(merged, computePropertyUpdates(ctx.event.event, ctx.properties, ctx.sets, merged)).properties
    target.createdAt = source.createdAt < target.createdAt ? source.createdAt : target.createdAt
    target.isIdentified = true
    target.version = Math.max(target.version, source.version) + 1
    this.persons.merge(source, target)
    return target
  }
}
