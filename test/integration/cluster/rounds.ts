import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
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
