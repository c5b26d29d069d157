#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=4 --v8-pool-size=2 --no-parallel-scavenge
// Entry of the `skylark` command: runs the compiled CLI (npm start / npm run build produce dist/).
// These settings are also in `npm start` (docs/architecture.md, "Young generations", "GC helper threads" and
// "malloc"):
// --max-semi-space-size=4 (MB): the main thread's young generation otherwise grows to 2 × 16 MB under
// /batch/ load; 4 MB cut peak RSS by 60–90 MB at no measurable cost.
// --v8-pool-size=2: V8's helper threads (parallel and concurrent GC for every thread), one per core of the
// 2-core target instead of Node's 4, which queued for the cores behind the consumer thread.
// --no-parallel-scavenge: each thread collects its young generation alone. A parallel scavenge makes the
// thread wait for a helper thread, and on 2 shared cores that wait reached ≈22 ms on the main thread.
// MALLOC_MMAP_THRESHOLD_=131072: glibc keeps every block over 128 KB (request bodies, spool frames) in its
// own mapping, returned to the system when freed, instead of raising the threshold after the first such free
// and leaving them in fragmented per-thread arenas; 60–80 MB less peak RSS under /batch/ 1,000.
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const entry = join(root, 'dist', 'src', 'cli', 'index.js')
if (!existsSync(entry)) {
  process.stderr.write('skylark is not built yet: run `npm run build` (npm start does it for you).\n')
  process.exit(2)
}
const { main } = await import(pathToFileURL(entry).href)
const code = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
})
if (code >= 0) process.exitCode = code
