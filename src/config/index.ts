/**
 * Configuration: the only module that reads the environment. loadConfig validates every variable,
 * reports all problems in one error, and returns a deep-frozen object that main.ts passes down.
 * Imports: common/ only.
 */
import { resolve } from 'node:path'
import type { ThreadPolicy } from '../common/thread-priority.js'
import { LOG_LEVELS, VARIABLES, type Variable, type VariableName } from './variables.js'

export { VARIABLES } from './variables.js'

export type LogLevel = (typeof LOG_LEVELS)[number]

export interface Config {
  readonly http: {
    readonly host: string
    readonly port: number
    /** Base URL for links we print or return; never ends with a slash. */
    readonly siteUrl: string | null
    readonly captureMaxBytes: number
    readonly batchMaxBytes: number
    readonly decideMaxBytes: number
    readonly apiMaxBytes: number
    /** Admission control (src/http/admission.ts): requests in flight, per client address, body bytes held. */
    readonly maxInflight: number
    /** 0 = no per-client limit. */
    readonly maxInflightPerClient: number
    readonly maxBodyMemoryBytes: number
    /** Answers to POST /decide and /flags are written in batches (HttpServer.#send). */
    readonly batchAnswers: boolean
  }
  readonly dataDir: string
  readonly logLevel: LogLevel
  readonly clickhouse: {
    readonly url: string | null
    readonly database: string
    readonly user: string
    readonly password: string
    /** A cluster of `remote_servers`: events go to a Distributed table over its shards (clickhouse-schema.ts). */
    readonly cluster: string | null
  }
  readonly pool: { readonly size: number; readonly maxQueue: number }
  readonly spool: { readonly maxBytes: number; readonly segmentBytes: number; readonly fsyncIntervalMs: number }
  readonly sink: { readonly batchRows: number; readonly flushIntervalMs: number; readonly retryMaxMs: number; readonly insertSpanMs: number; readonly insertMinSpanMs: number; readonly threadPolicy: ThreadPolicy; readonly threadNice: number }
  readonly spike: { readonly burst: number; readonly ratePerSec: number }
  readonly flags: { readonly inlineMax: number }
  /** The in-memory cache of POST …/query/ answers (src/experiments/query/cached-runner.ts). */
  readonly queryCache: { readonly maxEntries: number; readonly maxBytes: number }
  /** Niceness of the embedded store's read threads (src/storage/read-thread.ts). */
  readonly readThreadNice: number
  readonly geoip: { readonly mmdbPath: string | null }
  readonly shutdownTimeoutMs: number
}

/** What the event store's ClickHouse modules take (ClickHouseOptions in src/storage/events/clickhouse-schema.ts). */
export interface ClickHouseConnection {
  readonly url: string
  readonly database: string
  readonly user: string
  readonly password: string
  readonly cluster: string | null
}

/** The event store's ClickHouse connection, or null when events go to the embedded SQLite store. */
export function clickhouseConnection(config: Config): ClickHouseConnection | null {
  const { url, ...rest } = config.clickhouse
  return url === null ? null : { url, ...rest }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
  }
}

const BYTE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }

