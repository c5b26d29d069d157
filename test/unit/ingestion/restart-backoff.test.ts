import t from 'tap'
import { RESTART_MAX_MS, RESTART_MS, RestartBackoff, STABLE_MS } from '../../../src/ingestion/consumer/restart-backoff.js'

t.test('a thread that dies at once again and again waits twice as long each time, up to the cap', async (t) => {
  const backoff = new RestartBackoff()
  const waits = Array.from({ length: 8 }, () => backoff.next(500))
  t.same(waits, [1000, 2000, 4000, 8000, 16000, RESTART_MAX_MS, RESTART_MAX_MS, RESTART_MAX_MS])
})

t.test('the first death waits the shortest time, however long the thread lived', async (t) => {
  t.equal(new RestartBackoff().next(10), RESTART_MS)
  t.equal(new RestartBackoff().next(10 * STABLE_MS), RESTART_MS)
})

t.test('a thread that lived a stable minute starts the waits over; one that lived just under it does not', async (t) => {
  const backoff = new RestartBackoff()
  for (let i = 0; i < 4; i++) backoff.next(100)
  t.equal(backoff.next(STABLE_MS - 1), 16000, 'just under a minute: still a quick death')
  t.equal(backoff.next(STABLE_MS), RESTART_MS, 'a minute: back to the first wait')
  t.equal(backoff.next(100), 2000, 'and the doubling counts from there')
})
