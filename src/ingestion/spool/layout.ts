/** Where spool segments live: `<spool>/<lane>/<16-digit sequence>.seg`, read and deleted in order. */
import { mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import type { Lane } from '../types.js'

export const LANES: readonly Lane[] = ['main', 'historical', 'overflow']

export function laneDir(spoolDir: string, lane: Lane): string {
  return join(spoolDir, lane)
}

export function segmentPath(spoolDir: string, lane: Lane, segment: number): string {
  return join(laneDir(spoolDir, lane), `${String(segment).padStart(16, '0')}.seg`)
}

export interface SegmentInfo {
  segment: number
  bytes: number
  /** When it was last written, ms since the epoch. */
  modifiedAt: number
}

/**
 * fsync of a folder: makes the names created in it durable. A file's own sync (O_DSYNC, fdatasync) covers its
 * data, not its entry in the folder; ext4 and XFS happen to commit that entry with the file's first sync,
 * other filesystems need this (PostgreSQL syncs pg_wal for each new WAL segment).
 */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Segments of a lane, oldest first. One deleted while it is listed (the consumer frees segments) is left out. */
export function listSegments(spoolDir: string, lane: Lane): SegmentInfo[] {
  const dir = laneDir(spoolDir, lane)
  mkdirSync(dir, { recursive: true })
  const segments: SegmentInfo[] = []
  for (const name of readdirSync(dir)) {
    if (!/^\d{16}\.seg$/.test(name)) continue
    const stat = statSync(join(dir, name), { throwIfNoEntry: false })
    if (stat) segments.push({ segment: Number(name.slice(0, 16)), bytes: stat.size, modifiedAt: stat.mtimeMs })
  }
  return segments.sort((a, b) => a.segment - b.segment)
}

/** Deletes the given segments of a lane; returns the bytes freed. A failed delete is reported and skipped. */
export function deleteSegments(spoolDir: string, lane: Lane, segments: readonly SegmentInfo[], onError: (segment: number, error: unknown) => void): number {
  let bytes = 0
  for (const s of segments) {
    try {
      unlinkSync(segmentPath(spoolDir, lane, s.segment))
      bytes += s.bytes
    } catch (error) {
      onError(s.segment, error)
    }
  }
  return bytes
}

/** A position in a lane: byte offset inside a segment. */
export interface Cursor {
  segment: number
  offset: number
}

export function compareCursors(a: Cursor, b: Cursor): number {
  return a.segment - b.segment || a.offset - b.offset
}
