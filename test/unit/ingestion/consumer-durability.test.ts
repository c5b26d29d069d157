import { existsSync } from 'node:fs'
import t from 'tap'
import { consumerOverSpool as setup } from '../../helpers/consumer.js'

t.test('the stores are made durable before a consumed segment is deleted', async (t) => {
  let segment = ''
  const segmentThereAtSync: boolean[] = []
  const run = setup(300, { batchBytes: 50_000, readBytes: 10_000, syncStores: () => segmentThereAtSync.push(existsSync(segment)) })
  segment = run.segment
  run.consumer.stop()
  await run.consumer.run()
  t.equal(run.inserts.flat().length, 300)
  t.notOk(existsSync(segment), 'the consumed segment is deleted')
  t.same(segmentThereAtSync, [true], 'synced once, while the segment was still there')
})

t.test('while the stores cannot be made durable, consumed segments are kept', async (t) => {
  const warnings: string[] = []
  const run = setup(300, {
    batchBytes: 50_000,
    readBytes: 10_000,
    syncStores: () => {
      throw new Error('EIO: i/o error, fdatasync')
    },
    log: (level, msg) => {
      if (level === 'warn') warnings.push(msg)
    },
  })
  run.consumer.stop()
  await run.consumer.run()
  t.equal(run.inserts.flat().length, 300, 'every event is still stored')
  t.ok(existsSync(run.segment), 'the segment stays for a later try')
  t.ok(warnings.some((w) => w.includes('could not make the stores durable')), 'the failure is logged')
})
