/**
 * Deleting the spool segments the consumer is done with. A segment both checkpoints have passed holds events
 * that from then on live only in the stores, whose commits are not synced one by one (SQLite's WAL at
 * synchronous=NORMAL could roll its last commits back at a power loss): so what the stores committed is made
 * durable once (`syncStores`) before anything is deleted. When that fails nothing is deleted, and the next
 * release tries again. Nor is anything deleted while a backup holds the spool (spool/holds.ts): the hold is
 * read after the checkpoints that doom a segment were committed, so a segment deleted despite a hold being
 * placed was left behind by checkpoints older than the backup's copy of persons.db.
 */
import { spoolHeld } from '../spool/holds.js'
import { deleteSegments, listSegments } from '../spool/layout.js'
import type { Lane } from '../types.js'

type Log = (level: 'warn', msg: string, fields: Record<string, unknown>) => void

/** Deletes each lane's segments before its `keepFrom` segment unless the spool is held at `now`; returns the bytes freed. */
export function releaseSegments(
  spoolDir: string,
  keepFrom: ReadonlyArray<readonly [Lane, number]>,
  now: number,
  syncStores: () => void,
  log: Log,
): number {
  const doomed = keepFrom
    .map(([lane, before]) => ({ lane, segments: listSegments(spoolDir, lane).filter((s) => s.segment < before) }))
    .filter((d) => d.segments.length > 0)
  if (doomed.length === 0 || spoolHeld(spoolDir, now)) return 0
  try {
    syncStores()
  } catch (error) {
    log('warn', 'could not make the stores durable; consumed spool segments are kept for now', { error: String(error) })
    return 0
  }
  let bytes = 0
  for (const { lane, segments } of doomed) {
    bytes += deleteSegments(spoolDir, lane, segments, (segment, error) =>
      log('warn', 'could not delete a consumed spool segment', { lane, segment, error: String(error) }),
    )
  }
  return bytes
}
