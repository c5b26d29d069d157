// Micro benchmark of the embedded event store's inserts as events.db grows: the insert thread's cost a row
// and what reaches the disk, per 100,000 rows, for rows of ≈2.3 KB (the size /capture/'s events are stored
// at) from 100,000 distinct ids (IDS), 1,700 a transaction (what a 4 MB insert holds). An index keyed by
// distinct id alone makes both grow with the table; see EVENTS_BLOCK_ROWS. Runs on the compiled output:
// `npx tsc -p . && node bench/micro/event-insert.mjs` (ROWS=1000000 for the long run, DIR=/dev/shm to leave
// the disk out).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { uuidv7 } from '../../dist/src/common/ids.js'
import { SqliteEventSink } from '../../dist/src/storage/events/index.js'
import { prepareDataDir } from '../../dist/src/storage/index.js'

const ROWS = Number(process.env.ROWS ?? 500_000)
const IDS = Number(process.env.IDS ?? 100_000)
const BATCH = 1700
const WINDOW = 100_000

// Bytes this process had the kernel send to storage (Linux); null where /proc does not say.
const writtenBytes = () => {
  try {
    return Number(/write_bytes: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1])
  } catch {
    return null
  }
}

const dir = mkdtempSync(join(process.env.DIR ?? tmpdir(), 'skylark-insert-bench-'))
try {
  const sink = new SqliteEventSink(prepareDataDir(dir).events)
  const properties = JSON.stringify({ $current_url: 'https://example.com/'.padEnd(120, 'x'), padding: 'p'.repeat(2100) })
  let stored = 0
  let windowRows = 0
  let started = process.hrtime.bigint()
  let written = writtenBytes()
  while (stored < ROWS) {
    const rows = []
    for (let i = 0; i < BATCH; i++) {
      const now = Date.now()
      const distinctId = `user-${Math.floor(Math.random() * IDS)}-${'0'.repeat(12)}`
      rows.push({ uuid: uuidv7(now), team_id: 1, event: i % 10 ? 'clicked' : '$pageview', distinct_id: distinctId, person_id: distinctId, properties, timestamp: now, created_at: now, groups: ['', '', '', '', ''], elements_chain: '' })
    }
    await sink.write(rows)
    stored += BATCH
    windowRows += BATCH
    if (windowRows >= WINDOW || stored >= ROWS) {
      const now = process.hrtime.bigint()
      const bytes = writtenBytes()
      const disk = bytes === null ? '' : `, ${((bytes - written) / windowRows / 1024).toFixed(1)} KB to storage a row`
      console.log(`${stored.toLocaleString('en-US')} rows: ${(Number(now - started) / 1e3 / windowRows).toFixed(1)} µs a row${disk}`)
      started = now
      written = bytes
      windowRows = 0
    }
  }
  await sink.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
