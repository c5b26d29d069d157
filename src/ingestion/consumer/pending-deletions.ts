/**
 * Event deletions the person step has promised and the sink has not carried out yet (persons.db's
 * pending_event_deletions). A row is written in the transaction that deletes the persons and removed in the
 * one that moves the sink checkpoint past the deletion, so after a crash the replay knows what to delete and
 * where in each lane (its `cut`: the lanes' persons positions when the persons were deleted).
 */
import type { Db } from '../../storage/index.js'
import type { EventDeletion } from '../control.js'
import type { Cursor } from '../spool/layout.js'
import type { Lane } from '../types.js'

export interface PendingDeletion extends EventDeletion {
  cut: Record<Lane, Cursor>
}

export class PendingDeletions {
  readonly #insert
  readonly #all
  readonly #remove

  constructor(db: Db) {
    this.#insert = db.prepare('INSERT INTO pending_event_deletions (team_id, distinct_ids, cut) VALUES (?, ?, ?)')
    this.#all = db.prepare<[], { id: number; team_id: number; distinct_ids: string; cut: string }>(
      'SELECT id, team_id, distinct_ids, cut FROM pending_event_deletions ORDER BY id',
    )
    this.#remove = db.prepare('DELETE FROM pending_event_deletions WHERE id = ?')
  }

  add(teamId: number, distinctIds: readonly string[], cut: Record<Lane, Cursor>): EventDeletion {
    const id = Number(this.#insert.run(teamId, JSON.stringify(distinctIds), JSON.stringify(cut)).lastInsertRowid)
    return { id, teamId, distinctIds }
  }

  /** Oldest first: the order the person step applied them in. */
  all(): PendingDeletion[] {
    return this.#all.all().map((row) => ({
      id: row.id,
      teamId: row.team_id,
      distinctIds: JSON.parse(row.distinct_ids) as string[],
      cut: JSON.parse(row.cut) as Record<Lane, Cursor>,
    }))
  }

  done(id: number): void {
    this.#remove.run(id)
  }
}
