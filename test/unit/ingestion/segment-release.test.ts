import t from 'tap'
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { releaseSegments } from '../../../src/ingestion/consumer/segment-release.js'
import { HOLD_MIN_TTL_MS, SpoolHold, spoolHeld } from '../../../src/ingestion/spool/holds.js'
import { segmentPath } from '../../../src/ingestion/spool/layout.js'
import { tempDir } from '../../helpers/temp.js'

const NOW = 1_800_000_000_000

/** A spool whose main lane has segments 1–3 of 100 bytes each. */
function spool(): string {
  const dir = tempDir('skylark-release-')
  mkdirSync(join(dir, 'main'), { recursive: true })
  for (const segment of [1, 2, 3]) writeFileSync(segmentPath(dir, 'main', segment), Buffer.alloc(100))
  return dir
}

const present = (dir: string) => [1, 2, 3].filter((s) => existsSync(segmentPath(dir, 'main', s)))
const noLog = () => {}

t.test('segments both checkpoints passed are deleted, after the stores are synced', async (t) => {
  const dir = spool()
  let synced = 0
  t.equal(releaseSegments(dir, [['main', 3]], NOW, () => synced++, noLog), 200)
  t.same(present(dir), [3])
  t.equal(synced, 1)
})

t.test('while a backup holds the spool nothing is deleted, and once it is released the same call deletes', async (t) => {
  const dir = spool()
  const hold = new SpoolHold(dir, 60_000, NOW)
  let synced = 0
  t.equal(releaseSegments(dir, [['main', 3]], NOW + 1_000, () => synced++, noLog), 0)
  t.same(present(dir), [1, 2, 3])
  t.equal(synced, 0, 'not even the stores are synced for nothing')
  hold.release()
  t.notOk(spoolHeld(dir, NOW + 1_000))
  t.equal(releaseSegments(dir, [['main', 3]], NOW + 1_000, () => synced++, noLog), 200)
  t.same(present(dir), [3])
})

t.test('a hold left by a killed backup lapses by itself', async (t) => {
  const dir = spool()
  new SpoolHold(dir, 60_000, NOW)
  t.ok(spoolHeld(dir, NOW + 59_999))
  t.notOk(spoolHeld(dir, NOW + 60_000))
  t.equal(releaseSegments(dir, [['main', 3]], NOW + 60_000, () => {}, noLog), 200)
})

t.test('a refreshed hold stands past its first lapse, and says whether it ever lapsed', async (t) => {
  const dir = spool()
  const hold = new SpoolHold(dir, 10_000, NOW)
  hold.refresh(NOW + 9_000)
  t.ok(spoolHeld(dir, NOW + 15_000))
  t.ok(hold.unbroken(NOW + 15_000))
  hold.refresh(NOW + 30_000)
  t.notOk(hold.unbroken(NOW + 30_001), 'between 19 s and 30 s nothing held the spool')
  t.ok(spoolHeld(dir, NOW + 30_001), 'though it holds again now')
  hold.release()
})

t.test('a hold file that does not read as a time keeps the segments for the shortest hold from its last change, then lapses', async (t) => {
  const dir = spool()
  mkdirSync(join(dir, 'holds'))
  const file = join(dir, 'holds', 'by-hand')
  writeFileSync(file, 'until the backup is done')
  const changed = new Date(NOW - 1_000)
  utimesSync(file, changed, changed)
  t.ok(spoolHeld(dir, NOW))
  t.equal(releaseSegments(dir, [['main', 3]], NOW, () => {}, noLog), 0)
  t.ok(spoolHeld(dir, NOW - 1_000 + HOLD_MIN_TTL_MS - 1))
  t.notOk(spoolHeld(dir, NOW - 1_000 + HOLD_MIN_TTL_MS), 'a stray file never holds the spool for good')
  t.equal(releaseSegments(dir, [['main', 3]], NOW - 1_000 + HOLD_MIN_TTL_MS, () => {}, noLog), 200)
})
