/**
 * Consumer positions, kept in persons.db. The person stage writes its position in the same transaction
 * as the person changes it made, so person processing happens exactly once per event; the sink stage
 * writes its own after the event store confirmed, and replays from there are deduplicated by uuid.
 */
import type { Db } from '../../storage/index.js'
import type { Cursor } from '../spool/layout.js'
import type { Lane } from '../types.js'

export type Stage = 'persons' | 'sink'

export class Checkpoints {
  readonly #get
  readonly #set

  constructor(db: Db) {
    this.#get = db.prepare('SELECT segment, offset FROM consumer_checkpoints WHERE lane = ?')
    this.#set = db.prepare(
      `INSERT INTO consumer_checkpoints (lane, segment, offset) VALUES (?, ?, ?)
       ON CONFLICT (lane) DO UPDATE SET segment = excluded.segment, offset = excluded.offset`,
    )
  }

  get(stage: Stage, lane: Lane): Cursor {
    const row = this.#get.get(`${stage}/${lane}`) as Cursor | undefined
    return row ? { segment: row.segment, offset: row.offset } : { segment: 0, offset: 0 }
  }

  set(stage: Stage, lane: Lane, cursor: Cursor): void {
    this.#set.run(`${stage}/${lane}`, cursor.segment, cursor.offset)
  }
}
