import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { DurableNotifier } from '../../../src/ingestion/spool/durable-notifier.js'
import type { Lane } from '../../../src/ingestion/types.js'

function notifier(intervalMs: number) {
  const sent: Array<[Lane, number, number]> = []
  const n = new DurableNotifier((lane, segment, offset) => sent.push([lane, segment, offset]), intervalMs)
  return { n, sent }
}

t.test('the first report of a quiet lane goes out at once', async (t) => {
  const { n, sent } = notifier(50)
  n.report('main', 1, 100)
  n.report('overflow', 1, 10)
  t.same(sent, [['main', 1, 100], ['overflow', 1, 10]])
})

t.test('reports within the interval collapse into the latest offset, sent when it ends', async (t) => {
  const { n, sent } = notifier(20)
  n.report('main', 1, 100)
  n.report('main', 1, 200)
  n.report('main', 1, 300)
  t.same(sent, [['main', 1, 100]])
  await sleep(40)
  t.same(sent, [['main', 1, 100], ['main', 1, 300]])
})

t.test("a finished segment's final offset is sent before the next segment's", async (t) => {
  const { n, sent } = notifier(1000)
  n.report('main', 1, 100)
  n.report('main', 1, 500)
  n.report('main', 2, 0)
  n.flush()
  t.same(sent, [['main', 1, 100], ['main', 1, 500], ['main', 2, 0]])
})

t.test('flush sends everything held back and stops the timer', async (t) => {
  const { n, sent } = notifier(1000)
  n.report('main', 3, 10)
  n.report('main', 3, 20)
  n.report('historical', 1, 5)
  n.report('historical', 1, 7)
  n.flush()
  t.same(sent, [['main', 3, 10], ['historical', 1, 5], ['main', 3, 20], ['historical', 1, 7]])
  n.flush()
  t.equal(sent.length, 4, 'nothing is sent twice')
})
