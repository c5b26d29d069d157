import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { openDatabase, syncCommitted } from '../../../src/storage/index.js'
import { testDir } from '../../helpers/temp.js'

t.test('syncCommitted syncs the WAL that holds the commits, and reports when there is none', async (t) => {
  const dir = testDir(t)
  const file = join(dir, 'store.db')
  const db = openDatabase(file)
  db.exec('CREATE TABLE t (a INTEGER)')
  db.prepare('INSERT INTO t (a) VALUES (?)').run(1)
  t.ok(existsSync(`${file}-wal`), 'the commit is in the WAL')
  t.equal(syncCommitted(file), true, 'the WAL was synced')
  db.close()
  // The last connection's close checkpoints (syncing the database file) and removes the WAL.
  t.notOk(existsSync(`${file}-wal`))
  t.equal(syncCommitted(file), false, 'nothing left to sync')
  t.equal(syncCommitted(join(dir, 'never-created.db')), false)
  const reopened = openDatabase(file, { readonly: true })
  t.equal(reopened.prepare('SELECT a FROM t').pluck().get(), 1)
  reopened.close()
})
