import t from 'tap'
import { openDatabase } from '../../../src/storage/index.js'
import { backfillSuite } from './backfill-suite.js'

let dataDir = ''
const events = <T>(sql: string, ...params: unknown[]): T => {
  const db = openDatabase(`${dataDir}/events.db`, { readonly: true })
  try {
    return db.prepare(sql).get(...params) as T
  } finally {
    db.close()
  }
}

backfillSuite(t, {
  name: 'sqlite',
  env: () => ({}),
  onDataDir: (dir) => (dataDir = dir),
  // rowid order is the order the events were stored in: z_event came first, alone.
  cursorPast: async (teamId) => {
    const { cursor, bound } = events<{ cursor: number; bound: number }>(
      "SELECT (SELECT MAX(rowid) FROM events WHERE team_id = ? AND event = 'z_event') AS cursor, (SELECT MAX(rowid) FROM events WHERE event != 'after_done') AS bound",
      teamId,
    )
    return { first: 'z_event', bound: String(bound), cursor: String(cursor) }
  },
  createdRange: async (teamId, name) => {
    const row = events<{ lo: number; hi: number }>('SELECT MIN(created_at) AS lo, MAX(created_at) AS hi FROM events WHERE team_id = ? AND event = ?', teamId, name)
    return [row.lo, row.hi]
  },
})
