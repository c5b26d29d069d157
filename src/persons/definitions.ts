/**
 * Event and property definitions, recorded as the consumer stores events, after PostHog's
 * rust/property-defs-rs (types.rs `into_updates`): each event name (with when it was last seen), each
 * event property key with the type its first telling value gives (property-types.ts) and which events it
 * was seen on, each `$set`/`$set_once` key as a person property, and on `$groupidentify` only the
 * `$group_set` keys, as that group type's properties. Read back by definition-reads.ts.
 *
 * Every event passes through here, so what is already known is answered from memory: an event name, then
 * one map lookup per property key; only a name or key not seen before (or a definition still without a
 * type) costs work and a row. `last_seen_at` moves at most once an hour per event name, as PostHog's
 * hourly floor. The rows are written inside the consumer's persons.db transaction; when that rolls back,
 * memory is emptied (`reset`) and rebuilt from the events, whose writes are upserts. A restart starts
 * with empty memory the same way: each name costs one upsert that changes nothing but `last_seen_at`.
 */
import type { Statement } from 'better-sqlite3'
import { iso } from '../common/clock.js'
import { uuidv7 } from '../common/ids.js'
import { isPlainObject, type JsonObject } from '../common/json.js'
import { GEO_FIELDS, type GeoKey, type GeoProperties } from '../geoip/index.js'
import type { CapturedEvent } from '../schemas/captured-event.js'
import type { Db } from '../storage/index.js'
import { splitSets } from './properties.js'
import { detectPropertyType, type PropertyType } from './property-types.js'
import type { PersonOutcome } from './stage.js'

/** PostHog's PropertyDefinition.Type. */
export const PROPERTY_KINDS = { event: 1, person: 2, group: 3 } as const

/** Names and keys longer than this (UTF-8 bytes) are not recorded: half PostHog's column, as it does. */
const MAX_NAME_BYTES = 200
/** PostHog's threshold: an event that would make more updates than this records nothing. */
const MAX_UPDATES = 10_000
/** Names and keys kept in memory over all projects before it starts over (each costs an upsert again). */
const MAX_ENTRIES = 1_000_000
const HOUR_MS = 3_600_000

/** Events PostHog generates itself and records nothing of. */
const IGNORED_EVENTS: ReadonlySet<string> = new Set(['$$plugin_metrics'])
/** Event properties with a meaning of their own, never recorded as event properties. */
const SPECIAL_KEYS: ReadonlySet<string> = new Set(['$set', '$set_once', '$unset', '$groups', ...[0, 1, 2, 3, 4].map((i) => `$group_${i}`)])
/**
 * Keys recorded as properties but not as seen on the event: posthog-js sends a `$feature/<flag>` on nearly
 * every event, and flags are the project's, not the event's.
 */
const NOT_PER_EVENT = ['$feature/', '$feature_enrollment/']
const GEO_EVENT_KEYS: GeoKey[] = GEO_FIELDS.map((field) => `$geoip_${field}` as const)
const GEO_PERSON_KEYS = GEO_FIELDS.map((field) => [`$geoip_${field}` as const, `$initial_geoip_${field}`] as const)

/**
 * A property key's state in memory: absent = never seen; false = recorded without a type yet (every value so
 * far null, an object or an array), so the next value is still looked at; true = done.
 */
type Known = Map<string, boolean>

interface EventState {
  /** False for a name that is not recorded (too long, or generated). */
  recorded: boolean
  /** The hour (ms / HOUR_MS) `last_seen_at` was last written in. */
  seenHour: number
  /** Its property keys: false until both the pairing and the key's typed definition are written. */
  keys: Known
  /** The shapes of its properties, `$set` and `$set_once`. */
  shape: Shape
  setShape: Shape
  setOnceShape: Shape
  /** The `$geoip_*` keys not yet done for this event (most addresses lack some fields). */
  geoPending: GeoKey[]
}

interface ProjectState {
  events: Map<string, EventState>
  eventProperties: Known
  personProperties: Known
  /** The GeoIP person keys (`$geoip_*`, `$initial_geoip_*`) not yet done. */
  personGeoPending: ReadonlyArray<readonly [GeoKey, string]>
  groupProperties: Known[]
  groupIndexes: Map<string, number>
}

