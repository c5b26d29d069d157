// A fresh events.db for the micro benchmarks of the embedded store (bench/micro/): migrated in a temporary folder,
// with its sink to write rows and a row of the sink's shape. Runs on the compiled output (dist/).
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteEventSink } from '../../dist/src/storage/events/index.js'
import { migrate, openDatabase } from '../../dist/src/storage/index.js'
import { EVENTS_MIGRATIONS } from '../../dist/src/storage/sqlite/migrations/events.js'

/** `prefix` names the folder; `remove()` deletes it. */
export function freshEventsDb(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const file = join(dir, 'events.db')
  const db = openDatabase(file)
  migrate(db, EVENTS_MIGRATIONS)
  db.close()
  return { file, sink: new SqliteEventSink(file), remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** An event row as the sink takes it: no groups, no elements unless given. */
export function eventRow(team, distinctId, event, at, properties, more = {}) {
  return { uuid: randomUUID(), team_id: team, event, distinct_id: distinctId, person_id: null, properties: JSON.stringify(properties), timestamp: at, created_at: at, groups: ['', '', '', '', ''], elements_chain: '', ...more }
}
