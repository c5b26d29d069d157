/**
 * `skylark backup --to DIR`: a copy of the whole data folder, taken while the server runs. A server started
 * on the copy (DATA_DIR=DIR) has every event acknowledged before the command started, its persons as those
 * events left them, and the original's projects, keys and flags. The order is what makes it consistent:
 * 1. a hold on the spool's deletions (spool/holds.ts);
 * 2. persons.db in one read transaction: persons and the consumer's checkpoints as of one commit;
 * 3. events.db, later: every row up to the copy's sink checkpoint and maybe more, which the copy's consumer
 *    writes again and the store deduplicates by uuid, as after any restart;
 * 4. the spool, later still: every frame from the copy's checkpoints on is still there (the hold), so the
 *    copy's consumer gives persons the events that events.db has beyond them; and so is every frame
 *    acknowledged before step 1. A frame written while it is read is a torn tail, which the copy's first
 *    start reads as after a crash. Then the hold is released. (With the spool copied before events.db, the
 *    copy would hold events whose person changes it has nowhere to take from.)
 * 5. dead_letters.db, logs.db and metrics.db (OTLP logs and metrics: nothing else refers to them), later too, so a record may be there twice but never missing; management.db.
 * While the spool is held, what the server takes in stays on disk and counts against SPOOL_MAX_BYTES.
 * On ClickHouse the events live in ClickHouse and are not copied: the copy's consumer replays from its
 * checkpoints into the same ClickHouse, whose ReplacingMergeTree keeps one row per uuid.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { constants, copyFile, open } from 'node:fs/promises'
import { basename, join } from 'node:path'
import type { Clock } from '../common/clock.js'
import { HOLD_MIN_TTL_MS, SpoolHold } from '../ingestion/spool/holds.js'
import { LANES, laneDir, listSegments, segmentPath, syncDirectory } from '../ingestion/spool/layout.js'
import { dataPaths, openDatabase, snapshotTo } from '../storage/index.js'

/**
 * How long a hold stands unrefreshed: the one-step copies of persons.db and events.db block the CLI's event
 * loop, so it must outlast them: 5 minutes, and a millisecond for every 10 KB of the two files (10 MB/s, a
 * slow disk), so a large events.db never outlasts it.
 */
const HOLD_BYTES_PER_MS = 10_000
const HOLD_REFRESH_MS = 5_000

export interface BackupSummary {
  dir: string
  /** Pages copied per SQLite file; a file the data folder does not have yet is left out. */
  databases: Record<string, number>
  spool: { segments: number; bytes: number }
}

/** The target holds files already: a usage error rather than a failure. */
export class TargetNotEmpty extends Error {}

export async function backupDataDir(dataDir: string, to: string, clock: Clock): Promise<BackupSummary> {
  const from = dataPaths(dataDir)
  if (!existsSync(from.persons)) throw new Error(`${dataDir} is not a skylark data folder (no persons.db)`)
  const created = !existsSync(to)
  if (!created && readdirSync(to).length > 0) throw new TargetNotEmpty(`${to} is not empty: a backup never overwrites`)
  const into = dataPaths(to)
  mkdirSync(into.spool, { recursive: true })
  try {
    const summary: BackupSummary = { dir: to, databases: {}, spool: { segments: 0, bytes: 0 } }
    const copy = async (key: 'persons' | 'events' | 'deadLetters' | 'logs' | 'metrics' | 'management') => {
      if (existsSync(from[key])) summary.databases[basename(from[key])] = await snapshot(from[key], into[key])
    }
    const ttlMs = HOLD_MIN_TTL_MS + Math.ceil((fileBytes(from.persons) + fileBytes(from.events)) / HOLD_BYTES_PER_MS)
    await underHold(from.spool, ttlMs, clock, async () => {
      await copy('persons')
      await copy('events')
      summary.spool = await copySpool(from.spool, into.spool)
    })
    await copy('deadLetters')
    await copy('logs')
    await copy('metrics')
    await copy('management')
    await syncDirectory(into.spool)
    await syncDirectory(to)
    return summary
  } catch (error) {
    if (created) rmSync(to, { recursive: true, force: true })
    else for (const name of readdirSync(to)) rmSync(join(to, name), { recursive: true, force: true })
    throw error
  }
}

/** Runs `work` with the spool held, refreshing the hold; fails if it lapsed meanwhile (a segment may be gone). */
async function underHold(spoolDir: string, ttlMs: number, clock: Clock, work: () => Promise<void>): Promise<void> {
  const hold = new SpoolHold(spoolDir, ttlMs, clock.now())
  const timer = setInterval(() => {
    try {
      hold.refresh(clock.now())
    } catch {
      // A failed refresh shows as a lapse below, if the hold ran out before the next one.
    }
  }, HOLD_REFRESH_MS)
  try {
    await work()
    if (!hold.unbroken(clock.now())) {
      throw new Error(`the hold on the spool lapsed (over ${Math.round(ttlMs / 1000)} s without a refresh), so the copy may miss spool segments; run it again`)
    }
  } finally {
    clearInterval(timer)
    hold.release()
  }
}

async function snapshot(source: string, target: string): Promise<number> {
  const db = openDatabase(source)
  try {
    const pages = await snapshotTo(db, target)
    await syncFile(target)
    return pages
  } finally {
    db.close()
  }
}

async function copySpool(source: string, target: string): Promise<BackupSummary['spool']> {
  const copied = { segments: 0, bytes: 0 }
  for (const lane of LANES) {
    mkdirSync(laneDir(target, lane), { recursive: true })
    for (const { segment } of listSegments(source, lane)) {
      const dest = segmentPath(target, lane, segment)
      try {
        await copyFile(segmentPath(source, lane, segment), dest, constants.COPYFILE_EXCL)
      } catch (error) {
        // Deleted since it was listed: only a deletion decided before the hold, which the copy does not need.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue
        throw error
      }
      copied.bytes += await syncFile(dest)
      copied.segments++
    }
    await syncDirectory(laneDir(target, lane))
  }
  return copied
}

/** A SQLite file's bytes with its WAL; 0 when it does not exist. */
function fileBytes(file: string): number {
  return [file, `${file}-wal`].reduce((sum, f) => sum + (statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0)
}

/** fsync of a copied file; returns its size. */
async function syncFile(file: string): Promise<number> {
  const handle = await open(file, 'r+')
  try {
    await handle.sync()
    return (await handle.stat()).size
  } finally {
    await handle.close()
  }
}
