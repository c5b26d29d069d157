import t from 'tap'
import { migrate, openDatabase, schemaVersion } from '../../../src/storage/index.js'
import { EVENTS_MIGRATIONS } from '../../../src/storage/sqlite/migrations/events.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'
import { PERSONS_MIGRATIONS } from '../../../src/storage/sqlite/migrations/persons.js'

t.test('migrate', async (t) => {
  t.test('applies pending migrations once, in version order', async (t) => {
    const db = openDatabase(':memory:')
    const applied = migrate(db, [
      { version: 2, name: 'b', sql: 'ALTER TABLE t ADD COLUMN b TEXT' },
      { version: 1, name: 'a', sql: 'CREATE TABLE t (a TEXT)' },
    ])
    t.equal(applied, 2)
    t.equal(schemaVersion(db), 2)
    t.equal(migrate(db, [{ version: 1, name: 'a', sql: 'CREATE TABLE t (a TEXT)' }]), 0, 'nothing to do the second time')
  })

  t.test('a failing migration leaves the previous version in place', async (t) => {
    const db = openDatabase(':memory:')
    migrate(db, [{ version: 1, name: 'a', sql: 'CREATE TABLE t (a TEXT)' }])
    t.throws(() => migrate(db, [{ version: 2, name: 'bad', sql: 'CREATE TABLE u (x); SELECT nonsense FROM nowhere' }]))
    t.equal(schemaVersion(db), 1)
    t.notOk(db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'u'").get(), 'the partial change was rolled back')
  })

  t.test('the shipped schemas apply cleanly', async (t) => {
    for (const set of [MANAGEMENT_MIGRATIONS, PERSONS_MIGRATIONS, EVENTS_MIGRATIONS]) {
      const db = openDatabase(':memory:')
      t.equal(migrate(db, set), set.length)
    }
  })
})