export type EventRow = [teamId: number, name: string, at: string]
/** `at`: when the value that gave the type (or none) was seen, for the back-fill (definition-backfill.ts). */
export type PropertyRow = [teamId: number, kind: number, groupTypeIndex: number, name: string, type: PropertyType | null, at: number]
export type PairRow = [teamId: number, property: string, event: string]

/** What observe() noted and write() writes. */
export interface NotedDefinitions {
  events: EventRow[]
  properties: PropertyRow[]
  pairs: PairRow[]
}

function tooLong(name: string): boolean {
  // A UTF-8 byte per UTF-16 unit at least, three at most.
  return name.length > MAX_NAME_BYTES || (name.length > MAX_NAME_BYTES / 3 && Buffer.byteLength(name) > MAX_NAME_BYTES)
}

/** NUL is replaced as PostHog does, whose Postgres columns refuse it. */
export function clean(name: string): string {
  return name.includes('\u0000') ? name.replace(/\u0000/g, '\uFFFD') : name
}

/**
 * The keys of an object the last time all of them were known with a type, in order. Objects of one kind (an
 * event name's properties, its `$set`) mostly come with the same keys in the same order, and for-in hands out
 * the same key strings: comparing them one by one is a pointer comparison each, where a map lookup per key
 * was ≈17 ns (32 keys of the benchmark's $pageview, ≈0.55 µs an event).
 */
interface Shape {
  keys: string[]
}

/**
 * Counts `value`'s keys (0 unless an object), appending to `into` (as key, value) those `known` does not have
 * with a type; `shape` answers for the keys it has in the same order. A shape that differs is replaced once
 * every key is known.
 */
function scan(value: unknown, known: Known, shape: Shape, into: unknown[]): number {
  if (!isPlainObject(value)) return 0
  const order = shape.keys
  const before = into.length
  let n = 0
  let same = true
  for (const key in value) {
    if (same && order[n] === key) {
      n++
      continue
    }
    same = false
    n++
    if (known.get(key) !== true) into.push(key, value[key])
  }
  if ((!same || n !== order.length) && into.length === before) shape.keys = Object.keys(value)
  return n
}

export class DefinitionRecorder {
  readonly #projects = new Map<number, ProjectState>()
  #entries = 0
  #events: EventRow[] = []
  #properties: PropertyRow[] = []
  #pairs: PairRow[] = []
  /** Scratch lists of one event's keys not known yet (reused: most events have none). */
  readonly #unknownKeys: unknown[] = []
  readonly #unknownPerson: unknown[] = []
  private readonly s: {
    event: Statement<[string, number, string, string, string]>
    property: Statement<[string, number, number, number, string, string | null, number]>
    pair: Statement<[number, string, string]>
    groupIndex: Statement<[number, string], number>
  }

  constructor(db: Db) {
    this.s = {
      event: db.prepare(
        `INSERT INTO event_definitions (id, team_id, name, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (team_id, name) DO UPDATE SET last_seen_at = excluded.last_seen_at
         WHERE excluded.last_seen_at > event_definitions.last_seen_at`,
      ),
      property: db.prepare(
        `INSERT INTO property_definitions (id, team_id, type, group_type_index, name, property_type, is_numerical)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (team_id, type, group_type_index, name) DO UPDATE
         SET property_type = excluded.property_type, is_numerical = excluded.is_numerical
         WHERE property_definitions.property_type IS NULL AND excluded.property_type IS NOT NULL`,
      ),
      pair: db.prepare('INSERT OR IGNORE INTO event_properties (team_id, property, event) VALUES (?, ?, ?)'),
      groupIndex: db.prepare<[number, string], number>('SELECT group_type_index FROM group_type_mappings WHERE team_id = ? AND group_type = ?').pluck(),
    }
  }

