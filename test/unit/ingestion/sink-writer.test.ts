import t from 'tap'
import type { DeadLetterInput } from '../../../src/storage/dead-letters.js'
import { SinkWriter, type PackedSink } from '../../../src/ingestion/consumer/sink-writer.js'
import { packedRows, unpackRows } from '../../../src/storage/events/packed-rows.js'
import { SinkError, type EventRow } from '../../../src/storage/events/types.js'

const row = (uuid: string): EventRow => ({
  uuid,
  team_id: 1,
  event: 'e',
  distinct_id: 'd',
  person_id: '00000000-0000-0000-0000-000000000000',
  properties: '{}',
  timestamp: 0,
  created_at: 0,
  groups: ['', '', '', '', ''],
  elements_chain: '',
})

/** An event store that refuses rows whose uuid starts with "bad", and can be "down" for a few calls. */
function store(downFor = 0) {
  const stored: string[] = []
  let calls = 0
  const sink: PackedSink = {
    kind: 'sqlite',
    async writePacked(packed) {
      await sink.write(unpackRows(packed))
    },
    async deleteEvents() {},
    async write(rows) {
      calls++
      if (calls <= downFor) throw new SinkError('connection refused', false)
      if (rows.some((r) => r.uuid.startsWith('bad'))) throw new SinkError('Cannot parse input', true)
      stored.push(...rows.map((r) => r.uuid))
    },
    async ping() {
      return true
    },
    async close() {},
  }
  return { sink, stored, calls: () => calls }
}

t.test('SinkWriter', async (t) => {
  t.test('isolates refused rows into the dead-letter store and stores the rest', async (t) => {
    const s = store()
    const dead: DeadLetterInput[] = []
    const writer = new SinkWriter({ sink: () => s.sink, retryMaxMs: 10, deadLetter: (e) => dead.push(...e), onFailure: () => {}, onSuccess: () => {}, abandoned: () => false })
    const rows = ['a', 'bad1', 'b', 'c', 'd', 'bad2', 'e', 'f'].map(row)
    t.ok(await writer.write(packedRows(rows), 'main'))
    t.same(s.stored.sort(), ['a', 'b', 'c', 'd', 'e', 'f'])
    t.same(dead.map((d) => JSON.parse(d.payload!).uuid).sort(), ['bad1', 'bad2'])
    t.ok(dead.every((d) => d.stage === 'sink' && /Cannot parse/.test(d.error)))
  })

  t.test('retries a store that is down with backoff, then succeeds', async (t) => {
    const s = store(3)
    const sleeps: number[] = []
    let failures = 0
    const writer = new SinkWriter({
      sink: () => s.sink,
      retryMaxMs: 150,
      deadLetter: () => t.fail('nothing is dead-lettered for an outage'),
      onFailure: () => failures++,
      onSuccess: () => {},
      abandoned: () => false,
      sleep: async (ms) => void sleeps.push(ms),
    })
    t.ok(await writer.write(packedRows([row('x')]), 'main'))
    t.same(s.stored, ['x'])
    t.equal(failures, 3)
    t.same(sleeps, [50, 100, 150], 'exponential backoff, capped')
  })

  t.test('gives up only when shutdown abandons it', async (t) => {
    const s = store(1000)
    let abandoned = false
    const writer = new SinkWriter({
      sink: () => s.sink,
      retryMaxMs: 10,
      deadLetter: () => {},
      onFailure: () => {
        if (s.calls() >= 3) abandoned = true
      },
      onSuccess: () => {},
      abandoned: () => abandoned,
      sleep: async () => {},
    })
    t.equal(await writer.write(packedRows([row('y')]), 'main'), false)
  })
})
