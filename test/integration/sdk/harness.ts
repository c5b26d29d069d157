/**
 * Shared pieces of the SDK tests: run a suite on each event store (SQLite, and a real ClickHouse that
 * must not be skipped in CI), the project every SDK test uses (flags of each kind), a fetch that records
 * what the SDK sent and what skylark answered, and waits on the read APIs.
 */
import { createHash } from 'node:crypto'
import type { Test } from 'tap'
import { clickhouseUnavailableReason, startClickHouse, type TestClickHouse } from '../../helpers/clickhouse.js'
import { serverFor, type TestServer } from '../../helpers/server.js'

export interface StoreRun {
  store: 'sqlite' | 'clickhouse'
  server: TestServer
}

/**
 * Runs `suite` against a fresh server on SQLite, then against one on ClickHouse (a subtest skipped with
 * the reason outside CI when clickhouse-server is missing; clickhouseUnavailableReason throws in CI).
 */
export function eachStore(t: Test, suite: (t: Test, run: StoreRun) => Promise<void>): void {
  const withServer = async (t: Test, store: StoreRun['store'], env: Record<string, string>) => {
    const server = await serverFor(t, { env: { SINK_FLUSH_INTERVAL_MS: '50', ...env } })
    await setupProject(server)
    await suite(t, { store, server })
  }
  t.test('SQLite event store', (t) => withServer(t, 'sqlite', {}))
  const skip = clickhouseUnavailableReason()
  t.test('ClickHouse event store', { skip: skip ?? false }, async (t) => {
    let ch: TestClickHouse | undefined
    t.teardown(() => ch?.destroy())
    ch = await startClickHouse()
    await withServer(t, 'clickhouse', { CLICKHOUSE_URL: ch.url, CLICKHOUSE_DATABASE: 'skylark_sdk' })
  })
}

// ---------------------------------------------------------------------------------------------------
// The project: one flag of each kind an SDK reads.

export const PAYLOAD_ON = { color: 'blue' }
export const PAYLOAD_TEST = { headline: 'Try it', n: 2 }
export const PAYLOAD_REMOTE = { theme: 'dark', sizes: [1, 2] }

/** Python's json.dumps, the text PostHog stores payloads as. */
const dumps = (value: unknown) => JSON.stringify(value).replace(/":/g, '": ').replace(/,"/g, ', "')

export const FLAGS = [
  { key: 'sdk-on', filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: dumps(PAYLOAD_ON) } } },
  {
    key: 'sdk-variant',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'test', rollout_percentage: 100 }, { key: 'control', rollout_percentage: 0 }] },
      payloads: { test: dumps(PAYLOAD_TEST) },
    },
  },
  { key: 'sdk-pro', filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } },
  { key: 'sdk-off', active: false, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
  {
    key: 'sdk-company',
    filters: {
      aggregation_group_type_index: 0,
      groups: [{ properties: [{ key: 'tier', value: ['gold'], operator: 'exact', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }],
    },
  },
  { key: 'sdk-remote', is_remote_configuration: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: dumps(PAYLOAD_REMOTE) } } },
]

/** Creates a flag in the default project through the API; the created flag. */
export async function createFlag(server: TestServer, flag: Record<string, unknown>): Promise<any> {
  const res = await server.api('POST', `/api/projects/${server.boot.project_id}/feature_flags/`, flag)
  if (res.status !== 201) throw new Error(`creating ${String(flag.key)}: ${res.status} ${res.text}`)
  return res.body
}

/** An early access feature through the management API (it creates its flag unless it links one). */
export async function createFeature(server: TestServer, feature: Record<string, unknown>): Promise<any> {
  const res = await server.api('POST', `/api/projects/${server.boot.project_id}/early_access_feature/`, feature)
  if (res.status !== 201) throw new Error(`creating feature ${String(feature.name)}: ${res.status} ${res.text}`)
  return res.body
}

async function setupProject(server: TestServer): Promise<void> {
  for (const flag of FLAGS) await createFlag(server, flag)
}

/** What a user with `plan: pro`, in a gold company, gets from the server (remote evaluation). */
export function expectedFlags(opts: { pro: boolean; company: boolean }): Record<string, string | boolean> {
  return { 'sdk-on': true, 'sdk-variant': 'test', 'sdk-pro': opts.pro, 'sdk-off': false, 'sdk-company': opts.company, 'sdk-remote': true }
}

