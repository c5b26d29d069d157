/**
 * Control records: instructions to the consumer thread that travel through the spool like events, so the
 * one writer of persons.db applies them in spool order with the events around them, and an acknowledged
 * one is as durable as an acknowledged event. Two kinds, told apart by `op` in one frame kind (an older
 * version dead-letters an op it does not know, where an unknown frame kind would read as a torn spool): a
 * person deletion (the persons API's DELETE and bulk_delete) and a person split (persons/:id/split/).
 * Pure: framing and reading back.
 */
import { isPlainObject } from '../common/json.js'
import { encodeFrame, FrameKind } from './spool/format.js'
import type { Cursor } from './spool/layout.js'
import type { Lane } from './types.js'

/** Events of a deleted person's distinct ids to delete from the event store, after the rows stored before them. */
export interface EventDeletion {
  /** Its row in persons.db's pending_event_deletions (the consumer deletes it with the sink checkpoint past it). */
  id: number
  teamId: number
  distinctIds: readonly string[]
}

export interface PersonDeletion {
  op: 'delete_persons'
  team_id: number
  /** Persons named by uuid (lower-case). */
  uuids: string[]
  /** Persons named by a distinct id: whichever person owns it when the deletion is applied. */
  distinct_ids: string[]
  delete_events: boolean
  /**
   * The durable end of the other lanes when the deletion was acknowledged. Events acknowledged before it may
   * sit there (a distinct id over its spike budget goes to overflow, migrations to historical); the consumer
   * applies the deletion only once it has processed them, so none of them recreates the person afterwards.
   */
  after: Partial<Record<Lane, Cursor>>
}

/** A person split (PostHog's split_person): distinct ids moved off the person, each onto a new person of its own. */
export interface PersonSplit {
  op: 'split_person'
  team_id: number
  /** The person, by uuid (lower-case); a person merged or deleted meanwhile is not split. */
  uuid: string
  /** Without `distinct_ids_to_split`: every other distinct id of the person is split off. */
  main_distinct_id: string | null
  /** Only these are split off (PostHog's partial split); the person keeps the rest. */
  distinct_ids_to_split: string[] | null
  /** As a deletion's: events acknowledged before the split, in other lanes, are processed before it. */
  after: Partial<Record<Lane, Cursor>>
}

export type ControlRecord = PersonDeletion | PersonSplit

export function encodeControl(record: ControlRecord): Buffer {
  return encodeFrame(FrameKind.control, JSON.stringify(record))
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string')
const isCursor = (v: unknown): v is Cursor => isPlainObject(v) && Number.isInteger(v.segment) && Number.isInteger(v.offset)

function readAfter(after: unknown): Partial<Record<Lane, Cursor>> | null {
  if (!isPlainObject(after)) return null
  const cursors: Partial<Record<Lane, Cursor>> = {}
  for (const lane of ['main', 'historical', 'overflow'] as const) {
    const at = after[lane]
    if (at === undefined) continue
    if (!isCursor(at)) return null
    cursors[lane] = { segment: at.segment, offset: at.offset }
  }
  return cursors
}

/** The record of a control frame; throws when it is not one this version knows (the consumer dead-letters it). */
export function decodeControl(payload: Buffer): ControlRecord {
  const value = JSON.parse(payload.toString('utf8')) as unknown
  if (!isPlainObject(value)) throw new Error('unknown control record')
  const after = readAfter(value.after)
  if (value.op === 'delete_persons') {
    const { team_id, uuids, distinct_ids, delete_events } = value
    if (!Number.isInteger(team_id) || !isStrings(uuids) || !isStrings(distinct_ids) || typeof delete_events !== 'boolean' || after === null) {
      throw new Error('malformed person deletion')
    }
    return { op: 'delete_persons', team_id: team_id as number, uuids, distinct_ids, delete_events, after }
  }
  if (value.op === 'split_person') {
    const { team_id, uuid, main_distinct_id: main, distinct_ids_to_split: only } = value
    if (!Number.isInteger(team_id) || typeof uuid !== 'string' || (main !== null && typeof main !== 'string') || (only !== null && !isStrings(only)) || after === null) {
      throw new Error('malformed person split')
    }
    return { op: 'split_person', team_id: team_id as number, uuid, main_distinct_id: main, distinct_ids_to_split: only, after }
  }
  throw new Error('unknown control record')
}
