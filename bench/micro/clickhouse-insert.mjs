// Micro benchmark of the ClickHouse sink's inserts, without the consumer: rows as the consumer packs them for
// the /batch/ scenario's events (persons processed, GeoIP's keys and $set/$set_once in the properties, ≈2.5 KB a
// row as stored) encoded as the insert's RowBinary body (µs a row, one thread), then, when ClickHouse is
// available (CLICKHOUSE_URL, or clickhouse-server on PATH), REPS serial inserts of 100,000 of them through the
// sink with merges stopped: rows/s, this process's CPU and ClickHouse's. Runs on the compiled output: `npx tsc
// -p . && MALLOC_MMAP_THRESHOLD_=131072 node bench/micro/clickhouse-insert.mjs` (malloc set as the server's, so
// buffers are allocated as they are there; docs/performance-rounds.md, round `…675e202c4f`; the round `…5f57748dcf`
// measured ≈1.2 KB rows made here). With CLUSTER=1 the inserts go through the Distributed table of a two-shard
// cluster on this machine (scripts/clickhouse-cluster.mjs, as CLICKHOUSE_CLUSTER lays it out): the cost of
// waiting for every shard (insert_distributed_sync), its CPU that of both servers and ZooKeeper's left out. Last,
// the rows' bytes in the table's parts, over every shard.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLUSTER, startClickHouseCluster } from '../../scripts/clickhouse-cluster.mjs'
import { startClickHouse } from '../lib/servers.mjs'
import { processCpuSeconds } from '../lib/system.mjs'
import { openGeoIp } from '../../dist/src/geoip/index.js'
import { rowBinary } from '../../dist/src/storage/events/clickhouse-rowbinary.js'
import { migrateClickHouse } from '../../dist/src/storage/events/clickhouse-schema.js'
import { ClickHouseEventSink } from '../../dist/src/storage/events/clickhouse.js'
import { consumerRows, personsStage } from './_consumer-pipeline.mjs'

const REPS = Number(process.env.REPS ?? 4)
const BATCH = 20_000
const BATCHES = 5

const dir = mkdtempSync(join(tmpdir(), 'skylark-insert-bench-'))
let batches
try {
  const { db, stage } = personsStage(dir, await openGeoIp())
  batches = consumerRows(stage, db, BATCHES, BATCH)
  db.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
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

const ch = process.env.CLUSTER === '1' ? clusterOf(await startClickHouseCluster(4_000_000_000)) : singleOf(await startClickHouse())
if (!ch) {
  console.log('no ClickHouse: set CLICKHOUSE_URL or put clickhouse-server on PATH for the inserts')
  process.exit(0)
}
try {
  const options = { url: ch.url, database: ch.database(`skylark_insert_bench_${Date.now().toString(36)}`), user: 'default', password: '', cluster: ch.cluster }
  const sink = new ClickHouseEventSink(options, await migrateClickHouse(options))
  await ch.stopMerges(options.database)
  // ClickHouse's CPU from /proc when it runs here; an external server's is not ours to read.
  const clickhouseCpuMs = () => (ch.pids.length > 0 ? ch.pids.reduce((sum, pid) => sum + processCpuSeconds(pid) * 1000, 0) : null)
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
  const disk = await ch.partBytes(options.database)
  console.log(`on disk: ${Math.round(disk.compressed / disk.rows)} bytes a row compressed (${Math.round(disk.uncompressed / disk.rows)} uncompressed)`)
} finally {
  await ch.destroy()
}

/** One server (bench/lib/servers.mjs), or null when there is none. */
function singleOf(server) {
  if (!server) return null
  const stopMerges = (db) => server.query(`SYSTEM STOP MERGES ${db}.events`)
  const partBytes = async (db) => JSON.parse(await server.query(partsSql(db, 'events')))
  return { url: server.url, cluster: null, pids: server.pid ? [server.pid] : [], database: server.database, stopMerges, partBytes, destroy: server.destroy }
}

/** Two shards and ZooKeeper (scripts/clickhouse-cluster.mjs), merges stopped on both. */
function clusterOf(cluster) {
  return {
    url: cluster.url,
    cluster: CLUSTER,
    pids: cluster.pids,
    database: (name) => name,
    stopMerges: (db) => Promise.all(cluster.servers.map((_, i) => cluster.query(`SYSTEM STOP MERGES ${db}.events_local`, i))),
    partBytes: async (db) => {
      const shards = await Promise.all(cluster.servers.map(async (_, i) => JSON.parse(await cluster.query(partsSql(db, 'events_local'), i))))
      return Object.fromEntries(['rows', 'compressed', 'uncompressed'].map((k) => [k, shards.reduce((sum, s) => sum + s[k], 0)]))
    },
    destroy: () => cluster.destroy(),
  }
}

function partsSql(db, table) {
  // Float64 sums: JSONEachRow quotes 64-bit integers.
  return `SELECT toFloat64(sum(rows)) AS rows, toFloat64(sum(data_compressed_bytes)) AS compressed, toFloat64(sum(data_uncompressed_bytes)) AS uncompressed
    FROM system.parts WHERE active AND database = '${db}' AND table = '${table}' FORMAT JSONEachRow`
}
