/**
 * The worker pool (src/pool) starts with its first task, not with the server: a server that has only seen small
 * bodies runs no pool thread, and the first body over 256 KB starts one, which parses it.
 */
import t from 'tap'
import { serverFor } from '../../helpers/server.js'
import { storedEvents, until } from '../reliability/lib.js'

const poolStarted = (stdout: string[]) => stdout.some((line) => line.includes('"thread":"pool"') && line.includes('thread started'))

t.test('the pool thread starts with the first body over 256 KB, and that body is stored', async (t) => {
  const server = await serverFor(t)
  const api_key = server.boot.project_api_key
  const small = await server.request('POST', '/batch/', { body: { api_key, batch: [{ event: 'small', distinct_id: 'd', properties: {} }] } })
  t.equal(small.status, 200)
  await until('the small event is stored', () => storedEvents(server.dataDir, "event = 'small'").length === 1)
  t.notOk(poolStarted(server.stdout), 'no pool thread for a small body')

  const batch = Array.from({ length: 300 }, (_, i) => ({ event: 'large', distinct_id: `d${i}`, properties: { pad: 'x'.repeat(1000) } }))
  const large = await server.request('POST', '/batch/', { body: { api_key, batch } })
  t.equal(large.status, 200)
  t.ok(poolStarted(server.stdout), 'a pool thread started for the large body')
  await until('the large body’s events are stored', () => storedEvents(server.dataDir, "event = 'large'").length === 300)
})
