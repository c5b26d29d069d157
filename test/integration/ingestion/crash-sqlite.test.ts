import t from 'tap'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { crashRun } from './crash.js'

t.test('kill -9 under /batch/ load loses no acknowledged event (SQLite)', async (t) => {
  await crashRun(t, {
    kills: 5,
    env: {},
    storedUuids: async (server) => {
      const db = new Database(join(server.dataDir, 'events.db'), { readonly: true })
      try {
        return (db.prepare("SELECT uuid FROM events WHERE event = 'crash test'").all() as Array<{ uuid: string }>).map((r) => r.uuid)
      } finally {
        db.close()
      }
    },
  })
})
