// What the micro benchmarks share of the consumer thread's pipeline, on the compiled output: persons.db with
// its PersonsStage, the spool frames capture writes for the /batch/ scenario's events, and the packed rows the
// consumer makes of them.
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { systemClock } from '../../dist/src/common/clock.js'
import { decodeFrames } from '../../dist/src/ingestion/consumer/read-batch.js'
import { toEventRows } from '../../dist/src/ingestion/consumer/rows.js'
import { encodePayload } from '../../dist/src/ingestion/frames.js'
import { parsePayload } from '../../dist/src/ingestion/parse.js'
import { readFrame } from '../../dist/src/ingestion/spool/format.js'
import { PersonsStage } from '../../dist/src/persons/index.js'
import { RowPacker } from '../../dist/src/storage/events/packed-rows.js'
import { migrate, openDatabase } from '../../dist/src/storage/index.js'
import { PERSONS_MIGRATIONS } from '../../dist/src/storage/sqlite/migrations/persons.js'
import { batchBodies } from '../scenarios/_payloads.mjs'

/** A new persons.db in `dir` and the stage that processes events against it (`geoip`: an open GeoIP, or null). */
export function personsStage(dir, geoip) {
  const db = openDatabase(join(dir, 'persons.db'))
  migrate(db, PERSONS_MIGRATIONS)
  return { db, stage: new PersonsStage(db, { geoip, clock: systemClock }) }
}

/** The spool frames capture writes for `bodies` /batch/ bodies of 100 events (10,000 distinct ids for 100). */
export function spooledFrames(bodies) {
  const ctx = { now: Date.now(), ip: '127.0.0.1', queryUnderscore: null, queryToken: null, uuid: randomUUID, resolveProject: () => ({ id: 1, anonymizeIps: false }) }
  const spooled = []
  for (const body of batchBodies('phc_bench', 100, bodies)) {
    const frames = Buffer.from(encodePayload(parsePayload(body, ctx)).frames)
    for (let at = 0; at < frames.length; at = spooled.at(-1).next) spooled.push(readFrame(frames, at))
  }
  return spooled
}

export const unreadable = (_, error) => {
  throw error
}

/**
 * `count` buffers of `rows` rows each, packed as the consumer packs the /batch/ scenario's events for the insert
 * thread: persons processed, GeoIP's keys and `$set`/`$set_once` in the properties (≈2.5 KB a row as stored).
 */
export function consumerRows(stage, db, count, rows) {
  const spooled = spooledFrames(Math.ceil(rows / 100))
  return Array.from({ length: count }, () => {
    const packer = new RowPacker(rows * 3000)
    db.transaction(() => {
      for (let at = 0; at < rows; at += 100) {
        const { events, propertiesTexts } = decodeFrames(spooled.slice(at, Math.min(at + 100, rows)), unreadable)
        for (const event of events) event.uuid = randomUUID() // each buffer new rows, as a backlog's are
        packer.add(toEventRows(events, stage.process(events, propertiesTexts), Date.now()))
      }
    }).immediate()
    return packer.finish().parts[0]
  })
}