  /** Notes what the processed events define (`outcomes[i]` is `events[i]`'s), at `now`; write() writes it. */
  observe(events: readonly CapturedEvent[], outcomes: readonly PersonOutcome[], now: number): void {
    // Only what is known: the rows noted since the last write() are not written yet.
    if (this.#entries > MAX_ENTRIES) this.#forgetKnown()
    const hour = Math.floor(now / HOUR_MS)
    for (let i = 0; i < events.length; i++) {
      const outcome = outcomes[i]
      // A dropped event is not stored, so it defines nothing.
      if (outcome.dropReason === undefined) this.#observe(events[i].team_id, events[i].event, outcome, now, hour)
    }
  }

  /**
   * Notes what an event read back from the event store defines, as observe() did when it was processed at
   * `at` (its `created_at`): its stored properties hold the `$set` and `$set_once` it was stored with.
   */
  observeStored(teamId: number, name: string, properties: JsonObject, at: number): void {
    if (this.#entries > MAX_ENTRIES) this.#forgetKnown()
    const split = splitSets(properties)
    this.#observe(teamId, name, { properties: split.properties, sets: split.sets, geo: null }, at, Math.floor(at / HOUR_MS))
  }

  /** What was noted since the last write() or take(), for a caller that writes it its own way. */
  take(): NotedDefinitions {
    const noted = { events: this.#events, properties: this.#properties, pairs: this.#pairs }
    this.#clearPending()
    return noted
  }

  /** Writes what observe() noted since the last write, inside the caller's persons.db transaction. */
  write(): void {
    for (const [teamId, name, at] of this.#events) this.s.event.run(uuidv7(), teamId, clean(name), at, at)
    for (const [teamId, kind, index, name, type] of this.#properties) {
      this.s.property.run(uuidv7(), teamId, kind, index, clean(name), type, type === 'Numeric' ? 1 : 0)
    }
    for (const [teamId, property, event] of this.#pairs) this.s.pair.run(teamId, clean(property), clean(event))
    this.#clearPending()
  }

  /** The transaction that held the writes rolled back (or never ran): memory no longer says what is stored. */
  reset(): void {
    this.#forget()
  }

  #forget(): void {
    this.#forgetKnown()
    this.#clearPending()
  }

  #forgetKnown(): void {
    this.#projects.clear()
    this.#entries = 0
  }

  #clearPending(): void {
    this.#events = []
    this.#properties = []
    this.#pairs = []
  }

  #project(teamId: number): ProjectState {
    let project = this.#projects.get(teamId)
    if (project === undefined) {
      project = {
        events: new Map(),
        eventProperties: new Map(),
        personProperties: new Map(),
        personGeoPending: GEO_PERSON_KEYS,
        groupProperties: [],
        groupIndexes: new Map(),
      }
      this.#projects.set(teamId, project)
    }
    return project
  }

  #observe(teamId: number, name: string, outcome: Pick<PersonOutcome, 'properties' | 'sets' | 'geo'>, now: number, hour: number): void {
    const project = this.#project(teamId)
    let state = project.events.get(name)
    if (state === undefined) {
      const recorded = !IGNORED_EVENTS.has(name) && !tooLong(name)
      state = { recorded, seenHour: Number.NaN, keys: new Map(), shape: { keys: [] }, setShape: { keys: [] }, setOnceShape: { keys: [] }, geoPending: GEO_EVENT_KEYS }
      project.events.set(name, state)
      this.#entries++
    }
    if (!state.recorded) return

    if (name === '$groupidentify') {
      // PostHog records nothing else of a $groupidentify.
      this.#seen(state, teamId, name, now, hour)
      this.#groupProperties(project, teamId, outcome.properties, now)
      return
    }

    // The common case, every key known in the order of the last event: a comparison per key, nothing allocated.
    const properties = outcome.properties
    const unknownKeys = this.#unknownKeys
    const unknownPerson = this.#unknownPerson
    unknownKeys.length = 0
    unknownPerson.length = 0
    const eventKeys = scan(properties, state.keys, state.shape, unknownKeys)
    const sets = outcome.sets
    const known = project.personProperties
    const personKeys = scan(sets.$set, known, state.setShape, unknownPerson) + scan(sets.$set_once, known, state.setOnceShape, unknownPerson)
    if (1 + 2 * eventKeys + personKeys > MAX_UPDATES) return

    this.#seen(state, teamId, name, now, hour)
    for (let i = 0; i < unknownKeys.length; i += 2) this.#eventProperty(project, state, teamId, name, unknownKeys[i] as string, unknownKeys[i + 1], now)
    // GeoIP results are new objects for each address: their keys are asked for by name, only those not yet done.
    const geo = outcome.geo
    if (geo !== null && state.geoPending.length > 0) {
      let done = 0
      for (const key of state.geoPending) {
        if (!Object.hasOwn(geo, key)) continue
        const value = geo[key] ?? null
        if (value === null && state.keys.has(key)) continue
        this.#eventProperty(project, state, teamId, name, key, value, now)
        if (state.keys.get(key) === true) done++
      }
      if (done > 0) state.geoPending = state.geoPending.filter((key) => state.keys.get(key) !== true)
    }
    for (let i = 0; i < unknownPerson.length; i += 2) this.#personProperty(project, teamId, unknownPerson[i] as string, unknownPerson[i + 1], now)
    const personGeo = sets.geo
    if (personGeo !== null && project.personGeoPending.length > 0) this.#personGeo(project, teamId, personGeo, now)
  }

