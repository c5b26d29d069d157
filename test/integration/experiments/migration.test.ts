/**
 * A data folder from before experiments stored metrics (management.db at version 3): the server
 * migrates it on start, serves the old experiment as before (empty metric lists, null settings), and
 * then stores the new fields for it.
 */
import { mkdirSync } from 'node:fs'
import t from 'tap'
import { systemClock } from '../../../src/common/clock.js'
import { bootstrap, createManagement } from '../../../src/management/index.js'
import { dataPaths, migrate, openDatabase, schemaVersion } from '../../../src/storage/index.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'
import { startServer } from '../../helpers/server.js'
import { testDir } from '../../helpers/temp.js'

t.test('an experiment in a version-3 management.db is served and takes the new fields after the upgrade', async (t) => {
  const dataDir = testDir(t, 'skylark-exp-v3-')
  const paths = dataPaths(dataDir)
  mkdirSync(paths.spool, { recursive: true })
  const db = openDatabase(paths.management)
  migrate(db, MANAGEMENT_MIGRATIONS.filter((m) => m.version <= 3))
  const m = createManagement(db, systemClock)
  const boot = bootstrap(m.accounts, m.keys, { createKey: false })
  const project = m.accounts.projects()[0]!
  const owner = db.prepare('SELECT user_id FROM organization_memberships LIMIT 1').pluck().get() as number
  // The flag row as a version-3 database holds it: today's flag service reads tables of later versions.
  const filters = { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] } }
  const flag = db
    .prepare(
      `INSERT INTO feature_flags (team_id, key, filters, created_by_id, created_at, updated_at)
       VALUES (?, 'legacy', ?, ?, '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z') RETURNING id`,
    )
    .get(project.id, JSON.stringify(filters), owner) as { id: number }
  // The row as skylark stored experiments before version 4.
  db.prepare(
    `INSERT INTO experiments (team_id, name, description, feature_flag_id, parameters, filters, created_by_id, created_at, updated_at)
     VALUES (?, 'Old experiment', '', ?, '{}', '{"events":[{"id":"$pageview"}]}', ?, '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z')`,
  ).run(project.id, flag.id, owner)
  const id = db.prepare('SELECT id FROM experiments').pluck().get() as number
  t.equal(schemaVersion(db), 3)
  db.close()

  const server = await startServer({ dataDir })
  t.teardown(() => server.stop())
  t.equal(server.boot.project_id, boot.project_id)
  const url = `/api/projects/${project.id}/experiments/${id}/`

  const old = await server.api('GET', url)
  t.equal(old.status, 200, old.text)
  t.match(old.body, {
    name: 'Old experiment',
    filters: { events: [{ id: '$pageview' }] },
    metrics: [],
    metrics_secondary: [],
    primary_metrics_ordered_uuids: null,
    stats_config: null,
    exposure_criteria: null,
    running_time_calculation: null,
    excluded_variants: null,
    only_count_matured_users: false,
    conclusion: null,
    updated_at: '2024-01-01T00:00:00.000Z',
  })

  const patched = await server.api('PATCH', url, {
    metrics: [{ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: '$pageview' } }],
    conclusion: 'stopped_early',
    allow_unknown_events: true,
  })
  t.equal(patched.status, 200, patched.text)
  const again = await server.api('GET', url)
  t.match(again.body, { metrics: [{ metric_type: 'mean', uuid: String, fingerprint: String }], conclusion: 'stopped_early', stats_config: null })
  t.same(again.body.primary_metrics_ordered_uuids, [again.body.metrics[0].uuid])

  const reopened = openDatabase(paths.management, { readonly: true })
  t.equal(schemaVersion(reopened), MANAGEMENT_MIGRATIONS.at(-1)!.version, 'migrated to the latest version')
  reopened.close()
})
