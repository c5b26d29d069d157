import t from 'tap'
import { consumerOverSpool as setup } from '../../helpers/consumer.js'

t.test('reads and inserts are capped by bytes, and every event is stored once, in order', async (t) => {
  // A flush interval far beyond the test: inserts happen because the queue holds a batch's worth of bytes.
  const { consumer, processed, inserts, insertBytes } = setup(300, { batchBytes: 50_000, readBytes: 10_000, flushIntervalMs: 600_000 })
  const running = consumer.run()
  for (let waited = 0; consumer.stats.stored < 250 && waited < 20_000; waited += 10) await new Promise((r) => setTimeout(r, 10))
  t.ok(consumer.stats.stored >= 250, `full batches were inserted without waiting for the interval (${consumer.stats.stored})`)
  consumer.stop()
  await running

  const stored = inserts.flat()
  t.equal(stored.length, 300)
  t.same(
    stored.map((r) => r.distinct_id),
    Array.from({ length: 300 }, (_, i) => `d${i}`),
    'in spool order',
  )
  t.equal(consumer.stats.stored, 300)
  // ≈1.1 KB frames: the first step of 16 frames already passes 10 KB.
  t.ok(Math.max(...processed) <= 16, `no read far beyond the byte cap (largest ${Math.max(...processed)} events)`)
  inserts.forEach((rows, i) => t.ok(insertBytes[i] <= 50_000, `insert of ${rows.length} rows, ${insertBytes[i]} bytes`))
  t.ok(inserts.length > 1, `several inserts (${inserts.length})`)
})

t.test('without byte pressure a read takes up to 2,000 frames, processed 64 at a time', async (t) => {
  const { consumer, processed, inserts } = setup(2500, { batchBytes: 64 * 1024 * 1024, readBytes: 64 * 1024 * 1024 })
  consumer.stop()
  await consumer.run()
  // A read ends with its one short chunk: 2,000 = 31 × 64 + 16, then 500 = 7 × 64 + 52.
  t.same(processed, [...Array(31).fill(64), 16, ...Array(7).fill(64), 52])
  t.equal(inserts.flat().length, 2500)
})

t.test('the next write is on its way before the person loop, woken by the last one, reads again', async (t) => {
  // Slow writes fill the queue, so the person loop waits for each write to end. Were the sink loop to yield
  // between taking a batch and handing it over, the person loop would process a whole read first while the
  // store sat idle (on SQLite /batch/ stored a quarter less).
  const { consumer, writes, inserts } = setup(600, { batchBytes: 20_000, readBytes: 10_000, writeMs: 5 })
  consumer.stop()
  await consumer.run()
  t.equal(inserts.flat().length, 600)
  t.ok(writes.length > 10, `${writes.length} writes`)
  // A write that left nothing queued waits for the person loop (on a busy machine it can fall behind).
  const late = writes.slice(1).filter((w, i) => writes[i].queuedAtEnd > 0 && w.readsAtStart > writes[i].readsAtEnd)
  t.ok(writes.filter((w) => w.queuedAtEnd > 0).length > 10, 'most writes ended with rows queued behind them')
  t.same(late, [], 'nothing was processed between a write ending with rows queued and the next one starting')
})

t.test('reads are packed into the buffers of rows the store already has', async (t) => {
  const { consumer, inserts, buffers } = setup(600, { batchBytes: 20_000, readBytes: 10_000 })
  consumer.stop()
  await consumer.run()
  t.same(
    inserts.flat().map((r) => r.distinct_id),
    Array.from({ length: 600 }, (_, i) => `d${i}`),
    'every event once, in order, though buffers were packed into again',
  )
  const distinct = new Set(buffers).size
  t.ok(buffers.length > 10, `${buffers.length} parts inserted`)
  t.ok(distinct <= 6, `they lived in ${distinct} buffers`)
})
