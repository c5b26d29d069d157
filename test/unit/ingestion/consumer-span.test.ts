import t, { type Test } from 'tap'
import type { StreamTarget } from '../../../src/ingestion/consumer/spanning-insert.js'
import { packedLength, unpackRows, type PackedRows } from '../../../src/storage/events/packed-rows.js'
import { consumerOverSpool } from '../../helpers/consumer.js'
import { until as waitUntil } from '../../helpers/wait.js'

/** ClickHouse's side of spanning inserts, as the consumer sees it: each commit waits until the test settles it. */
class HeldInserts implements StreamTarget {
  /** The distinct ids of each INSERT; the last one is open. */
  readonly inserts: string[][] = [[]]
  readonly commits: Array<{ rows: number; resolve: () => void; reject: (error: Error) => void }> = []
  settleAll = false

  /** Packed bytes appended to each INSERT, in step with `inserts`. */
  readonly bytes: number[] = [0]
  /** When each INSERT took its first rows and when it was committed (ms). */
  readonly openedAt: number[] = []
  readonly committedAt: number[] = []

  /**
   * By default a span of 0 (an INSERT per batch, so every append is followed by a commit), no row or byte cap
   * and no shortest span.
   */
  constructor(
    readonly spanMs = 0,
    readonly maxRows = Infinity,
    readonly maxBytes = Infinity,
    readonly minSpanMs = 0,
  ) {}

  ready(): boolean {
    return true
  }

  async append(rows: PackedRows): Promise<PackedRows> {
    if (this.inserts[this.inserts.length - 1].length === 0) this.openedAt.push(Date.now())
    this.inserts[this.inserts.length - 1].push(...unpackRows(rows).map((r) => r.distinct_id))
    this.bytes[this.bytes.length - 1] += packedLength(rows)
    return rows
  }

  commit(rows: number): Promise<void> {
    this.committedAt.push(Date.now())
    this.inserts.push([])
    this.bytes.push(0)
    if (this.settleAll) return Promise.resolve()
    return new Promise((resolve, reject) => this.commits.push({ rows, resolve, reject }))
  }
}

/** Polls every 5 ms, and fails the test with `what` after `timeoutMs`. */
const until = (what: string, check: () => boolean, timeoutMs = 5000) => waitUntil(what, check, timeoutMs, 5)

t.test('the next spanning INSERT takes rows while the previous one commits, and rows count as stored only once committed', async (t) => {
  const clickhouse = new HeldInserts()
  const { consumer } = consumerOverSpool(300, { batchBytes: 20_000, readBytes: 10_000, stream: clickhouse })
  const running = consumer.run()

  await until('the first INSERT to commit while the second takes rows', () => clickhouse.commits.length === 1 && clickhouse.inserts[1]?.length > 0)
  t.equal(clickhouse.commits.length, 1, 'the first INSERT is committing')
  t.ok(clickhouse.inserts[1].length > 0, `the second INSERT took ${clickhouse.inserts[1].length} rows meanwhile`)
  await new Promise((r) => setTimeout(r, 50))
  t.equal(clickhouse.commits.length, 1, 'the second INSERT does not commit before the first has')
  t.equal(consumer.stats.stored, 0, 'nothing counts as stored before its commit succeeds')

  const first = clickhouse.commits[0]
  t.equal(first.rows, clickhouse.inserts[0].length, 'the commit names the rows of its own INSERT')
  first.resolve()
  await until('the second INSERT to commit', () => clickhouse.commits.length === 2)
  t.equal(consumer.stats.stored, first.rows, 'the first INSERT counts once it is committed')

  clickhouse.settleAll = true
  clickhouse.commits[1].resolve()
  consumer.stop()
  await running
  t.same(clickhouse.inserts.flat(), Array.from({ length: 300 }, (_, i) => `d${i}`), 'every event once, in spool order')
  t.equal(consumer.stats.stored, 300)
})

t.test('an INSERT that fails while the next one takes rows stops the consumer, which restarts from its checkpoints', async (t) => {
  const clickhouse = new HeldInserts()
  const { consumer } = consumerOverSpool(300, { batchBytes: 20_000, readBytes: 10_000, stream: clickhouse })
  const running = consumer.run()
  await until('the first INSERT to commit while the second takes rows', () => clickhouse.commits.length === 1 && clickhouse.inserts[1]?.length > 0)
  clickhouse.commits[0].reject(new Error('ClickHouse went away'))
  await t.rejects(running, /a spanning ClickHouse insert failed \(ClickHouse went away\)/)
  t.equal(consumer.stats.stored, 0, 'none of its rows count as stored')
  consumer.stop()
})

