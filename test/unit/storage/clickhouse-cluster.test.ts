/**
 * The ClickHouse store on a cluster (CLICKHOUSE_CLUSTER): ZooKeeper and two real shards. The migration lays out
 * PostHog's tables on both, the sink's rows spread over the shards by distinct id and are there when its write
 * resolves, a replay collapses on its shard, reads over the Distributed table equal SQLite's for the same rows,
 * a person's deletion reaches both shards, and a database made for the other layout is refused by name.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { migrateClickHouse, type ClickHouseEventStore, type EventRow, type SqliteEventStore } from '../../../src/storage/events/index.js'
import { openClickHouseStore } from '../../helpers/clickhouse.js'
import { CLUSTER, clusterUnavailableReason, startClickHouseCluster } from '../../helpers/clickhouse-cluster.js'
import { sqliteEventStore } from '../../helpers/event-stores.js'
import { until } from '../../helpers/wait.js'

const TEAM = 5
const T0 = Date.parse('2024-06-03T08:00:00Z')
const DISTINCT_IDS = 24

function row(i: number): EventRow {
  return {
    uuid: randomUUID(),
    team_id: TEAM,
    event: i % 4 === 0 ? 'purchase' : '$pageview',
    distinct_id: `user-${i % DISTINCT_IDS}`,
    person_id: `00000000-0000-4000-8000-${String(i % DISTINCT_IDS).padStart(12, '0')}`,
    properties: JSON.stringify({ i, plan: i % 3 === 0 ? 'pro' : 'free', amount: i % 7 }),
    timestamp: T0 + i * 60_000,
    created_at: T0,
    groups: [i % 2 === 0 ? 'acme' : '', '', '', '', ''],
    elements_chain: '',
  }
}

t.test('the event store on a two-shard ClickHouse cluster', { skip: clusterUnavailableReason() ?? false }, async (t) => {
  const cluster = await startClickHouseCluster(t)
  const { options, sink, store } = await openClickHouseStore(t, { url: cluster.url, database: 'skylark_cluster', user: 'default', password: '', cluster: CLUSTER })
  /** A query answering one number, run on each shard's server: [first shard's, second's]. */
  const onEachShard = (sql: string) => Promise.all([0, 1].map(async (shard) => Number((await cluster.query(sql, shard)).trim())))

  t.test('the migration makes each shard a replicated table and events the Distributed table over them', async (t) => {
    for (const shard of [0, 1]) {
      const engines = await cluster.query(`SELECT name, engine FROM system.tables WHERE database = 'skylark_cluster' AND name LIKE 'events%' ORDER BY name FORMAT TSV`, shard)
      t.equal(engines, 'events\tDistributed\nevents_local\tReplicatedReplacingMergeTree\n', `shard ${shard + 1}`)
    }
    t.ok(await migrateClickHouse(options), 'a second run (another skylark on the cluster) changes nothing')
  })

  t.test('a shard without its table (added to the cluster later) gets it at the next start', async (t) => {
    const tables = (shard: number) => cluster.query(`SELECT name FROM system.tables WHERE database = 'skylark_cluster' AND name LIKE 'events%' ORDER BY name FORMAT TSV`, shard)
    await cluster.query('DROP TABLE skylark_cluster.events_local', 1)
    t.equal(await tables(1), 'events\n')
    await migrateClickHouse(options)
    t.equal(await tables(1), 'events\nevents_local\n')
  })

  const rows = Array.from({ length: 240 }, (_, i) => row(i))
  t.test('rows spread over the shards by distinct id and are on them when the write resolves', async (t) => {
    await sink.write(rows)
    const perShard = await onEachShard('SELECT count() FROM skylark_cluster.events_local')
    t.equal(perShard[0] + perShard[1], rows.length, `${perShard.join(' + ')} rows, none still queued on the way to a shard`)
    t.ok(perShard[0] > 0 && perShard[1] > 0, 'both shards hold rows')
    const ids = await onEachShard('SELECT uniqExact(distinct_id) FROM skylark_cluster.events_local')
    t.equal(ids[0] + ids[1], DISTINCT_IDS, "each distinct id's events all on one shard")
  })

  t.test('a replay, in other batches, is counted once', async (t) => {
    await sink.write([...rows.slice(100, 140)].reverse())
    await sink.write(rows.slice(0, 7))
    t.equal(await store.count({ teamId: TEAM }), rows.length)
  })

  t.test('reads over the cluster equal the embedded store for the same rows', async (t) => {
    const sqlite = await sqliteEventStore(t, rows)
    const filters = [
      { teamId: TEAM },
      { teamId: TEAM, event: 'purchase' },
      { teamId: TEAM, distinctIds: ['user-3', 'user-17'] },
      { teamId: TEAM, properties: [{ key: 'plan', value: 'pro', operator: 'exact' as const, type: 'event' as const }] },
      { teamId: TEAM, after: T0 + 30 * 60_000, before: T0 + 90 * 60_000 },
    ]
    for (const filter of filters) {
      t.equal(await store.count(filter), await sqlite.count(filter), `count of ${JSON.stringify(filter)}`)
      const page = { limit: 25, offset: 10 }
      const uuids = async (s: ClickHouseEventStore | SqliteEventStore) => (await s.list(filter, page)).map((e) => e.uuid)
      t.same(await uuids(store), await uuids(sqlite), `a page of ${JSON.stringify(filter)}`)
    }
    t.same((await store.distinctIds({ teamId: TEAM, event: 'purchase' })).sort(), (await sqlite.distinctIds({ teamId: TEAM, event: 'purchase' })).sort())
  })

  t.test("a person's deletion reaches the rows on every shard", async (t) => {
    const gone = ['user-0', 'user-1', 'user-2', 'user-3', 'user-4', 'user-5']
    const shardsOf = await onEachShard(`SELECT count() FROM skylark_cluster.events_local WHERE distinct_id IN ('${gone.join("', '")}')`)
    t.ok(shardsOf[0] > 0 && shardsOf[1] > 0, 'the deleted ids have rows on both shards')
    await sink.deleteEvents(TEAM, gone)
    await until('the mutation to reach both shards', async () => (await store.count({ teamId: TEAM, distinctIds: gone })) === 0)
    t.equal(await store.count({ teamId: TEAM }), rows.length - rows.filter((r) => gone.includes(r.distinct_id)).length, 'the others stay')
  })

  t.test('a database made for the other layout is refused by name', async (t) => {
    await t.rejects(migrateClickHouse({ ...options, cluster: null }), /skylark_cluster\.events is a Distributed table, made with CLICKHOUSE_CLUSTER/)
    await migrateClickHouse({ ...options, database: 'skylark_single', cluster: null })
    await t.rejects(migrateClickHouse({ ...options, database: 'skylark_single' }), /skylark_single\.events is a ReplacingMergeTree table, made without CLICKHOUSE_CLUSTER/)
  })
})