// ---------------------------------------------------------------------------------------------------
// Recording what the SDK sends.

export interface Exchange {
  method: string
  path: string
  query: string
  status: number | null
  error?: string
  contentType?: string
  contentEncoding?: string
  /** `gzip` when the body starts with gzip's magic bytes, `form`, `json` or `other`. */
  bodyKind?: string
  /** sha1 of the body, to notice a request sent twice (a retry). */
  digest?: string
  /** Body size as sent. */
  bytes?: number
}

type FetchLike = (url: any, init?: any) => Promise<any>

function headerOf(headers: unknown, name: string): string | undefined {
  if (!headers) return undefined
  if (headers instanceof Headers) return headers.get(name) ?? undefined
  for (const [k, v] of Object.entries(headers as Record<string, string>)) if (k.toLowerCase() === name) return String(v)
  return undefined
}

async function bodyBytes(body: unknown): Promise<Buffer | null> {
  if (body === undefined || body === null) return null
  if (typeof body === 'string') return Buffer.from(body)
  if (body instanceof Uint8Array) return Buffer.from(body)
  if (body instanceof ArrayBuffer) return Buffer.from(body)
  if (body instanceof Blob) return Buffer.from(await body.arrayBuffer())
  return null
}

export function kindOf(bytes: Buffer | null, contentType: string | undefined): string | undefined {
  if (!bytes) return undefined
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip'
  if ((contentType ?? '').includes('x-www-form-urlencoded') || bytes.subarray(0, 5).toString() === 'data=') return 'form'
  const first = bytes.toString('utf8').trimStart()[0]
  return first === '{' || first === '[' ? 'json' : 'other'
}

/** A fetch that forwards to the real one and appends every exchange to `log`. */
export function recordingFetch(log: Exchange[], inner: FetchLike = fetch): FetchLike {
  return async (url, init = {}) => {
    const u = new URL(String(url))
    const bytes = await bodyBytes(init.body)
    const contentType = headerOf(init.headers, 'content-type')
    const entry: Exchange = {
      method: String(init.method ?? 'GET').toUpperCase(),
      path: u.pathname,
      query: u.search,
      status: null,
      contentType,
      contentEncoding: headerOf(init.headers, 'content-encoding'),
      bodyKind: kindOf(bytes, contentType),
      digest: bytes ? createHash('sha1').update(bytes).digest('hex') : undefined,
      bytes: bytes?.length,
    }
    log.push(entry)
    try {
      const res = await inner(url, init)
      entry.status = res.status
      return res
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause
      entry.error = `${String(error)}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''} at ${new Date().toISOString()}`
      throw error
    }
  }
}

