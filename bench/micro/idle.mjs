// What an idle server costs the machine: `skylark serve` on the embedded store, started as the bench starts it,
// left WARM_S seconds to settle, then watched for IDLE_S seconds with no request: its CPU (all threads, and the
// request thread alone) and its threads' wakeups (voluntary context switches, from /proc). Beside it the raw uWS
// baseline, idle the same way. With CLICKHOUSE=1 skylark stores into a clickhouse-server started for the run
// (bench/lib/servers.mjs), watched alone first and then over the same window as skylark: what an idle skylark
// asks of it.
// Runs on the compiled output: `npm run build && node bench/micro/idle.mjs`.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startBaseline, startClickHouse, startSkylark } from '../lib/servers.mjs'
import { threadCpuSeconds } from '../lib/system.mjs'

const WARM_S = Number(process.env.WARM_S ?? 10)
const IDLE_S = Number(process.env.IDLE_S ?? 30)
const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Each thread's CPU seconds and voluntary context switches (every time it slept and was woken). */
function threads(pid) {
  const out = new Map()
  for (const [tid, cpu] of Object.entries(threadCpuSeconds(pid))) {
    try {
      const switches = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8').match(/^voluntary_ctxt_switches:\s+(\d+)/m)
      out.set(tid, { cpu, wakeups: Number(switches?.[1] ?? 0) })
    } catch {
      // the thread ended between the two reads
    }
  }
  return out
}

async function watch(name, pid) {
  await new Promise((resolve) => setTimeout(resolve, WARM_S * 1000))
  const before = threads(pid)
  await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000))
  const rows = [...threads(pid)].map(([tid, now]) => {
    const then = before.get(tid) ?? { cpu: 0, wakeups: 0 }
    return { tid, cpu: ((now.cpu - then.cpu) / IDLE_S) * 100, wakeups: (now.wakeups - then.wakeups) / IDLE_S }
  })
  const sum = (key) => rows.reduce((total, row) => total + row[key], 0)
  const show = (row) => `${row.tid === String(pid) ? 'request' : row.tid} ${row.cpu.toFixed(2)} % ${row.wakeups.toFixed(1)}/s`
  const busiest = rows
    .filter((row) => row.cpu > 0 || row.wakeups >= 0.5)
    .sort((a, b) => b.cpu - a.cpu || b.wakeups - a.wakeups)
    .slice(0, 6)
  console.log(`${name}: ${sum('cpu').toFixed(2)} % of a core, ${sum('wakeups').toFixed(1)} wakeups/s over ${rows.length} threads`)
  console.log(`  by thread (CPU, wakeups): ${busiest.map(show).join('; ')}`)
}

const root = join(benchDir, '..')
const baseline = await startBaseline(benchDir, 'uws-raw')
try {
  await watch('uws-raw', baseline.pid)
} finally {
  await baseline.stop()
}
const clickhouse = process.env.CLICKHOUSE === '1' ? await startClickHouse() : null
if (process.env.CLICKHOUSE === '1' && !clickhouse?.pid) throw new Error('CLICKHOUSE=1, but no clickhouse-server is on PATH')
try {
  if (clickhouse) await watch('ClickHouse alone', clickhouse.pid)
  const env = clickhouse ? { CLICKHOUSE_URL: clickhouse.url, CLICKHOUSE_DATABASE: 'skylark_idle' } : {}
  const skylark = await startSkylark(root, { env })
  try {
    if (clickhouse) await Promise.all([watch('skylark on ClickHouse', skylark.pid), watch('ClickHouse beside it', clickhouse.pid)])
    else await watch('skylark', skylark.pid)
  } finally {
    await skylark.stop()
  }
} finally {
  await clickhouse?.destroy()
}