function parseValue(variable: Variable, raw: string): { value?: unknown; problem?: string } {
  const label = `${variable.name}=${JSON.stringify(raw)}`
  switch (variable.kind) {
    case 'int':
    case 'bytes': {
      let n: number
      if (variable.kind === 'bytes') {
        const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?b?)\s*$/i.exec(raw)
        n = m ? Math.floor(Number(m[1]) * BYTE_UNITS[m[2].toLowerCase()]) : Number.NaN
      } else {
        n = /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN
      }
      if (!Number.isSafeInteger(n)) {
        return { problem: `${label}: expected ${variable.kind === 'bytes' ? 'a size such as 20MB' : 'an integer'}` }
      }
      if (variable.min !== undefined && n < variable.min) return { problem: `${label}: must be at least ${variable.min}` }
      if (variable.max !== undefined && n > variable.max) return { problem: `${label}: must be at most ${variable.max}` }
      return { value: n }
    }
    case 'url': {
      try {
        const url = new URL(raw)
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol')
        return { value: raw.replace(/\/+$/, '') }
      } catch {
        return { problem: `${label}: expected an http(s) URL` }
      }
    }
    case 'enum':
      return variable.values?.includes(raw)
        ? { value: raw }
        : { problem: `${label}: expected one of ${variable.values?.join(', ')}` }
    case 'bool':
      if (/^(1|true|yes)$/i.test(raw)) return { value: true }
      if (/^(0|false|no)$/i.test(raw)) return { value: false }
      return { problem: `${label}: expected true or false` }
    case 'string':
      return { value: raw }
    case 'identifier':
      // A ClickHouse name put into SQL as it is (clickhouse-schema.ts identifier()).
      return /^[A-Za-z_][A-Za-z0-9_]*$/.test(raw) ? { value: raw } : { problem: `${label}: expected a name of letters, digits and _` }
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

/** Reads and validates the environment; throws ConfigError listing every problem at once. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = []
  const values = new Map<VariableName, unknown>()
  for (const variable of VARIABLES as readonly Variable[]) {
    const raw = env[variable.name]
    const text = raw === undefined || raw === '' ? variable.default : raw
    if (text === undefined) {
      values.set(variable.name as VariableName, null)
      continue
    }
    const parsed = parseValue(variable, text)
    if (parsed.problem) problems.push(parsed.problem)
    else values.set(variable.name as VariableName, parsed.value)
  }
  const num = (name: VariableName) => values.get(name) as number
  const str = (name: VariableName) => values.get(name) as string
  const opt = (name: VariableName) => (values.get(name) as string | null | undefined) ?? null

  if (problems.length === 0 && num('SPOOL_SEGMENT_BYTES') > num('SPOOL_MAX_BYTES')) {
    problems.push('SPOOL_SEGMENT_BYTES must not exceed SPOOL_MAX_BYTES')
  }
  if (problems.length === 0) {
    // A body the budget can never hold would be refused with 503 forever.
    const limits = ['CAPTURE_MAX_BYTES', 'BATCH_MAX_BYTES', 'DECIDE_MAX_BYTES', 'API_MAX_BYTES'] as const
    const largest = limits.reduce((a, b) => (num(a) >= num(b) ? a : b))
    if (num('HTTP_MAX_BODY_MEMORY') < num(largest)) problems.push(`HTTP_MAX_BODY_MEMORY must be at least ${largest}`)
  }
  if (problems.length > 0) throw new ConfigError(problems)

  return deepFreeze({
    http: {
      host: str('HOST'),
      port: num('PORT'),
      siteUrl: opt('SITE_URL'),
      captureMaxBytes: num('CAPTURE_MAX_BYTES'),
      batchMaxBytes: num('BATCH_MAX_BYTES'),
      decideMaxBytes: num('DECIDE_MAX_BYTES'),
      apiMaxBytes: num('API_MAX_BYTES'),
      maxInflight: num('HTTP_MAX_INFLIGHT'),
      maxInflightPerClient: num('HTTP_MAX_INFLIGHT_PER_CLIENT'),
      maxBodyMemoryBytes: num('HTTP_MAX_BODY_MEMORY'),
      batchAnswers: values.get('HTTP_BATCH_ANSWERS') as boolean,
    },
    dataDir: resolve(str('DATA_DIR')),
    logLevel: str('LOG_LEVEL') as LogLevel,
    clickhouse: {
      url: opt('CLICKHOUSE_URL'),
      database: str('CLICKHOUSE_DATABASE'),
      user: str('CLICKHOUSE_USER'),
      password: opt('CLICKHOUSE_PASSWORD') ?? '',
      cluster: opt('CLICKHOUSE_CLUSTER'),
    },
    pool: { size: num('POOL_SIZE'), maxQueue: num('POOL_MAX_QUEUE') },
    spool: {
      maxBytes: num('SPOOL_MAX_BYTES'),
      segmentBytes: num('SPOOL_SEGMENT_BYTES'),
      fsyncIntervalMs: num('SPOOL_FSYNC_INTERVAL_MS'),
    },
    sink: {
      batchRows: num('SINK_BATCH_ROWS'),
      flushIntervalMs: num('SINK_FLUSH_INTERVAL_MS'),
      retryMaxMs: num('SINK_RETRY_MAX_MS'),
      insertSpanMs: num('CLICKHOUSE_INSERT_SPAN_MS'),
      insertMinSpanMs: num('CLICKHOUSE_INSERT_MIN_SPAN_MS'),
      threadPolicy: str('INGEST_THREAD_POLICY') as ThreadPolicy,
      threadNice: num('INGEST_THREAD_NICE'),
    },
    spike: { burst: num('SPIKE_BURST'), ratePerSec: num('SPIKE_RATE_PER_SEC') },
    flags: { inlineMax: num('FLAGS_INLINE_MAX') },
    queryCache: { maxEntries: num('QUERY_CACHE_MAX_ENTRIES'), maxBytes: num('QUERY_CACHE_MAX_BYTES') },
    readThreadNice: num('READ_THREAD_NICE'),
    geoip: { mmdbPath: opt('GEOIP_MMDB_PATH') },
    shutdownTimeoutMs: num('SHUTDOWN_TIMEOUT_MS'),
  })
}

/** The base URL clients reach us at: SITE_URL, else derived from the listening address. */
export function siteUrl(config: Config, boundPort: number): string {
  if (config.http.siteUrl) return config.http.siteUrl
  const host = config.http.host.includes(':') ? `[${config.http.host}]` : config.http.host
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${boundPort}`
}
