import t from 'tap'
import type { StreamTarget } from '../../../src/ingestion/consumer/spanning-insert.js'
import { unpackRows, type PackedRows } from '../../../src/storage/events/packed-rows.js'
import { consumerOverSpool } from '../../helpers/consumer.js'

/** ClickHouse's side of spanning inserts, as the consumer sees it: each commit waits until the test settles it. */
class HeldInserts implements StreamTarget {
  // 0: an INSERT per batch, so every append is followed by a commit.
  readonly spanMs = 0
  /** The distinct ids of each INSERT; the last one is open. */
  readonly inserts: string[][] = [[]]
  readonly commits: Array<{ rows: number; resolve: () => void; reject: (error: Error) => void }> = []
  settleAll = false

  ready(): boolean {
    return true
  }

  async append(rows: PackedRows): Promise<void> {
    this.inserts[this.inserts.length - 1].push(...unpackRows(rows).map((r) => r.distinct_id))
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
