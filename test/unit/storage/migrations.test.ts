import { rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { migrate, openDatabase, prepareDataDir, schemaVersion } from '../../../src/storage/index.js'
import { CHECKPOINT_WAL_BYTES } from '../../../src/storage/sqlite/database.js'
import { EVENTS_MIGRATIONS, EVENTS_PAGE_SIZE } from '../../../src/storage/sqlite/migrations/events.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'
import { PERSONS_MIGRATIONS } from '../../../src/storage/sqlite/migrations/persons.js'
import { testDir } from '../../helpers/temp.js'

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

  t.test('projects made before secret keys get one each, distinct', async (t) => {
    const db = openDatabase(':memory:')
    migrate(db, MANAGEMENT_MIGRATIONS.filter((m) => m.version === 1))
    db.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('o', 'O', '2024-01-01')").run()
    for (const token of ['phc_a', 'phc_b']) {
      db.prepare("INSERT INTO projects (organization_id, name, api_token, created_at, updated_at) VALUES ('o', 'P', ?, '2024-01-01', '2024-01-01')").run(token)
    }
    migrate(db, MANAGEMENT_MIGRATIONS)
    const secrets = (db.prepare('SELECT secret_api_token FROM projects').all() as Array<{ secret_api_token: string }>).map((r) => r.secret_api_token)
    t.equal(secrets.length, 2)
    t.ok(secrets.every((s) => /^phs_[0-9a-f]{48}$/.test(s)), secrets.join(', '))
    t.not(secrets[0], secrets[1])
  })

  t.test('experiments made before version 4 get empty metric lists and null settings, and take new ones', async (t) => {
    const db = openDatabase(':memory:')
    migrate(db, MANAGEMENT_MIGRATIONS.filter((m) => m.version <= 3))
    db.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('o', 'O', '2024-01-01')").run()
    db.prepare("INSERT INTO projects (id, organization_id, name, api_token, created_at, updated_at) VALUES (1, 'o', 'P', 'phc_a', '2024-01-01', '2024-01-01')").run()
    db.prepare("INSERT INTO feature_flags (id, team_id, key, created_at, updated_at) VALUES (1, 1, 'k', '2024-01-01', '2024-01-01')").run()
    db.prepare("INSERT INTO experiments (team_id, name, feature_flag_id, created_at, updated_at) VALUES (1, 'old', 1, '2024-01-01', '2024-01-01')").run()
    t.equal(migrate(db, MANAGEMENT_MIGRATIONS), MANAGEMENT_MIGRATIONS.length - 3)
    t.same(db.prepare('SELECT metrics, metrics_secondary, stats_config, exposure_criteria, excluded_variants, only_count_matured_users, conclusion FROM experiments').get(), {
      metrics: '[]',
      metrics_secondary: '[]',
      stats_config: null,
      exposure_criteria: null,
      excluded_variants: null,
      only_count_matured_users: 0,
      conclusion: null,
    })
    db.prepare(`UPDATE experiments SET metrics = '[{"kind":"ExperimentMetric"}]', conclusion = 'won'`).run()
    t.same(db.prepare('SELECT metrics, conclusion FROM experiments').get(), { metrics: '[{"kind":"ExperimentMetric"}]', conclusion: 'won' })
  })

  t.test('projects and scheduled changes made before timezones were kept are UTC, as they always ran', async (t) => {
    const db = openDatabase(':memory:')
    migrate(db, MANAGEMENT_MIGRATIONS.filter((m) => m.version <= 11))
    db.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('o', 'O', '2024-01-01')").run()
    db.prepare("INSERT INTO projects (id, organization_id, name, api_token, secret_api_token, created_at, updated_at) VALUES (1, 'o', 'P', 'phc_a', 'phs_a', '2024-01-01', '2024-01-01')").run()
    db.prepare(
      "INSERT INTO scheduled_changes (team_id, record_id, model_name, payload, scheduled_at, is_recurring, cron_expression, created_at, updated_at) VALUES (1, '1', 'FeatureFlag', '{}', '2026-01-01T09:00:00.000Z', 1, '0 9 * * *', '2024-01-01', '2024-01-01')",
    ).run()
    t.equal(migrate(db, MANAGEMENT_MIGRATIONS), MANAGEMENT_MIGRATIONS.length - 11)
    t.same(db.prepare('SELECT timezone FROM projects').get(), { timezone: 'UTC' })
    t.same(db.prepare('SELECT timezone FROM scheduled_changes').get(), { timezone: 'UTC' })
  })

  t.test('a new events.db gets large pages; the other files and an existing events.db keep theirs', async (t) => {
    const dir = testDir(t, 'skylark-pages-')
    const pageSize = (file: string) => {
      const db = openDatabase(file, { readonly: true })
      try {
        return db.pragma('page_size', { simple: true })
      } finally {
        db.close()
      }
    }
    const fresh = prepareDataDir(join(dir, 'fresh'))
    t.equal(EVENTS_PAGE_SIZE, 16384)
    t.equal(pageSize(fresh.events), EVENTS_PAGE_SIZE)
    t.equal(pageSize(fresh.persons), 4096)
    t.equal(pageSize(fresh.management), 4096)

    // A data folder from before the change: its events.db (4 KB pages, WAL) opens and migrates as it is.
    const old = join(dir, 'old')
    const before = prepareDataDir(old)
    rmSync(before.events)
    const db = openDatabase(before.events)
    migrate(db, EVENTS_MIGRATIONS)
    db.close()
    prepareDataDir(old)
    t.equal(pageSize(before.events), 4096)
    const reopened = openDatabase(before.events, { pageSize: EVENTS_PAGE_SIZE })
    t.equal(schemaVersion(reopened), EVENTS_MIGRATIONS.length)
    reopened.close()
  })
})

t.test('the WAL is checkpointed every few megabytes whatever the page size', async (t) => {
  const dir = testDir(t, 'skylark-wal-')
  for (const pageSize of [4096, EVENTS_PAGE_SIZE]) {
    const file = join(dir, `pages-${pageSize}.db`)
    const db = openDatabase(file, { pageSize })
    t.teardown(() => db.close())
    t.equal(db.pragma('page_size', { simple: true }), pageSize)
    t.equal((db.pragma('wal_autocheckpoint', { simple: true }) as number) * pageSize, CHECKPOINT_WAL_BYTES)
    db.exec('CREATE TABLE t (x BLOB)')
    const insert = db.prepare('INSERT INTO t (x) VALUES (?)')
    const row = Buffer.alloc(100 * 1024, 7)
    // 20 MB in 100 KB transactions: without checkpoints the WAL would hold all of it.
    for (let i = 0; i < 200; i++) insert.run(row)
    const walBytes = statSync(`${file}-wal`).size
    t.ok(walBytes < CHECKPOINT_WAL_BYTES + 2 * 1024 * 1024, `${pageSize} B pages: WAL of ${walBytes} bytes stays near ${CHECKPOINT_WAL_BYTES}`)
  }
})