/**
 * Stores 1,000 spooled events (≈1 MB, over 1 KB each packed) through INSERTs spanning a minute: only a cap (or
 * catching up, for the last 20 KB) ends one. Resolves with `clickhouse`'s INSERTs once all are stored.
 */
async function storeBehind(clickhouse: HeldInserts): Promise<HeldInserts> {
  clickhouse.settleAll = true
  const { consumer, markDurable } = consumerOverSpool(1000, { batchBytes: 20_000, readBytes: 10_000, stream: clickhouse })
  markDurable()
  const running = consumer.run()
  await until('1,000 events to be stored', () => consumer.stats.stored === 1000, 10_000)
  consumer.stop()
  await running
  return clickhouse
}

/** Each INSERT but the empty last one is at most `cap` and one batch (20 KB packed, ≈18 rows); `min` end at the cap. */
function checkCapped(t: Test, sizes: number[], cap: number, batch: number, min: number): void {
  const capped = sizes.filter((n) => n >= cap)
  t.ok(capped.length >= min, `INSERTs ended by the cap: ${capped.length} (each INSERT: ${sizes.join(', ')})`)
  t.ok(Math.max(...sizes) < cap + batch, `no INSERT holds more than the cap and one batch (largest: ${Math.max(...sizes)})`)
}

const inSpoolOrder = Array.from({ length: 1000 }, (_, i) => `d${i}`)

t.test('a spanning INSERT ends once it holds maxRows rows, before its span is over', async (t) => {
  const clickhouse = await storeBehind(new HeldInserts(60_000, 100))
  checkCapped(t, clickhouse.inserts.slice(0, -1).map((ids) => ids.length), 100, 20, 3)
  t.same(clickhouse.inserts.flat(), inSpoolOrder, 'every event once, in spool order')
})

t.test('a spanning INSERT ends once it holds maxBytes of packed rows, whatever its rows', async (t) => {
  const clickhouse = await storeBehind(new HeldInserts(60_000, Infinity, 100_000))
  checkCapped(t, clickhouse.bytes.slice(0, -1), 100_000, 20_000, 5)
  t.same(clickhouse.inserts.flat(), inSpoolOrder, 'every event once, in spool order')
})

t.test('caught up, an INSERT takes the batches of minSpanMs while events keep arriving, instead of committing each', async (t) => {
  // No durable mark: the consumer counts no backlog, so it is caught up from the start; a minute's span. With a
  // flush interval of 1 s, the events (all there at the start) count as still arriving for that long.
  const perBatch = await storeCaughtUp(t, new HeldInserts(60_000, Infinity, Infinity, 0), 1000)
  t.ok(perBatch.inserts.filter((ids) => ids.length > 0).length >= 2, `without a shortest span, an INSERT per batch (${perBatch.inserts.length - 1})`)

  // Well over the few milliseconds reading the 300 events takes, even on a loaded machine.
  const held = await storeCaughtUp(t, new HeldInserts(60_000, Infinity, Infinity, 700), 1000)
  t.same(held.inserts.slice(0, -1).map((ids) => ids.length), [300], 'with 700 ms, the batches of the whole spool went into one INSERT')
  t.ok(held.committedAt[0] - held.openedAt[0] >= 700, `committed ${held.committedAt[0] - held.openedAt[0]} ms after it opened`)
})

t.test('caught up, an INSERT commits before minSpanMs once no events have arrived for a flush interval', async (t) => {
  const held = await storeCaughtUp(t, new HeldInserts(60_000, Infinity, Infinity, 5000), 10)
  const openFor = held.committedAt[0] - held.openedAt[0]
  t.ok(openFor < 2500, `the first INSERT committed ${openFor} ms after it opened, not 5 s`)
})

/** Stores the 300 events of a spool the consumer keeps up with, its flush interval `flushIntervalMs`. */
async function storeCaughtUp(t: Test, clickhouse: HeldInserts, flushIntervalMs: number): Promise<HeldInserts> {
  clickhouse.settleAll = true
  const { consumer } = consumerOverSpool(300, { batchBytes: 20_000, readBytes: 10_000, stream: clickhouse, flushIntervalMs })
  const running = consumer.run()
  await until('300 events to be stored', () => consumer.stats.stored === 300)
  consumer.stop()
  await running
  t.same(clickhouse.inserts.flat(), inSpoolOrder.slice(0, 300), 'every event once, in spool order')
  return clickhouse
}
