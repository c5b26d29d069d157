import t from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { backfillSuite } from './backfill-suite.js'

const DATABASE = 'skylark_test'
const skip = clickhouseUnavailableReason()
t.test('on ClickHouse', { skip: skip ?? false }, async (t) => {
  let ch: TestClickHouse
  t.before(async () => {
    ch = await startClickHouse()
  })
  t.teardown(() => ch?.destroy())
  const rows = async (sql: string) => (await ch.query(`${sql} FORMAT JSONEachRow`)).trim().split('\n').filter(Boolean).map((line) => JSON.parse(line))
  // Milliseconds of created_at whatever the server's column type (DateTime64, or DateTime on 18.16).
  const createdMs = async () => {
    const [{ type }] = await rows(`SELECT type FROM system.columns WHERE database = '${DATABASE}' AND table = 'events' AND name = 'created_at'`)
    return String(type).startsWith('DateTime64') ? 'toUnixTimestamp64Milli(created_at)' : 'toInt64(created_at) * 1000'
  }
  backfillSuite(t, {
    name: 'clickhouse',
    env: () => ({ CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: DATABASE }),
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
