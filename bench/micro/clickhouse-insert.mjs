// Micro benchmark of the ClickHouse sink's inserts, without the consumer: packed rows of ≈1 KB of properties
// (a browser's $pageview with its GeoIP keys and $set/$set_once) encoded as the insert's RowBinary body
// (µs a row, one thread), then, when ClickHouse is available (CLICKHOUSE_URL, or clickhouse-server on PATH),
// REPS serial inserts of 100,000 of them through the sink with merges stopped: rows/s, this process's CPU and
// ClickHouse's. Runs on the compiled output: `npx tsc -p . && node bench/micro/clickhouse-insert.mjs`. The
// round `…5f57748dcf` of docs/performance.md compared RowBinary with TabSeparated this way.
import { readFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { startClickHouse } from '../lib/servers.mjs'
import { rowBinary } from '../../dist/src/storage/events/clickhouse-rowbinary.js'
import { migrateClickHouse } from '../../dist/src/storage/events/clickhouse-schema.js'
import { ClickHouseEventSink } from '../../dist/src/storage/events/clickhouse.js'
import { packRows } from '../../dist/src/storage/events/packed-rows.js'
import { pageview } from '../scenarios/_payloads.mjs'

const REPS = Number(process.env.REPS ?? 4)
const BATCH = 20_000
const BATCHES = 5

const geo = { $geoip_city_name: 'Paris', $geoip_country_name: 'France', $geoip_country_code: 'FR', $geoip_continent_code: 'EU', $geoip_latitude: 48.86, $geoip_longitude: 2.35, $geoip_time_zone: 'Europe/Paris' }
function properties(i) {
  const { properties: p } = pageview(`user-${i}`, i)
  const initial = Object.fromEntries(['$current_url', '$browser', '$os', '$referrer'].map((k) => [`$initial_${k.slice(1)}`, p[k]]))
  return JSON.stringify({ ...p, ...geo, $set: { $current_url: p.$current_url, $browser: p.$browser, $os: p.$os, ...geo }, $set_once: initial })
}
const now = Date.now()
const batches = Array.from({ length: BATCHES }, (_, b) =>
  packRows(
    Array.from({ length: BATCH }, (_, i) => {
      const n = b * BATCH + i
      const distinctId = `user-${String(n).padStart(6, '0')}`
      return { uuid: randomUUID(), team_id: 1, event: '$pageview', distinct_id: distinctId, person_id: randomUUID(), properties: properties(n), timestamp: now + n, created_at: now, groups: ['', '', '', '', ''], elements_chain: '' }
    }),
  ),
)
const features = { version: '18.16', dateTime64: false, jsonExtract: false }

let bytes = 0
for (let rep = 0; rep < 3; rep++) {
  const started = process.hrtime.bigint()
  let rows = 0
  while (process.hrtime.bigint() - started < 1_000_000_000n) {
    for (const chunk of rowBinary(batches[rows / BATCH % BATCHES], features)) bytes += chunk.length
    rows += BATCH
  }
  console.log(`encode: ${(Number(process.hrtime.bigint() - started) / 1e3 / rows).toFixed(2)} µs a row, ${Math.round(bytes / rows)} bytes a row`)
  bytes = 0
}

const ch = await startClickHouse()
if (!ch) {
  console.log('no ClickHouse: set CLICKHOUSE_URL or put clickhouse-server on PATH for the inserts')
  process.exit(0)
}
try {
  const options = { url: ch.url, database: ch.database(`skylark_insert_bench_${Date.now().toString(36)}`), user: 'default', password: '' }
  const sink = new ClickHouseEventSink(options, await migrateClickHouse(options))
  await ch.query(`SYSTEM STOP MERGES ${options.database}.events`)
  // ClickHouse's CPU from /proc when it runs here; an external server's is not ours to read.
  const clickhouseCpuMs = () => {
    if (!ch.pid) return null
    const fields = readFileSync(`/proc/${ch.pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  }
  for (let rep = 0; rep < REPS; rep++) {
    const cpu = process.cpuUsage()
    const chCpu = clickhouseCpuMs()
    const started = performance.now()
    for (const packed of batches) await sink.writePacked(packed)
    const ms = performance.now() - started
    const used = process.cpuUsage(cpu)
    const chUsed = chCpu === null ? 'not measured' : `${Math.round(clickhouseCpuMs() - chCpu)} ms`
    console.log(`insert: ${Math.round((BATCH * BATCHES) / (ms / 1000)).toLocaleString('en-US')} rows/s, this process ${Math.round((used.user + used.system) / 1000)} ms of CPU, ClickHouse ${chUsed}`)
  }
  await sink.close()
} finally {
  await ch.destroy()
}
