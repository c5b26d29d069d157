/**
 * Control records: instructions to the consumer thread that travel through the spool like events, so the
 * one writer of persons.db applies them in spool order with the events around them, and an acknowledged
 * one is as durable as an acknowledged event. The only one is a person deletion (the persons API's DELETE
 * and bulk_delete). Pure: framing and reading back.
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

export function encodeControl(record: PersonDeletion): Buffer {
  return encodeFrame(FrameKind.control, JSON.stringify(record))
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string')
const isCursor = (v: unknown): v is Cursor => isPlainObject(v) && Number.isInteger(v.segment) && Number.isInteger(v.offset)

/** The record of a control frame; throws when it is not one this version knows (the consumer dead-letters it). */
export function decodeControl(payload: Buffer): PersonDeletion {
  const value = JSON.parse(payload.toString('utf8')) as unknown
  if (!isPlainObject(value) || value.op !== 'delete_persons') throw new Error('unknown control record')
  const { team_id, uuids, distinct_ids, delete_events, after } = value
  if (!Number.isInteger(team_id) || !isStrings(uuids) || !isStrings(distinct_ids) || typeof delete_events !== 'boolean' || !isPlainObject(after)) {
    throw new Error('malformed person deletion')
  }
  const cursors: Partial<Record<Lane, Cursor>> = {}
  for (const lane of ['main', 'historical', 'overflow'] as const) {
    const at = after[lane]
    if (at !== undefined && !isCursor(at)) throw new Error('malformed person deletion')
    if (at !== undefined) cursors[lane] = { segment: at.segment, offset: at.offset }
  }
  return { op: 'delete_persons', team_id: team_id as number, uuids, distinct_ids, delete_events, after: cursors }
}
