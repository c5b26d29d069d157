import t from 'tap'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import type { TestServer } from '../../helpers/server.js'
import { crashRun } from './crash.js'

async function storedUuids(server: TestServer): Promise<string[]> {
  const db = new Database(join(server.dataDir, 'events.db'), { readonly: true })
  try {
    return (db.prepare("SELECT uuid FROM events WHERE event = 'crash test'").all() as Array<{ uuid: string }>).map((r) => r.uuid)
  } finally {
    db.close()
  }
}

t.test('kill -9 under /batch/ load loses no acknowledged event (SQLite)', async (t) => {
  await crashRun(t, { kills: 5, env: {}, storedUuids })
})

t.test('the consumer thread ending under /batch/ load loses no acknowledged event (SQLite)', async (t) => {
  await crashRun(t, { kills: 3, env: {}, storedUuids, kill: 'consumer thread' })
})
