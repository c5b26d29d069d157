import t from 'tap'
import { join } from 'node:path'
import { DeadLetters } from '../../../src/storage/dead-letters.js'
import { runCli, serverFor } from '../../helpers/server.js'
import { waitForEvents } from './suite.js'

t.test('skylark dlq list and replay', async (t) => {
  const server = await serverFor(t)
  const env = { DATA_DIR: server.dataDir }
  // What the consumer writes when the event store refuses a row for good.
  const store = new DeadLetters(join(server.dataDir, 'dead_letters.db'))
  const uuid = '0190a6d2-9c1e-7000-8000-00000000d1e7'
  store.add([
    {
      lane: 'main',
      stage: 'sink',
      error: 'Code: 27. Cannot parse input',
      payload: JSON.stringify({
        uuid,
        team_id: server.boot.project_id,
        event: 'came back',
        distinct_id: 'dlq-user',
        person_id: '00000000-0000-5000-8000-000000000001',
        properties: '{"from":"dlq"}',
        timestamp: Date.parse('2024-01-01T00:00:00Z'),
        created_at: Date.now(),
        groups: ['', '', '', '', ''],
        elements_chain: '',
      }),
    },
    { lane: 'main', stage: 'spool', error: 'checksum mismatch at segment 3 offset 100', payload: null },
  ])
  store.close()

  const list = JSON.parse((await runCli(['dlq', 'list', '--json'], env)).stdout)
  t.equal(list.count, 2)
  t.match(list.results[0], { stage: 'sink', error: /Cannot parse/ })

  const replay = await runCli(['dlq', 'replay', '--json'], env)
  t.same(JSON.parse(replay.stdout), { marked: 2 })
  const [event] = await waitForEvents(server, 'distinct_id=dlq-user', 1)
  t.equal(event.uuid, uuid)
  t.equal(event.properties.from, 'dlq')

  const deadline = Date.now() + 10_000
  let after = list
  while (Date.now() < deadline) {
    after = JSON.parse((await runCli(['dlq', 'list', '--json'], env)).stdout)
    if (after.count === 1 && after.results[0].replay_requested_at === null) break
    await new Promise((r) => setTimeout(r, 200))
  }
  t.equal(after.count, 1, 'the replayed row is gone')
  t.match(after.results[0], { stage: 'spool', attempts: 2, replay_requested_at: null, error: /nothing to replay/ }, 'an unreadable record stays with the reason')
})
