// Micro benchmark of the consumer thread's work per event, without HTTP, spool or sink: decode a spooled
// event (decodeFrames of the frames capture wrote), person processing in one persons.db transaction per read,
// rows for the sink and their packing for the insert thread, 64 events at a time as person-batch.ts does
// (CHUNK=1800: a whole read at once). Events are the /batch/ scenario's (_payloads.mjs), 10,000 distinct ids,
// so after the first pass persons exist, as in a load run. Runs on the compiled output: `npx tsc -p . && node
// bench/micro/consumer.mjs` (add --cpu-prof to profile, --max-semi-space-size=8 --trace-gc-nvp for the
// consumer's young generation and what it promotes). GEOIP=0 leaves GeoIP out; NEW_PERSONS=1 gives every event
// a distinct id never seen before (a person created per event, as for first visits); BODIES=1000 makes it
// 100,000 distinct ids, more than the person cache holds (20,000). ONE_TEXT=1 alternates reads of these
// frames with reads of the same events as one JSON text each (the `event` frames spools held before
// `eventParts`), timing each kind apart: alternated every read (≈30 ms), both see the same vCPU speed, where
// two runs of this machine can differ by 1.8× (docs/performance-rounds.md, "Round `…a0b6e13c8a`").
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openGeoIp } from '../../dist/src/geoip/index.js'
import { decodeFrames } from '../../dist/src/ingestion/consumer/read-batch.js'
import { encodeFrame, FrameKind, readFrame } from '../../dist/src/ingestion/spool/format.js'
import { toEventRows } from '../../dist/src/ingestion/consumer/rows.js'
import { RowPacker } from '../../dist/src/storage/events/packed-rows.js'
import { personsStage, spooledFrames, unreadable } from './_consumer-pipeline.mjs'

const DURATION_MS = Number(process.env.BENCH_MS ?? 4000)
const READ = 1800 // events per read, about what READ_BYTES gives for these events
const CHUNK = Number(process.env.CHUNK ?? 64)

const dir = mkdtempSync(join(tmpdir(), 'skylark-consumer-bench-'))
try {
  const geoip = process.env.GEOIP === '0' ? null : await openGeoIp()
  const { db, stage } = personsStage(dir, geoip)
  // What the spool holds: the frames capture wrote for the bodies' events.
  const spooled = spooledFrames(Number(process.env.BODIES ?? 100))
  const oneText = process.env.ONE_TEXT === '1'
  const oneTextFrames = oneText ? spooled.map((f) => readFrame(encodeFrame(FrameKind.event, JSON.stringify(decodeFrames([f], unreadable).events[0])), 0)) : null

  const newPersons = process.env.NEW_PERSONS === '1'
  let at = 0
  let fresh = 0
  let spare = null
  const step = (source = spooled) => {
    const packer = new RowPacker(READ * 2600, spare)
    db.transaction(() => {
      for (let c = 0; c < READ; c += CHUNK) {
        const frames = []
        for (let i = 0; i < CHUNK; i++, at = (at + 1) % spooled.length) frames.push(source[at])
        const { events, propertiesTexts } = decodeFrames(frames, unreadable)
        if (newPersons) for (const event of events) event.distinct_id = `new-${fresh++}`
        packer.add(toEventRows(events, stage.process(events, propertiesTexts), Date.now()))
      }
    }).immediate()
    spare = packer.finish().parts[0].buffer
  }
  for (let i = 0; i < (2 * spooled.length) / READ; i++) step() // every person created, caches warm
  const name = `${geoip ? 'GeoIP' : 'no GeoIP'}${newPersons ? ', new persons' : ''}`
  const perRead = Math.ceil(READ / CHUNK) * CHUNK
  const end = process.hrtime.bigint() + BigInt(DURATION_MS) * 1_000_000n
  // [frames as spooled, one-text frames]: ns and events.
  const ns = [0, 0]
  const events = [0, 0]
  for (let kind = 0; process.hrtime.bigint() < end; kind = oneText ? 1 - kind : 0) {
    const t0 = process.hrtime.bigint()
    step(kind === 0 ? spooled : oneTextFrames)
    ns[kind] += Number(process.hrtime.bigint() - t0)
    events[kind] += perRead
  }
  const us = (kind) => ns[kind] / 1e3 / events[kind]
  if (oneText) console.log(`${name}: ${us(0).toFixed(2)} µs an event from eventParts frames, ${us(1).toFixed(2)} from one-text frames (${(us(0) / us(1)).toFixed(3)}×)`)
  else console.log(`${name}: ${us(0).toFixed(1)} µs an event, ${Math.round(1e6 / us(0)).toLocaleString('en-US')} events/s`)
  db.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