/** `POST /batch/ (gzip)` style summary lines, counted: what the report and the assertions read. */
function exchangeLine(e: Exchange): string {
  const body = e.bodyKind ? ` ${e.bodyKind}${e.contentEncoding ? ` (Content-Encoding: ${e.contentEncoding})` : ''}` : ''
  const path = e.path.replace(/^\/array\/[^/]+\//, '/array/<token>/')
  return `${e.method} ${path}${e.query.replace(/([?&])(_|token|ver|retry_count)=[^&]*/g, '$1$2=…')}${body} → ${e.status ?? e.error}`
}

/** `12× POST /batch/ gzip (Content-Encoding: gzip) → 200 [812–5120 B]` lines: what the report reads. */
export function summarise(log: readonly Exchange[]): string[] {
  const lines = new Map<string, { n: number; sizes: number[] }>()
  for (const e of log) {
    const line = exchangeLine(e)
    const entry = lines.get(line) ?? { n: 0, sizes: [] }
    entry.n++
    if (e.bytes !== undefined) entry.sizes.push(e.bytes)
    lines.set(line, entry)
  }
  return [...lines].map(([line, { n, sizes }]) => `${n}× ${line}${sizes.length ? ` [${Math.min(...sizes)}–${Math.max(...sizes)} B]` : ''}`)
}

export const CAPTURE_PATH = /^\/(e|i\/v0\/e|batch|capture|track|engage|i\/v1\/analytics\/events)\/?$/

/**
 * Every exchange answered 2xx (or 304 for definitions), none failed, and no capture body was sent twice
 * (capture bodies carry uuids and `sent_at`, so a repeat is a retry; flag requests legitimately repeat).
 */
export function assertClean(t: Test, log: readonly Exchange[], what: string): void {
  const bad = log.filter((e) => e.status === null || (e.status >= 300 && e.status !== 304))
  t.same(bad, [], `${what}: every request answered 2xx/304`)
  t.same(log.filter((e) => /retry_count=/.test(e.query)), [], `${what}: no retry_count in any query`)
  const seen = new Set<string>()
  const repeated: Exchange[] = []
  for (const e of log) {
    if (e.method !== 'POST' || !e.digest || !CAPTURE_PATH.test(e.path)) continue
    if (seen.has(e.digest)) repeated.push(e)
    seen.add(e.digest)
  }
  t.same(repeated, [], `${what}: no request was retried`)
}

// ---------------------------------------------------------------------------------------------------
// Reading back what was stored.

export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    try {
      const value = await fn()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`)
}

/** Every stored event matching the filters, once at least `expected` are there. */
export async function storedEvents(server: TestServer, filters: Record<string, string>, expected: number): Promise<any[]> {
  const base = eventsPath(server, filters)
  const count = await until(`${expected} events for ${JSON.stringify(filters)}`, async () => {
    const res = await server.api('GET', `${base}&limit=1`)
    return res.status === 200 && res.body.count >= expected ? (res.body.count as number) : undefined
  })
  return eventPages(server, base, count)
}

/**
 * The first stored event matching the filters and `match`, once there is one. Counting is not enough where the
 * events that match the filters came down different lanes: a distinct id over its spike budget has its later
 * events sent to the overflow lane, which is not ordered with the main one, so an earlier event can be stored
 * after a later one.
 */
export async function storedEventWhere(server: TestServer, filters: Record<string, string>, match: (event: any) => boolean): Promise<any> {
  const base = eventsPath(server, filters)
  return until(`an event for ${JSON.stringify(filters)} such that ${match}`, async () => {
    const res = await server.api('GET', `${base}&limit=1`)
    return res.status === 200 ? (await eventPages(server, base, res.body.count)).find(match) : undefined
  })
}

function eventsPath(server: TestServer, filters: Record<string, string>): string {
  return `/api/projects/${server.boot.project_id}/events/?${new URLSearchParams(filters)}`
}

/** All `count` events of a listing, in pages of 1,000. */
async function eventPages(server: TestServer, base: string, count: number): Promise<any[]> {
  const events: any[] = []
  for (let offset = 0; offset < count; offset += 1000) {
    const res = await server.api('GET', `${base}&limit=1000&offset=${offset}`)
    events.push(...res.body.results)
  }
  return events
}

export async function personOf(server: TestServer, distinctId: string, ready: (p: any) => boolean = () => true): Promise<any> {
  return until(`the person of ${distinctId}`, async () => {
    const res = await server.api('GET', `/api/projects/${server.boot.project_id}/persons/?distinct_id=${encodeURIComponent(distinctId)}`)
    const person = res.body?.results?.[0]
    return person && ready(person) ? person : undefined
  })
}

export async function groupOf(server: TestServer, key: string, ready: (g: any) => boolean = () => true): Promise<any> {
  return until(`the group ${key}`, async () => {
    const res = await server.api('GET', `/api/projects/${server.boot.project_id}/groups/?group_type_index=0&limit=1000`)
    const group = res.body?.results?.find((g: any) => g.group_key === key)
    return group && ready(group) ? group : undefined
  })
}

/**
 * skylark's own count of answers on the public routes (`/metrics`), by `route status`: sees requests a
 * browser does not report, such as the sendBeacon on page unload.
 */
export async function publicAnswers(server: TestServer): Promise<Record<string, number>> {
  const text = (await server.request('GET', '/metrics')).text
  const out: Record<string, number> = {}
  for (const m of text.matchAll(/^skylark_http_requests_total\{route="([^"]+)",status="(\d+)"\} (\d+)/gm)) {
    if (/^\/(e|i\/v0\/e|batch|capture|track|engage|flags|decide|array)\//.test(m[1])) out[`${m[1]} ${m[2]}`] = Number(m[3])
  }
  return out
}
