// Micro benchmark of the consumer thread's work per event, without HTTP, spool or sink: decode a spooled
// event (decodeFrames of the frames capture wrote), person processing and definitions (a build with a recorder)
// in one persons.db transaction per read,
// rows for the sink and their packing for the insert thread, 64 events at a time as person-batch.ts does
// (CHUNK=1800: a whole read at once). Events are the /batch/ scenario's (_payloads.mjs), 10,000 distinct ids,
// so after the first pass persons exist, as in a load run. Runs on the compiled output: `npx tsc -p . && node
// bench/micro/consumer.mjs` (add --cpu-prof to profile, --max-semi-space-size=8 --trace-gc-nvp for the
// consumer's young generation and what it promotes). GEOIP=0 leaves GeoIP out; NEW_PERSONS=1 gives every event
// a distinct id never seen before (a person created per event, as for first visits); BODIES=1000 makes it
// 100,000 distinct ids, more than the person cache holds (20,000).
//
// Comparisons run in one process, alternating every read (≈30 ms), so both sides see the same vCPU speed,
// where two runs of this machine can differ by 1.8× (docs/performance-rounds.md, "Round `…a0b6e13c8a`"):
// - BASE=<checkout> alternates this build with the build of another checkout (its `dist/`, e.g. a `git
//   worktree` of the commit before, built, with node_modules resolvable from it), each with its own persons.db;
//   it prints both and their ratio (one build against itself: 1.003). Run it both ways round too (BASE
//   swapped with this checkout).
// - ONE_TEXT=1 alternates reads of these frames with reads of the same events as one JSON text each (the
//   `event` frames spools held before `eventParts`).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { consumerPipeline, unreadable } from './_consumer-pipeline.mjs'

const DURATION_MS = Number(process.env.BENCH_MS ?? 4000)
const READ = 1800 // events per read, about what READ_BYTES gives for these events
const CHUNK = Number(process.env.CHUNK ?? 64)
const newPersons = process.env.NEW_PERSONS === '1'

/** A read's work (`step(frames)`) on the build in `root`, with a persons.db of its own in `dir`. */
async function consumerOf(root, dir) {
  const p = await consumerPipeline(root)
  const geoip = process.env.GEOIP === '0' ? null : await p.openGeoIp()
  const { db, stage, definitions } = p.personsStage(dir, geoip)
  // What the spool holds: the frames capture wrote for the bodies' events.
  const spooled = p.spooledFrames(Number(process.env.BODIES ?? 100))
  let at = 0
  let fresh = 0
  let spare = null
  const step = (source = spooled) => {
    const packer = new p.RowPacker(READ * 2600, spare)
    db.transaction(() => {
      for (let c = 0; c < READ; c += CHUNK) {
        const frames = []
        for (let i = 0; i < CHUNK; i++, at = (at + 1) % spooled.length) frames.push(source[at])
        p.packFrames(stage, packer, frames, newPersons ? (events) => events.forEach((event) => (event.distinct_id = `new-${fresh++}`)) : undefined, definitions)
      }
      definitions?.write()
    }).immediate()
    spare = packer.finish().parts[0].buffer
  }
  for (let i = 0; i < (2 * spooled.length) / READ; i++) step() // every person created, caches warm
  const oneText = () => spooled.map((f) => p.readFrame(p.encodeFrame(p.FrameKind.event, JSON.stringify(p.decodeFrames([f], unreadable).events[0])), 0))
  return { step, oneText, geoip, close: () => db.close() }
}

const dirs = []
const tempDir = () => dirs[dirs.push(mkdtempSync(join(tmpdir(), 'skylark-consumer-bench-'))) - 1]
try {
  const here = await consumerOf(fileURLToPath(new URL('../..', import.meta.url)), tempDir())
  // The variants alternated: [name, one read's work].
  const variants = [['this build', () => here.step()]]
  let base = null
  if (process.env.BASE) {
    base = await consumerOf(resolve(process.env.BASE), tempDir())
    variants.push([`BASE (${process.env.BASE})`, () => base.step()])
  } else if (process.env.ONE_TEXT === '1') {
    const frames = here.oneText()
    variants[0][0] = 'eventParts frames'
    variants.push(['one-text frames', () => here.step(frames)])
  }
  const perRead = Math.ceil(READ / CHUNK) * CHUNK
  const ns = variants.map(() => 0)
  const reads = variants.map(() => 0)
  const end = process.hrtime.bigint() + BigInt(DURATION_MS) * 1_000_000n
  for (let v = 0; process.hrtime.bigint() < end; v = (v + 1) % variants.length) {
    const t0 = process.hrtime.bigint()
    variants[v][1]()
    ns[v] += Number(process.hrtime.bigint() - t0)
    reads[v]++
  }
  const us = (v) => ns[v] / 1e3 / (reads[v] * perRead)
  const name = `${here.geoip ? 'GeoIP' : 'no GeoIP'}${newPersons ? ', new persons' : ''}`
  const line = variants.map(([label], v) => `${label} ${us(v).toFixed(2)} µs an event (${Math.round(1e6 / us(v)).toLocaleString('en-US')}/s)`)
  console.log(`${name}: ${line.join(', ')}${variants.length === 2 ? `; first ÷ second ${(us(0) / us(1)).toFixed(3)}` : ''}`)
  here.close()
  base?.close()
} finally {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}
