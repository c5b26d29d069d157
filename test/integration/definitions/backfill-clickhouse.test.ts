import t, { type Test } from 'tap'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { CLUSTER, clusterUnavailableReason, startClickHouseCluster } from '../../helpers/clickhouse-cluster.js'
import { backfillSuite } from './backfill-suite.js'

const DATABASE = 'skylark_test'

interface Server {
  url: string
  query(sql: string): Promise<string>
}

/** The suite on one ClickHouse server or on a cluster's Distributed table: the same reads answer both. */
function onClickHouse(name: string, skip: string | null, start: (t: Test) => Promise<Server>, env: Record<string, string> = {}): void {
  t.test(name, { skip: skip ?? false }, async (t) => {
    let ch: Server
    t.before(async () => {
      ch = await start(t)
    })
    const rows = async (sql: string) => (await ch.query(`${sql} FORMAT JSONEachRow`)).trim().split('\n').filter(Boolean).map((line) => JSON.parse(line))
    // Milliseconds of created_at whatever the server's column type (DateTime64, or DateTime on 18.16).
    const createdMs = async () => {
      const [{ type }] = await rows(`SELECT type FROM system.columns WHERE database = '${DATABASE}' AND table = 'events' AND name = 'created_at'`)
      return String(type).startsWith('DateTime64') ? 'toUnixTimestamp64Milli(created_at)' : 'toInt64(created_at) * 1000'
    }
    backfillSuite(t, {
      name: 'clickhouse',
      env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: DATABASE, ...env }),
      onDataDir: () => {},
      // Key order: (team, day, event, …): the backdated events' day comes first and holds nothing else.
      cursorPast: async (teamId) => {
        const ms = await createdMs()
        const [{ d }] = await rows(`SELECT toString(min(toDate(timestamp))) AS d FROM ${DATABASE}.events WHERE team_id = ${teamId}`)
        const [{ b }] = await rows(`SELECT toString(max(${ms})) AS b FROM ${DATABASE}.events WHERE event != 'after_done'`)
        return { first: 'backdated', bound: JSON.stringify({ ms: Number(b) }), cursor: JSON.stringify({ t: teamId, d, k: null, done: true }) }
      },
      createdRange: async (teamId, name) => {
        const ms = await createdMs()
        const [{ lo, hi }] = await rows(`SELECT toString(min(${ms})) AS lo, toString(max(${ms})) AS hi FROM ${DATABASE}.events WHERE team_id = ${teamId} AND event = '${name}'`)
        return [Number(lo), Number(hi)]
      },
    })
  })
}

onClickHouse('on ClickHouse', clickhouseUnavailableReason(), async (t) => {
  const ch = await startClickHouse()
  t.teardown(() => ch.destroy())
  return ch
})
// The scan's pages in key order, merged from both shards.
onClickHouse('on a two-shard ClickHouse cluster', clusterUnavailableReason(), (t) => startClickHouseCluster(t), { CLICKHOUSE_CLUSTER: CLUSTER })
