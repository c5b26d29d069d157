/**
 * Every environment variable skylark reads, with its type, default and meaning. The README's
 * configuration table is checked against this list by a test, so adding a variable here without
 * documenting it fails the suite.
 */
import { THREAD_POLICIES } from '../common/thread-priority.js'

export type VariableKind = 'int' | 'bytes' | 'string' | 'url' | 'enum' | 'bool' | 'identifier'

export interface Variable {
  name: string
  kind: VariableKind
  /** Textual default as a user would write it; undefined = unset. */
  default?: string
  min?: number
  max?: number
  values?: readonly string[]
  description: string
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

export const VARIABLES = [
  { name: 'PORT', kind: 'int', default: '8000', min: 0, max: 65535, description: 'TCP port to listen on (0 picks a free port).' },
  { name: 'HOST', kind: 'string', default: '127.0.0.1', description: 'Address to listen on.' },
  { name: 'DATA_DIR', kind: 'string', default: './data', description: 'Folder for SQLite databases, the spool and the dead-letter store.' },
  { name: 'SITE_URL', kind: 'url', description: 'Public base URL used in pagination links and printed curl examples. Default: http://HOST:PORT.' },
  { name: 'LOG_LEVEL', kind: 'enum', default: 'info', values: LOG_LEVELS, description: 'Minimum level of the JSON logs on stdout.' },
  { name: 'CLICKHOUSE_URL', kind: 'url', description: 'ClickHouse HTTP endpoint (e.g. http://127.0.0.1:8123). Unset: events go to SQLite (DATA_DIR/events.db).' },
  { name: 'CLICKHOUSE_DATABASE', kind: 'identifier', default: 'skylark', description: 'ClickHouse database, created when missing.' },
  { name: 'CLICKHOUSE_USER', kind: 'string', default: 'default', description: 'ClickHouse user.' },
  { name: 'CLICKHOUSE_PASSWORD', kind: 'string', description: 'ClickHouse password (empty when unset).' },
  {
    name: 'CLICKHOUSE_CLUSTER',
    kind: 'identifier',
    description:
      "A cluster of the server's remote_servers (with ZooKeeper for ON CLUSTER DDL): events go to a Distributed table sharded by distinct id over ReplicatedReplacingMergeTree tables on every shard. Unset: one server's ReplacingMergeTree table.",
  },
  {
    name: 'CLICKHOUSE_INSERT_SPAN_MS',
    kind: 'int',
    // 3 s rather than 1: ClickHouse merged no parts during /batch/ load (0.19–0.25 cores against 0.31–0.42),
    // and the consumer stored ≈10 % more (eight of nine alternated pairs for /batch/ 100 and for 1,000),
    // for ≈10 MB more of ClickHouse's memory. 5 s stored no more and doubled it (≈960 MB against ≈500).
    default: '3000',
    min: 0,
    // Well under the client's 60 s request timeout, which an open INSERT counts against.
    max: 10000,
    description: 'While the consumer is behind, one ClickHouse INSERT takes the batches of up to this long, or of 65,536 rows or 192 MB (one large part instead of one per batch); 0 = one INSERT per batch.',
  },
  {
    name: 'CLICKHOUSE_INSERT_MIN_SPAN_MS',
    kind: 'int',
    // Each INSERT makes a part, and 18.16 merges a stream of small ones again and again (a part of /capture/'s
    // rows reached merge level 9 in 12 s): with 250 ms, ClickHouse took 0.26–0.38 cores under /capture/
    // against 0.35–0.51, its merges 0.11–0.18 against 0.26–0.37, for ≈250 ms more from acknowledgement to
    // visible in the events API (docs/performance-rounds.md, "Round `…b49dddbaa4`").
    default: '250',
    min: 0,
    max: 10000,
    description: 'While the consumer keeps up and events keep arriving, one ClickHouse INSERT takes the batches of at least this long before its rows become visible (at most one part per this long instead of one per batch; only with CLICKHOUSE_INSERT_SPAN_MS above 0); 0 = one INSERT per batch.',
  },
  { name: 'POOL_SIZE', kind: 'int', default: '1', min: 0, max: 64, description: 'Worker threads for parsing capture bodies over 256 KB and flag sets over FLAGS_INLINE_MAX, started by the first such task (0 = everything on the main thread).' },
  { name: 'POOL_MAX_QUEUE', kind: 'int', default: '256', min: 1, description: 'Tasks that may wait for a worker before requests get 503.' },
  { name: 'CAPTURE_MAX_BYTES', kind: 'bytes', default: '2MB', min: 1024, description: 'Body limit of /capture/, /e/, /i/v0/e/, /track/, /engage/.' },
  { name: 'BATCH_MAX_BYTES', kind: 'bytes', default: '20MB', min: 1024, description: 'Body limit of /batch/ (also the limit of a decompressed body).' },
  { name: 'DECIDE_MAX_BYTES', kind: 'bytes', default: '1MB', min: 1024, description: 'Body limit of /decide/ and /flags/.' },
  { name: 'API_MAX_BYTES', kind: 'bytes', default: '1MB', min: 1024, description: 'Body limit of the management API.' },
  { name: 'HTTP_MAX_INFLIGHT', kind: 'int', default: '1024', min: 1, description: 'Requests in flight at once (arrived, not yet answered); more get 503 with Retry-After. Probes are never refused.' },
  { name: 'HTTP_MAX_INFLIGHT_PER_CLIENT', kind: 'int', default: '512', min: 0, description: 'Requests in flight from one client address; more get 429 with Retry-After (0 = no limit; behind a proxy every client has its address).' },
  { name: 'HTTP_MAX_BODY_MEMORY', kind: 'bytes', default: '64MB', min: 1024, description: 'Request body bytes held in memory at once; past it requests get 503 with Retry-After. At least the largest body limit.' },
  { name: 'HTTP_BATCH_ANSWERS', kind: 'bool', default: 'true', description: 'Write answers to POST /decide and /flags in batches after each turn of the event loop (fewer client wake-ups; +32 % /decide throughput under load). A client that pipelines another request behind a POST /decide then loses its connection; set false for such clients.' },
  { name: 'SPOOL_MAX_BYTES', kind: 'bytes', default: '1GB', min: 1024, description: 'Spool bytes not yet written to the event store; above it ingestion answers 503.' },
  { name: 'SPOOL_SEGMENT_BYTES', kind: 'bytes', default: '64MB', min: 4096, description: 'Size at which a spool segment file is closed and a new one started.' },
  { name: 'SPOOL_FSYNC_INTERVAL_MS', kind: 'int', default: '0', min: 0, max: 1000, description: 'Extra wait before the first synced write of an idle spool, to gather more events (0 = none; under load groups form by themselves).' },
  { name: 'SINK_BATCH_ROWS', kind: 'int', default: '10000', min: 1, description: 'Most rows written to the event store in one insert.' },
  { name: 'SINK_FLUSH_INTERVAL_MS', kind: 'int', default: '100', min: 1, description: 'Longest time a row waits in the consumer before its insert.' },
  { name: 'INGEST_THREAD_POLICY', kind: 'enum', default: 'idle', values: THREAD_POLICIES, description: "Linux scheduling policy of the ingestion consumer and insert threads. idle (SCHED_IDLE, set with util-linux's chrt): they run when a core is free, and a request thread waking takes the core from them at once. Starved by other busy processes for 0.2 s, they run under the normal policy, 5 nicer than the request thread, for 5 s at a time; behind the front by 16 MB of spool, at the request thread's own priority until they catch up (both need CAP_SYS_NICE; without it the log says so). other: the normal policy at INGEST_THREAD_NICE (also used when chrt is missing)." },
  { name: 'READ_THREAD_NICE', kind: 'int', default: '10', min: 0, max: 19, description: "Scheduling niceness of the embedded store's read threads (the events and persons APIs' scans, experiment results) on Linux. When the CPU is full, the thread answering /capture/ and /decide wakes ahead of a long scan: /capture/ beside a scan of 100,000 events stored 12.0 k → 14.7 k events a second while the scans slowed 1–10 % (docs/performance.md). 0 = the request thread's priority." },
  { name: 'INGEST_THREAD_NICE', kind: 'int', default: '19', min: 0, max: 19, description: 'Scheduling niceness of the ingestion consumer and insert threads under INGEST_THREAD_POLICY=other (Linux). When the CPU is full they yield to the thread answering requests, and the durable spool holds what they have not stored yet (0 = same priority). They also yield to other busy processes: with ClickHouse on the same machine, 5 keeps ingestion lag lower at about half the throughput gain.' },
  { name: 'SINK_RETRY_MAX_MS', kind: 'int', default: '30000', min: 100, description: 'Cap of the exponential backoff between failed inserts.' },
  { name: 'SPIKE_BURST', kind: 'int', default: '1000', min: 1, description: 'Events one (project, distinct_id) may send at once before the rest go to the overflow lane.' },
  { name: 'SPIKE_RATE_PER_SEC', kind: 'int', default: '100', min: 1, description: 'Sustained events per second per (project, distinct_id) before overflow.' },
  { name: 'FLAGS_INLINE_MAX', kind: 'int', default: '1000', min: 0, description: 'Projects with up to this many active flags are evaluated on the main thread; more go to the pool.' },
  { name: 'QUERY_CACHE_MAX_ENTRIES', kind: 'int', default: '1000', min: 0, description: 'Answers of POST …/query/ kept in memory for reuse (PostHog serves an experiment query from its cache for 24 hours); least recently used go first (0 = no cache: every request computes).' },
  { name: 'QUERY_CACHE_MAX_BYTES', kind: 'bytes', default: '32MB', min: 0, description: 'Bytes of JSON those kept answers may take in all; least recently used go first.' },
  { name: 'GEOIP_MMDB_PATH', kind: 'string', description: 'A GeoLite2/GeoIP2 City .mmdb to use instead of the bundled database.' },
  { name: 'SHUTDOWN_TIMEOUT_MS', kind: 'int', default: '10000', min: 0, description: 'How long SIGTERM/SIGINT waits for in-flight requests and the spool to drain.' },
] as const satisfies readonly Variable[]

export type VariableName = (typeof VARIABLES)[number]['name']
