// What the micro benchmarks share of the consumer thread's pipeline, on a build's compiled output: persons.db
// with its PersonsStage, the spool frames capture writes for the /batch/ scenario's events, and the packed rows
// the consumer makes of them. `consumerPipeline(root)` loads them from the checkout at `root` (its `dist/`), so
// one process can hold two builds and alternate them (consumer.mjs, BASE=…); the named exports are this
// checkout's.
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { batchBodies } from '../scenarios/_payloads.mjs'

export const unreadable = (_, error) => {
  throw error
}

/** The pipeline's parts from the build in `root`/dist (built, its node_modules resolvable from there). */
export async function consumerPipeline(root) {
  const load = (path) => import(pathToFileURL(join(root, 'dist/src', path)).href)
  const [clock, readBatch, rows, frames, parse, format, persons, packed, storage, migrations, geoip] = await Promise.all(
    ['common/clock.js', 'ingestion/consumer/read-batch.js', 'ingestion/consumer/rows.js', 'ingestion/frames.js', 'ingestion/parse.js',
      'ingestion/spool/format.js', 'persons/index.js', 'storage/events/packed-rows.js', 'storage/index.js',
      'storage/sqlite/migrations/persons.js', 'geoip/index.js'].map(load),
  )
  const { decodeFrames } = readBatch
  const { toEventRows } = rows
  const { RowPacker } = packed
  const { readFrame } = format

  /**
   * A new persons.db in `dir`, the stage that processes events against it (`geoip`: an open GeoIP, or null) and
   * the recorder of their definitions (null for a build from before there was one).
   */
  function personsStage(dir, geoipReader) {
    const db = storage.openDatabase(join(dir, 'persons.db'))
    storage.migrate(db, migrations.PERSONS_MIGRATIONS)
    const definitions = persons.DefinitionRecorder ? new persons.DefinitionRecorder(db) : null
    return { db, stage: new persons.PersonsStage(db, { geoip: geoipReader, clock: clock.systemClock }), definitions }
  }

  /** The spool frames capture writes for `bodies` /batch/ bodies of 100 events (10,000 distinct ids for 100). */
  function spooledFrames(bodies) {
    const ctx = { now: Date.now(), ip: '127.0.0.1', queryUnderscore: null, queryToken: null, uuid: randomUUID, resolveProject: () => ({ id: 1, anonymizeIps: false }) }
    const spooled = []
    for (const body of batchBodies('phc_bench', 100, bodies)) {
      const encoded = Buffer.from(frames.encodePayload(parse.parsePayload(body, ctx)).frames)
      for (let at = 0; at < encoded.length; at = spooled.at(-1).next) spooled.push(readFrame(encoded, at))
    }
    return spooled
  }

  /**
   * One chunk of a read as the consumer handles it: `frames` decoded, `edit(events)`, persons processed, rows
   * packed, definitions noted (`definitions.write()` ends the read).
   */
  function packFrames(stage, packer, frames, edit, definitions = null) {
    const { events, propertiesTexts } = decodeFrames(frames, unreadable)
    edit?.(events)
    const outcomes = stage.process(events, propertiesTexts)
    const now = Date.now()
    packer.add(toEventRows(events, outcomes, now))
    definitions?.observe(events, outcomes, now)
  }

  /**
   * `count` buffers of `rows` rows each, packed as the consumer packs the /batch/ scenario's events for the insert
   * thread: persons processed, GeoIP's keys and `$set`/`$set_once` in the properties (≈2.5 KB a row as stored).
   */
  function consumerRows(stage, db, count, rowCount) {
    const spooled = spooledFrames(Math.ceil(rowCount / 100))
    return Array.from({ length: count }, () => {
      const packer = new RowPacker(rowCount * 3000)
      db.transaction(() => {
        for (let at = 0; at < rowCount; at += 100) {
          // each buffer new rows, as a backlog's are
          packFrames(stage, packer, spooled.slice(at, Math.min(at + 100, rowCount)), (events) => events.forEach((event) => (event.uuid = randomUUID())))
        }
      }).immediate()
      return packer.finish().parts[0]
    })
  }

  return { openGeoIp: geoip.openGeoIp, decodeFrames, RowPacker, readFrame, encodeFrame: format.encodeFrame, FrameKind: format.FrameKind, personsStage, spooledFrames, packFrames, consumerRows }
}

export const { personsStage, spooledFrames, consumerRows } = await consumerPipeline(fileURLToPath(new URL('../..', import.meta.url)))
