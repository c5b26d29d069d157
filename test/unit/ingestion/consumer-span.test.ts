import t from 'tap'
import type { StreamTarget } from '../../../src/ingestion/consumer/spanning-insert.js'
import { unpackRows, type PackedRows } from '../../../src/storage/events/packed-rows.js'
import { consumerOverSpool } from '../../helpers/consumer.js'

/** ClickHouse's side of spanning inserts, as the consumer sees it: each commit waits until the test settles it. */
class HeldInserts implements StreamTarget {
  /** The distinct ids of each INSERT; the last one is open. */
  readonly inserts: string[][] = [[]]
  readonly commits: Array<{ rows: number; resolve: () => void; reject: (error: Error) => void }> = []
  settleAll = false

  /** By default a span of 0 (an INSERT per batch, so every append is followed by a commit) and no row cap. */
  constructor(
    readonly spanMs = 0,
    readonly maxRows = Infinity,
  ) {}

  ready(): boolean {
    return true
  }

  async append(rows: PackedRows): Promise<PackedRows> {
    this.inserts[this.inserts.length - 1].push(...unpackRows(rows).map((r) => r.distinct_id))
    return rows
  }

  commit(rows: number): Promise<void> {
    this.inserts.push([])
    if (this.settleAll) return Promise.resolve()
    return new Promise((resolve, reject) => this.commits.push({ rows, resolve, reject }))
  }
}

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition() && waited < 2000; waited += 5) await new Promise((r) => setTimeout(r, 5))
}

t.test('the next spanning INSERT takes rows while the previous one commits, and rows count as stored only once committed', async (t) => {
  const clickhouse = new HeldInserts()
  const { consumer } = consumerOverSpool(300, { batchBytes: 20_000, readBytes: 10_000, stream: clickhouse })
  const running = consumer.run()

  await until(() => clickhouse.commits.length === 1 && clickhouse.inserts[1]?.length > 0)
  t.equal(clickhouse.commits.length, 1, 'the first INSERT is committing')
  t.ok(clickhouse.inserts[1].length > 0, `the second INSERT took ${clickhouse.inserts[1].length} rows meanwhile`)
  await new Promise((r) => setTimeout(r, 50))
  t.equal(clickhouse.commits.length, 1, 'the second INSERT does not commit before the first has')
  t.equal(consumer.stats.stored, 0, 'nothing counts as stored before its commit succeeds')

  const first = clickhouse.commits[0]
  t.equal(first.rows, clickhouse.inserts[0].length, 'the commit names the rows of its own INSERT')
  first.resolve()
  await until(() => clickhouse.commits.length === 2)
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
  await until(() => clickhouse.commits.length === 1 && clickhouse.inserts[1]?.length > 0)
  clickhouse.commits[0].reject(new Error('ClickHouse went away'))
  await t.rejects(running, /a spanning ClickHouse insert failed \(ClickHouse went away\)/)
  t.equal(consumer.stats.stored, 0, 'none of its rows count as stored')
  consumer.stop()
})

t.test('a spanning INSERT ends once it holds maxRows rows, before its span is over', async (t) => {
  // A minute's span: only the row cap (or catching up) can end an INSERT here.
  const clickhouse = new HeldInserts(60_000, 100)
  clickhouse.settleAll = true
  const { consumer, markDurable } = consumerOverSpool(1000, { batchBytes: 20_000, readBytes: 10_000, stream: clickhouse })
  // ≈1 MB unread: behind, so batches are appended to spanning INSERTs until the last 20 KB.
  markDurable()
  const running = consumer.run()
  await until(() => consumer.stats.stored === 1000)
  consumer.stop()
  await running
  const sizes = clickhouse.inserts.slice(0, -1).map((ids) => ids.length)
  const capped = sizes.filter((n) => n >= 100)
  t.ok(capped.length >= 3, `INSERTs ended by the cap: ${capped.length} (rows of each INSERT: ${sizes.join(', ')})`)
  // It ends with the batch that takes it to the cap: a batch is at most 20 KB of packed rows of over 1 KB each.
  t.ok(Math.max(...sizes) < 100 + 20, `no INSERT holds more than the cap and one batch (largest: ${Math.max(...sizes)} rows)`)
  t.same(clickhouse.inserts.flat(), Array.from({ length: 1000 }, (_, i) => `d${i}`), 'every event once, in spool order')
})
