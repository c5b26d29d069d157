/** What the cluster's outage tests share: rounds of acknowledged events, counting them where they are stored, the sink's state. */
import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import type { TestCluster } from '../../helpers/clickhouse-cluster.js'
import type { TestServer } from '../../helpers/server.js'

/**
 * Posts rounds of 40 `event`s from twenty distinct ids, so both shards get rows of every round, asserting each
 * is acknowledged; `acked` holds the uuids of those answered 200.
 */
export function roundSender(t: Test, server: TestServer, event: string): { acked: Set<string>; send(round: number): Promise<void> } {
  const acked = new Set<string>()
  const send = async (round: number) => {
    const batch = Array.from({ length: 40 }, (_, i) => ({ event, uuid: randomUUID(), properties: { distinct_id: `user-${i % 20}`, round } }))
    const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
    t.equal(res.status, 200, `round ${round} acknowledged`)
    for (const e of batch) acked.add(e.uuid)
  }
  return { acked, send }
}

/** Rows and distinct uuids of `event` in `db`, read from `table` (`events` over the cluster, `events_local` one server's) on server `at`. */
export const storedCounter =
  (cluster: TestCluster, db: string, event: string) =>
  async (table: 'events' | 'events_local' = 'events', at = 0): Promise<{ n: number; uuids: number }> => {
    const [n, uuids] = (await cluster.query(`SELECT count(), uniqExact(uuid) FROM ${db}.${table} FINAL WHERE event = '${event}' FORMAT TSV`, at)).trim().split('\t').map(Number)
    return { n, uuids }
  }

/** Whether the server says its event store takes inserts (`/metrics`). */
export const sinkUp = async (server: TestServer): Promise<boolean> => /^skylark_sink_up 1$/m.test((await server.request('GET', '/metrics')).text)