  /**
   * The stored `$set` carries every GeoIP field (null when the address has none), `$set_once` each as
   * `$initial_geoip_*`; fields an address lacks are looked at again only once another address has them.
   */
  #personGeo(project: ProjectState, teamId: number, geo: GeoProperties, now: number): void {
    const known = project.personProperties
    let done = 0
    for (const [key, initialKey] of project.personGeoPending) {
      const value = geo[key] ?? null
      if (value === null && known.has(key) && known.has(initialKey)) continue
      this.#personProperty(project, teamId, key, value, now)
      this.#personProperty(project, teamId, initialKey, value, now)
      if (known.get(key) === true && known.get(initialKey) === true) done++
    }
    if (done > 0) project.personGeoPending = project.personGeoPending.filter(([key, initialKey]) => known.get(key) !== true || known.get(initialKey) !== true)
  }

  /** The event name's definition: created on first sight, `last_seen_at` moved at most once an hour. */
  #seen(state: EventState, teamId: number, name: string, now: number, hour: number): void {
    if (state.seenHour === hour) return
    state.seenHour = hour
    this.#events.push([teamId, name, iso(now)])
  }

  #eventProperty(project: ProjectState, state: EventState, teamId: number, event: string, key: string, value: unknown, now: number): void {
    const known = state.keys.get(key)
    if (known === true) return
    if (SPECIAL_KEYS.has(key) || tooLong(key)) {
      state.keys.set(key, true)
      this.#entries++
      return
    }
    if (known === undefined) {
      state.keys.set(key, false)
      this.#entries++
      if (!NOT_PER_EVENT.some((prefix) => key.startsWith(prefix))) this.#pairs.push([teamId, key, event])
    }
    if (this.#define(project.eventProperties, teamId, PROPERTY_KINDS.event, -1, key, value, now)) state.keys.set(key, true)
  }

  #personProperty(project: ProjectState, teamId: number, key: string, value: unknown, now: number): void {
    const known = project.personProperties
    if (!tooLong(key)) this.#define(known, teamId, PROPERTY_KINDS.person, -1, key, value, now)
    else if (!known.has(key)) {
      known.set(key, true)
      this.#entries++
    }
  }

  #groupProperties(project: ProjectState, teamId: number, properties: JsonObject, now: number): void {
    const { $group_type: groupType, $group_set: set } = properties
    if (typeof groupType !== 'string' || !isPlainObject(set)) return
    const index = this.#groupIndex(project, teamId, groupType)
    if (index === null) return
    const known = (project.groupProperties[index] ??= new Map())
    for (const key in set) {
      if (known.get(key) === true) continue
      if (tooLong(key)) {
        known.set(key, true)
        this.#entries++
      } else this.#define(known, teamId, PROPERTY_KINDS.group, index, key, set[key], now)
    }
  }

  /** The type's index, created by the persons stage earlier in the same transaction; null for a refused type. */
  #groupIndex(project: ProjectState, teamId: number, groupType: string): number | null {
    const cached = project.groupIndexes.get(groupType)
    if (cached !== undefined) return cached
    const index = this.s.groupIndex.get(teamId, groupType)
    if (index === undefined) return null
    project.groupIndexes.set(groupType, index)
    return index
  }

  /** Notes a property definition unless it is known with a type; true once it has one. */
  #define(known: Known, teamId: number, kind: number, groupTypeIndex: number, key: string, value: unknown, now: number): boolean {
    const current = known.get(key)
    if (current === true) return true
    const type = detectPropertyType(key, value, now)
    if (current === undefined || type !== null) {
      if (current === undefined) this.#entries++
      known.set(key, type !== null)
      this.#properties.push([teamId, kind, groupTypeIndex, key, type, now])
    }
    return type !== null
  }
}
