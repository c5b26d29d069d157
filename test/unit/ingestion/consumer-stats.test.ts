import t from 'tap'
import { statsWhenChanged, type ConsumerStats } from '../../../src/ingestion/consumer/messages.js'

const idle = (): ConsumerStats => ({ stored: 10, personsProcessed: 10, deadLettered: 0, cookielessDropped: 0, sinkErrors: 0, sinkUp: true, backlogBytes: 0, queuedRows: 0, lastError: null })

t.test('the consumer thread sends its stats only when they changed', async (t) => {
  const sent: ConsumerStats[] = []
  const send = statsWhenChanged((stats) => sent.push(structuredClone(stats)))
  const stats = idle()
  send(stats)
  send(stats)
  send(idle())
  t.equal(sent.length, 1, 'the same stats, read again on an idle server, are sent once')
  // The consumer updates one object in place between reads.
  stats.stored++
  send(stats)
  stats.sinkUp = false
  stats.lastError = 'connection refused'
  send(stats)
  send(stats)
  t.same(sent.map((s) => [s.stored, s.sinkUp, s.lastError]), [[10, true, null], [11, true, null], [11, false, 'connection refused']], 'each change is sent, as it was')
})
