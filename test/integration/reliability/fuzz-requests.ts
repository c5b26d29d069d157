/**
 * Builds the HTTP fuzz's requests: for case i, a route from the server's own table, its path parameters,
 * query, headers and body, all drawn from `Rng(seed, i)`. Public routes get hostile payloads in every
 * encoding (capture v1 its own batches and PostHog-* headers, the key as Bearer); management routes get broken
 * flag, cohort, experiment and role bodies with a valid key (so they reach the domain rules) and sometimes a
 * broken one.
 */
import { randomUUID } from 'node:crypto'
import { brotliCompressSync, deflateRawSync, gzipSync } from 'node:zlib'
import type { Route } from '../../../src/http/router.js'
import { Rng } from '../../unit/fuzz/rng.js'
import { captureEvent, cohortBody, decideBody, earlyAccessFeatureBody, experimentBody, flagBody, propertyFilter, scheduledChangeBody } from '../../unit/fuzz/shapes.js'
import {
  METACHARACTERS,
  bombBodies,
  encode,
  hostileString,
  invalidUtf8,
  mutate,
  nestedJson,
  pickEncoding,
  pollutionJson,
  randomBytesBody,
  randomJson,
  truncate,
} from '../../unit/fuzz/values.js'

/** A group of the fuzz project (type index 0), which the groups writes' queries often name, so their bodies are read. */
export const FUZZ_GROUP = { type: 'company', key: 'fuzz-group' } as const
const GROUP_PROPERTY_WRITE = /\/groups\/(update|delete)_property\/$/

export interface FuzzTargets {
  /** The fuzz project: public token, id, organisation, and a personal key limited to it. */
  token: string
  projectId: number
  organizationId: string
  personalKey: string
  /** Ids of objects that exist, so path parameters often name something real. */
  ids: { flag: number[]; cohort: number[]; experiment: number[]; role: string[]; roleAccess: number[]; user: string[]; feature: string[] }
  flagKeys: string[]
}

export interface FuzzRequest {
  method: string
  path: string
  headers: Record<string, string>
  body?: Buffer
  /** Route label for the report. */
  label: string
  /** The registered route this request was built for: `<method> <pattern>`. */
  route: string
  /** Capture routes only: uuids in the body, none of which may be stored if the request is refused. */
  uuids: string[]
}

const CAPTURE = new Set(['/capture/', '/e/', '/i/v0/e/', '/track/', '/engage/', '/batch/', '/i/v1/analytics/events'])
const CAPTURE_V1 = '/i/v1/analytics/events'
const DECIDE = new Set(['/decide/', '/flags/'])
/**
 * Routes whose work grows with the stored data (they walk every person or scan events): still fuzzed, less
 * often, so the run's length does not grow with the data the run itself stores.
 */
const HEAVY = /\/(results|secondary_results|create_exposure_cohort_for_experiment|requires_flag_implementation|user_blast_radius|create_static_cohort_for_flag|events|values|related|property_definitions|property_values)\/$/
const QUERY_KEYS = [
  'limit', 'offset', 'search', 'order', 'status', 'archived', 'active', 'type', 'tags', 'created_by_id', 'distinct_id', 'groups', 'event',
  'properties', 'after', 'before', 'send_cohorts', 'id', 'group_type_index', 'page', 'token', 'v', 'config', 'compression', 'ip', '_',
  'beacon', 'data', 'evaluation_runtime', 'excluded_properties', 'api_key', 'key', 'value', 'event_name', 'is_column', 'group_key', 'stage',
  'event_type', 'names', 'ordering', 'exclude_stale', 'event_names', 'filter_by_event_names', 'is_numerical', 'is_feature_flag',
  'exclude_core_properties', 'model_name', 'record_id',
]

/** A uuid the fuzz can recognise in the store: `f0220000-…` with the case number in the last group. */
export function garbageUuid(caseIndex: number, k: number): string {
  return `f0220000-0000-4000-8000-${(caseIndex * 1024 + k).toString(16).padStart(12, '0')}`
}
const GARBAGE_UUID = /f0220000-0000-4000-8000-[0-9a-f]{12}/g

/** A header value node:http accepts (printable ASCII), short enough that the request head stays far under uWS's ≈128 KB. */
function headerValue(rng: Rng): string {
  return hostileString(rng).replace(/[^\x20-\x7e]/g, '').trim().slice(0, 4096) || 'x/y'
}

/** encodeURIComponent, which throws on lone surrogates: they become U+FFFD, as in any UTF-8 encoding. */
function percent(text: string): string {
  return encodeURIComponent(text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'))
}

/** A query value; long ones stay under uWS's ≈128 KB limit on the request head with several parameters. */
function queryValue(rng: Rng): string {
  return queryValueOfAnyLength(rng).slice(0, 16_000)
}

function queryValueOfAnyLength(rng: Rng): string {
  return rng.weighted<() => string>([
    [3, () => hostileString(rng)],
    [2, () => String(rng.pick([0, 1, 10, 100, 1000, 1001, -1, 2 ** 53, 1e308]))],
    [1, () => JSON.stringify(randomJson(rng, 2))],
    [1, () => JSON.stringify([propertyFilter(rng)])],
    [1, () => rng.pick(['true', 'false', '1', 'draft', 'running', 'complete', 'all', '-created_at', 'key', '3', '4'])],
  ])()
}

function pathParam(rng: Rng, name: string, t: FuzzTargets): string {
  const real = (): string | number => {
    switch (name) {
      case 'project_id':
        return rng.chance(0.9) ? t.projectId : '@current'
      case 'organization_id':
        return t.organizationId
      case 'role_id':
        return rng.pick(t.ids.role.length > 0 ? t.ids.role : ['none'])
      case 'feature_flag_id':
        return rng.pick(t.ids.flag)
      case 'token':
        return t.token
      case 'membership_id':
        return rng.pick(t.ids.user)
      default:
        return rng.pick([...t.ids.flag, ...t.ids.cohort, ...t.ids.experiment, ...t.ids.roleAccess, ...t.ids.feature, ...t.flagKeys.slice(0, 3)])
    }
  }
  const value = rng.chance(0.75)
    ? String(real())
    : rng.pick(['0', '-1', '999999999999999', '1e3', '0x10', '１', ' 1', '%', '..', hostileString(rng), randomUUID(), 'a'.repeat(5000)])
  return percent(value.slice(0, 16_000))
}

function buildPath(rng: Rng, route: Route, t: FuzzTargets): string {
  let path = route.pattern.replace(/:([a-z_]+)/g, (_, name: string) => pathParam(rng, name, t))
  if (rng.chance(0.03)) {
    // Odd spellings of the same route: no trailing slash, doubled slashes, dot segments.
    path = rng.pick([path.replace(/(.)\/$/, '$1'), path.replace(/\//g, '//'), `${path}./`, `/./${path.slice(1)}`, `${path}%00`])
  }
  const params: string[] = []
  if (GROUP_PROPERTY_WRITE.test(route.pattern) && rng.chance(0.7)) params.push(`group_type_index=0&group_key=${FUZZ_GROUP.key}`)
  for (let n = rng.int(4); n > 0; n--) params.push(`${rng.pick(QUERY_KEYS)}=${percent(queryValue(rng))}`)
  return params.length > 0 ? `${path}?${params.join('&')}` : path
}

/** JSON text of `value` broken in one of the ways hostile clients break it. */
function corrupt(rng: Rng, value: Record<string, unknown> | unknown[]): string | Buffer {
  const text = JSON.stringify(value)
  return rng.weighted<() => string | Buffer>([
    [10, () => text],
    [3, () => JSON.stringify(mutate(rng, value))],
    [2, () => pollutionJson(rng, Array.isArray(value) ? { batch: value } : value)],
    [1, () => truncate(rng, text)],
    [1, () => nestedJson(rng.pick([99, 100, 101, 3000, 100_000]), rng.pick(['object', 'array', 'mixed'] as const), text)],
    [1, () => invalidUtf8(rng, text)],
    [1, () => randomBytesBody(rng)],
    [1, () => JSON.stringify(randomJson(rng, 3))],
    [0.02, () => JSON.stringify({ ...value, huge: 'x'.repeat(rng.pick([900_000, 2_100_000])) })],
    [0.02, () => JSON.stringify({ ...value, many: Array.from({ length: rng.pick([10_000, 200_000]) }, (_, i) => i) })],
  ])()
}

function captureBody(rng: Rng, i: number, t: FuzzTargets): Record<string, unknown> | unknown[] {
  const token = rng.weighted<string | undefined>([[12, t.token], [1, 'phc_doesnotexist'], [1, undefined], [1, hostileString(rng)]])
  let k = 0
  const event = () => captureEvent(rng, { uuid: garbageUuid(i, k++) })
  return rng.weighted<() => Record<string, unknown> | unknown[]>([
    [4, () => ({ api_key: token, ...event() })],
    [4, () => ({ api_key: token, historical_migration: rng.chance(0.1), sent_at: rng.pick([undefined, new Date().toISOString(), 'garbage']), batch: Array.from({ length: rng.size(5, 100) }, event) })],
    [2, () => Array.from({ length: rng.range(1, 5) }, () => ({ ...event(), properties: { ...(event().properties as object), token } }))],
    [1, () => ({ $token: token, $distinct_id: hostileString(rng), $set: randomJson(rng, 2) })],
  ])()
}

/** A capture v1 batch: /batch/'s hostile events in v1's shape (every field v1 requires, most well formed). */
function captureV1Body(rng: Rng, i: number): Record<string, unknown> {
  const batch = Array.from({ length: rng.size(5, 100) }, (_, k) => {
    const { event, distinct_id: distinctId, properties } = captureEvent(rng)
    return {
      event,
      uuid: garbageUuid(i, k),
      distinct_id: typeof distinctId === 'string' ? distinctId : 'fuzz-0',
      timestamp: rng.chance(0.9) ? new Date().toISOString() : hostileString(rng),
      session_id: rng.chance(0.02) ? 7 : rng.pick([undefined, null, 'fuzz-session']),
      options: rng.pick([undefined, {}, { process_person_profile: rng.pick([false, 'true', 'maybe']) }, 'x']),
      properties,
    }
  })
  return { created_at: rng.chance(0.95) ? new Date().toISOString() : hostileString(rng), historical_migration: rng.chance(0.1), batch }
}

/** A capture v1 request: its headers (the key as Bearer) mostly right, its body broken as the others are. */
function captureV1Request(rng: Rng, i: number, t: FuzzTargets, headers: Record<string, string>, uuids: string[]): Buffer {
  Object.assign(headers, {
    authorization: rng.weighted<string>([[12, `Bearer ${t.token}`], [1, 'Bearer phc_doesnotexist'], [1, `Bearer ${headerValue(rng)}`], [1, headerValue(rng)]]),
    'content-type': 'application/json',
    'user-agent': 'posthog-node/5.70.0',
    'posthog-sdk-info': rng.chance(0.9) ? 'posthog-node/5.70.0' : headerValue(rng),
    'posthog-attempt': rng.chance(0.9) ? '1' : headerValue(rng),
    'posthog-request-id': rng.chance(0.9) ? randomUUID() : headerValue(rng),
    'posthog-request-timestamp': rng.chance(0.9) ? new Date().toISOString() : headerValue(rng),
  })
  if (rng.chance(0.05)) delete headers[rng.pick(Object.keys(headers))]
  const text = corrupt(rng, captureV1Body(rng, i))
  uuids.push(...new Set(Buffer.isBuffer(text) ? text.toString('latin1').match(GARBAGE_UUID) ?? [] : text.match(GARBAGE_UUID) ?? []))
  const raw = Buffer.isBuffer(text) ? text : Buffer.from(text)
  const encoding = rng.pick([null, 'gzip', 'gzip', 'deflate', 'br'] as const)
  if (encoding !== null) headers['content-encoding'] = encoding
  return encoding === 'gzip' ? gzipSync(raw) : encoding === 'deflate' ? deflateRawSync(raw) : encoding === 'br' ? brotliCompressSync(raw) : raw
}

function managementBody(rng: Rng, route: Route, t: FuzzTargets): Record<string, unknown> {
  const p = route.pattern
  if (p.endsWith('/role_access/')) return { role_id: rng.chance(0.7) ? rng.pick(t.ids.role.length > 0 ? t.ids.role : ['x']) : hostileString(rng) }
  if (p.endsWith('/role_memberships/')) return { user_uuid: rng.chance(0.5) ? rng.pick(t.ids.user) : hostileString(rng) }
  if (p.endsWith('/roles/')) return { name: hostileString(rng), feature_flags_access_level: rng.pick([0, 21, 37, 'x']) }
  if (p.endsWith('/user_blast_radius/')) return { condition: { properties: [propertyFilter(rng, t.ids.cohort, t.ids.flag)], rollout_percentage: 50 }, group_type_index: rng.pick([null, 0, 4, 5, 'x']) }
  if (p.endsWith('/create_static_cohort_for_flag/')) return { variant: rng.pick([null, 'v0', hostileString(rng)]) }
  if (p.includes('/persons/')) return personsBody(rng)
  if (p.includes('/groups/')) return groupsBody(rng)
  if (p.includes('/experiments/')) return experimentBody(rng, t.flagKeys)
  if (p.includes('/cohorts/')) return cohortBody(rng, t.ids.cohort)
  if (p.includes('/early_access_feature/')) return earlyAccessFeatureBody(rng, t.ids.flag, t.ids.role)
  if (p.includes('/scheduled_changes/')) return scheduledChangeBody(rng, t.ids.flag, t.ids.cohort)
  if (p.includes('/actions/')) return actionBody(rng)
  if (p.includes('/feature_flags/')) return flagBody(rng, t.ids.cohort, t.ids.flag)
  if (p.endsWith('/query/')) return queryBody(rng)
  // A body may be any JSON, null included.
  if (p.endsWith('/exports/') && rng.chance(0.5)) return { export_format: 'text/csv', export_context: { source: (queryBody(rng) as Record<string, unknown> | null)?.query } }
  return randomJson(rng, 2) as Record<string, unknown>
}

/** Bodies of the query endpoint: HogQL queries, often broken or hostile (deep, long, wrongly typed). */
function queryBody(rng: Rng): Record<string, unknown> {
  const text = rng.pick([
    'SELECT event, count() FROM events GROUP BY event ORDER BY count() DESC',
    'SELECT toDate(timestamp) AS d, uniq(distinct_id) FROM events WHERE timestamp > now() - interval 7 day GROUP BY d ORDER BY d',
    'SELECT DISTINCT properties.$browser, toStartOfWeek(timestamp) FROM events LIMIT 99999999',
    `SELECT person.properties.${rng.pick(['email', '$x', 'a.b.c'])}, person_id, today() - interval ${rng.int(1e6)} month FROM events`,
    `SELECT now() + interval ${rng.pick(['-1', '9999999', '1e308', '0.5'])} year, count() FROM events`,
    `SELECT event, median(properties.x), any(properties.x) FROM events GROUP BY event HAVING ${rng.pick(['count() > 1', "quantile(0.9)(properties.x) > '1'", hostileString(rng)])} ORDER BY count() DESC`,
    `SELECT upper(event) AS e, sum(properties.x) / count() AS r, ${rng.pick(['r * 2', 'concat(e, toString(r))', 'x + 1', hostileString(rng)])} FROM events GROUP BY event ORDER BY r / ${rng.pick(['0', 'count()', "'x'"])} DESC`,
    `SELECT toDayOfWeek(timestamp) AS d, dateDiff(${rng.pick(["'hour'", "'yy'", "'x'", 'event', hostileString(rng)])}, min(timestamp), max(timestamp)) FROM events GROUP BY d`,
    `SELECT ${rng.pick(['*', 'properties.email', 'count()', 'id, created_at', 'event'])} FROM persons WHERE ${rng.pick(['properties.email IS NOT NULL', 'is_identified = 1', "created_at > now() - interval 1 day", hostileString(rng)])}`,
    `SELECT ${hostileString(rng)} FROM events`,
    `SELECT ${rng.pick(['*', 'avg(n)', 's.d', 'any(d)', hostileString(rng)])} FROM (SELECT distinct_id AS d, count() AS n FROM events GROUP BY d ${rng.pick(['', 'LIMIT 3', hostileString(rng)])}) AS s`,
    `SELECT ${rng.pick(['*', 'key, properties.name', 'index, count()', hostileString(rng)])} FROM groups WHERE ${rng.pick(['index = 0', "key != ''", hostileString(rng)])}${rng.pick(['', ' GROUP BY index', ' ORDER BY key'])}`,
    `SELECT * FROM events WHERE ${rng.pick(['$session_id = \'x\'', 'notEmpty($group_0)', 'created_at > now() - interval 1 hour', hostileString(rng)])} LIMIT 5`,
    `SELECT properties.x FROM events WHERE ${hostileString(rng)} ORDER BY timestamp`,
    `SELECT ${rng.pick(['*', 'avg($session_duration)', 'argMax(session_id, timestamp)', 'distinct_id, $is_bounce', hostileString(rng)])} FROM sessions${rng.pick(['', ' WHERE $start_timestamp > now() - interval 7 day', ` WHERE ${hostileString(rng)}`])}`,
    `SELECT ${rng.pick(['1', 'now()', 'count()', '*', 'event', hostileString(rng)])}${rng.pick(['', ' WHERE 0', ' LIMIT 0', ` WHERE ${hostileString(rng)}`])}`,
    `SELECT count() FROM events WHERE distinct_id ${rng.pick(['IN', 'NOT IN'])} (SELECT ${rng.pick(['distinct_id', 'uuid', 'event, uuid', '*', hostileString(rng)])} FROM events${rng.pick(['', ' LIMIT 2000', ` WHERE ${hostileString(rng)}`])})`,
    `SELECT event, count() FROM events GROUP BY event UNION ${rng.pick(['ALL', 'DISTINCT', '', 'ALL ALL'])} ${rng.pick(["SELECT 'all', count() FROM events", 'SELECT 1 FROM events', `(${hostileString(rng)})`, 'SELECT * FROM persons'])}`,
    `WITH ${rng.pick(['7 AS k,', '', hostileString(rng)])} q AS (SELECT toStartOfInterval(timestamp, interval ${rng.pick(['15 minute', '0 day', '99999999999 year', '-1 hour', '1.5 week'])}) AS t, formatDateTime(t, '${rng.pick(['%F %T', '%k', '%', '%%%M'])}') AS f, count() AS n FROM events GROUP BY t, f) SELECT ${rng.pick(['*', 'sum(n)', 'k', hostileString(rng)])} FROM q`,
    `SELECT ${rng.pick(['e.event, p.properties.email', 'count()', 'properties.x', '*', 'event', hostileString(rng)])} FROM events e ${rng.pick(['', 'LEFT', 'RIGHT OUTER', 'FULL', 'CROSS', 'ANY', 'ARRAY'])} JOIN ${rng.pick(['persons p', 'events p', '(SELECT id FROM persons) p', 'groups', hostileString(rng)])} ${rng.pick(['ON e.person_id = p.id', 'ON 1', 'USING (id)', '', `ON ${hostileString(rng)}`])}${rng.pick(['', " WHERE e.timestamp > now() - interval 1 day AND p.properties.x != ''", ` WHERE ${hostileString(rng)}`])}`,
    `SELECT properties.n % ${rng.pick(['0', '3', "'x'", '-2.5'])}, intDiv(properties.n, ${rng.pick(['0', '2', 'null'])}), pow(${rng.pick(['2', '-1', '1e308'])}, properties.n), ${rng.pick(['sqrt', 'log', 'sign', 'ln', 'exp'])}(properties.n) FROM events`,
    `SELECT ${'('.repeat(rng.int(200))}1${')'.repeat(rng.int(200))} FROM events`,
    `SELECT ${Array.from({ length: 300 }, (_, i) => `properties.k${i}`).join(', ')} FROM events`,
    `SELECT event FROM events WHERE timestamp > '${hostileString(rng)}'`,
    hostileString(rng),
  ])
  return rng.pick<Record<string, unknown>>([
    { query: { kind: 'HogQLQuery', query: text } },
    { query: { kind: 'HogQLQuery', query: text }, refresh: rng.pick(['force_async', 'blocking', true, 'x']) },
    { query: { kind: 'HogQLQuery', query: rng.pick([null, 1, ['x'], { a: 1 }]) } },
    { query: { kind: 'HogQLQuery', query: text, values: { a: hostileString(rng) } } },
    { query: { kind: 'HogQLQuery', query: 'SELECT {a}, count() FROM events WHERE event IN {b} AND {filters} GROUP BY 1', values: { a: hostileString(rng), b: rng.pick([[hostileString(rng)], [], 'x', [{}], [1, null, true]]) } } },
    randomJson(rng, 2) as Record<string, unknown>,
    {
      query: { kind: 'HogQLQuery', query: rng.pick(['SELECT count() FROM events WHERE {filters}', 'SELECT {filters.dateRange.from}, {filters.dateRange.to}', 'SELECT count() FROM sessions WHERE {filters}', `SELECT 1 FROM events WHERE {filters.${hostileString(rng)}}`]) },
      filters: rng.pick([null, {}, 'x', { dateRange: { date_from: rng.pick(['-7d', 'all', '2024-01-01', '2024-13-45', hostileString(rng), 5, null]), date_to: rng.pick([null, 'dStart', hostileString(rng), ['x']]) } }, { properties: rng.pick([[], [{}], 'x']) }, { filterTestAccounts: rng.pick([true, false, 'x']) }, randomJson(rng, 2)]),
    },
  ])
}

/** Bodies of action writes: steps whose selectors, regexes, LIKE patterns and filters are often broken or hostile. */
function actionBody(rng: Rng): Record<string, unknown> {
  const text = () => rng.pick([hostileString(rng), null, '', 1, ['x'], '(', '[data-x="a"] > .b#c:nth-child(2)', '%_\\', 'a'.repeat(70_000)])
  const matching = () => rng.pick(['contains', 'regex', 'exact', null, 'x', 1])
  const filter = () => ({ key: hostileString(rng), value: rng.pick([hostileString(rng), 1, [true], null, { a: 1 }]), operator: rng.pick(['exact', 'regex', 'gt', 'is_set', 'x']), type: rng.pick(['event', 'person', undefined]) })
  const step = () => ({
    event: rng.pick([text(), '$autocapture', '$pageview']),
    url: text(),
    url_matching: matching(),
    selector: text(),
    tag_name: text(),
    text: text(),
    text_matching: matching(),
    href: text(),
    href_matching: matching(),
    properties: rng.pick([null, 'x', [1], [filter(), filter()]]),
  })
  return {
    name: rng.pick([hostileString(rng), null, '', 'x'.repeat(401)]),
    description: text(),
    tags: rng.pick([[hostileString(rng)], 'x', null]),
    steps: rng.pick([[step(), step()], 'x', null, [1], []]),
    deleted: rng.pick([true, false, 'x', null]),
    pinned_at: rng.pick([null, '', 'x', '2024-01-01T00:00:00Z']),
  }
}

/** Bodies of the persons writes: their fields, often of the wrong type or size. */
function personsBody(rng: Rng): Record<string, unknown> {
  const ids = () => rng.pick([[randomUUID()], [hostileString(rng)], 'x', Array.from({ length: 1001 }, () => randomUUID()), [], null])
  return rng.pick([
    { ids: ids(), delete_events: rng.pick([true, 'false', 0, [], null]) },
    { distinct_ids: ids(), ids: ids() },
    { key: rng.pick([hostileString(rng), 1, null]), value: rng.pick([hostileString(rng), null, { a: 1 }, 0]) },
    { $unset: rng.pick([hostileString(rng), 1, null, ['k']]) },
    { properties: rng.pick([{ plan: hostileString(rng) }, null, 'x', [1], {}, randomJson(rng, 2)]) },
    { main_distinct_id: rng.pick([hostileString(rng), '', 1, null, ['k']]), distinct_ids_to_split: rng.pick([undefined, ids()]) },
  ])
}

/** Bodies of the groups writes: a group to create, a property to set or remove, often of the wrong type or size. */
function groupsBody(rng: Rng): Record<string, unknown> {
  const key = () => rng.pick([hostileString(rng), `fuzz-${rng.int(1000)}`, 'k'.repeat(401), 'a\u0000b', 1, null, true, ['k']])
  return rng.pick([
    { group_type_index: rng.pick([0, 1, 4, 5, -1, 2 ** 31, '0', '1.0', 'x', null, true]), group_key: key(), group_properties: rng.pick([{ plan: hostileString(rng) }, null, [], [1], 'x', randomJson(rng, 2)]) },
    { key: key(), value: rng.pick([hostileString(rng), null, { a: 1 }, 0, false]) },
    { $unset: rng.pick([hostileString(rng), 'name', 1, null, ['k']]) },
  ])
}

type RouteGroup = 'capture' | 'decide' | 'management' | 'other'

function groupOf(r: Route): RouteGroup {
  if (CAPTURE.has(r.pattern)) return 'capture'
  if (DECIDE.has(r.pattern)) return 'decide'
  return r.pattern.startsWith('/api/') && r.pattern !== '/api/schema/' ? 'management' : 'other'
}

/** One case in this many takes the next route of the table in turn (≥ 10 each in 50,000 cases for up to 250 routes). */
const ROUND_EVERY = 20

/** The request for fuzz case `i`. */
export function fuzzRequest(seed: number, i: number, routes: readonly Route[], t: FuzzTargets): FuzzRequest {
  const rng = new Rng(seed, i)
  const fuzzed = routes.filter((r) => r.method !== 'options')
  let kind = rng.weighted<RouteGroup>([[40, 'capture'], [20, 'decide'], [35, 'management'], [5, 'other']])
  let route = rng.weighted(fuzzed.filter((r) => groupOf(r) === kind).map((r) => [HEAVY.test(r.pattern) ? 0.2 : 1, r] as const))
  if (i % ROUND_EVERY === ROUND_EVERY - 1) {
    // This case goes round the whole table instead: every route's share stays above the test's floor as routes are added.
    route = fuzzed[Math.floor(i / ROUND_EVERY) % fuzzed.length]!
    kind = groupOf(route)
  }
  let method = route.method.toUpperCase()
  if (rng.chance(0.03)) method = rng.pick(['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'])
  let path = buildPath(rng, route, t)
  const headers: Record<string, string> = {}
  let body: string | Buffer | undefined
  const uuids: string[] = []

  if (route.pattern === CAPTURE_V1 && method === 'POST') {
    body = rng.chance(0.015) ? rng.pick(bombBodies()) : captureV1Request(rng, i, t, headers, uuids)
  } else if (kind === 'capture' || kind === 'decide') {
    const json = method === 'GET' && rng.chance(0.7) ? JSON.stringify(kind === 'capture' ? captureBody(rng, i, t) : decideBody(rng, t.token)) : null
    const data = json !== null && json.length < 40_000 ? encodeURIComponent(Buffer.from(json).toString('base64')) : null
    if (data !== null) {
      // uWS closes the connection, without an answer, on a request line and headers over ≈128 KB.
      path += `${path.includes('?') ? '&' : '?'}data=${data}`
    } else if (rng.chance(0.015)) {
      body = rng.pick(bombBodies())
      headers['content-type'] = rng.pick(['text/plain', 'application/x-www-form-urlencoded'])
      if (rng.chance(0.5)) headers['content-encoding'] = 'gzip'
    } else {
      const payload = kind === 'capture' ? captureBody(rng, i, t) : decideBody(rng, t.token)
      const text = corrupt(rng, payload)
      const encoded = encode(text, pickEncoding(rng, text.length))
      body = encoded.body
      Object.assign(headers, encoded.headers)
      if (encoded.query) path += `${path.includes('?') ? '&' : '?'}${encoded.query}`
      if (kind === 'capture') uuids.push(...new Set(Buffer.isBuffer(text) ? text.toString('latin1').match(GARBAGE_UUID) ?? [] : text.match(GARBAGE_UUID) ?? []))
    }
    if (rng.chance(0.05)) headers['content-type'] = headerValue(rng)
    if (rng.chance(0.05)) headers['content-encoding'] = rng.pick(['br', 'deflate', 'gzip, gzip', 'identity', 'x'])
    if (rng.chance(0.1)) headers['x-forwarded-for'] = rng.pick(['1.2.3.4', '::1', '999.1.1.1', 'garbage, 8.8.8.8', METACHARACTERS[rng.int(8)]])
  } else if (kind === 'management') {
    headers.authorization = rng.weighted<string>([
      [18, `Bearer ${t.personalKey}`],
      [1, `Bearer phx_${headerValue(rng).replace(/ /g, '')}`],
      [1, rng.pick(['', 'Bearer', 'Basic abc', `bearer ${t.personalKey} extra`, 'Bearer ' + 'x'.repeat(10_000)])],
    ])
    if (method !== 'GET' && method !== 'DELETE' && rng.chance(0.95)) {
      body = corrupt(rng, managementBody(rng, route, t))
      headers['content-type'] = 'application/json'
    } else if (rng.chance(0.03)) {
      body = randomBytesBody(rng)
    }
  } else if (rng.chance(0.2)) {
    body = corrupt(rng, randomJson(rng, 2) as Record<string, unknown>)
  }
  if (rng.chance(0.02)) headers['x-request-id'] = rng.pick(['ok-id', 'x'.repeat(100), 'with space', '../../'])
  if (rng.chance(0.02)) headers.origin = rng.pick(['https://example.com', 'null', headerValue(rng)])
  return { method, path, headers, body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body), label: `${method} ${route.pattern}`, route: `${route.method} ${route.pattern}`, uuids }
}

export interface ValidEvent {
  uuid: string
  event: string
  distinct_id: string
}

/** Strings a valid event may carry and get back unchanged: no NUL, no lone surrogates, at most 200 characters. */
const SAFE = METACHARACTERS.filter((s) => !/[\u0000\ud800-\udfff]/.test(s) || s === '😀')

/**
 * A valid capture for the control project, in any route, shape and encoding, with metacharacters in the
 * name, the distinct id and the properties. Every one must be answered 200 and stored exactly once.
 */
export function validRequest(seed: number, i: number, token: string): { request: FuzzRequest; events: ValidEvent[] } {
  const rng = new Rng(seed ^ 0x7a11d, i)
  const route = rng.pick(['/capture/', '/e/', '/i/v0/e/', '/track/', '/batch/'])
  const events = Array.from({ length: route === '/batch/' ? rng.range(1, 20) : 1 }, (_, k) => ({
    uuid: `a1a10000-0000-4000-8000-${(i * 32 + k).toString(16).padStart(12, '0')}`,
    event: `valid ${rng.pick(SAFE)}`,
    distinct_id: `v-${rng.pick(SAFE)}-${rng.int(50)}`,
  }))
  const body = (e: ValidEvent) => ({ ...e, timestamp: new Date().toISOString(), properties: { note: rng.pick(SAFE), nested: { deep: [rng.pick(SAFE), 1, null] }, $lib: 'fuzz' } })
  const payload =
    route === '/batch/'
      ? { api_key: token, batch: events.map((e) => ({ ...body(e), properties: { ...body(e).properties, distinct_id: e.distinct_id } })) }
      : route === '/i/v0/e/'
        ? [{ ...body(events[0]), properties: { ...body(events[0]).properties, token } }]
        : { api_key: token, ...body(events[0]) }
  const text = JSON.stringify(payload)
  const encoded = encode(text, pickEncoding(rng, text.length))
  return {
    request: { method: 'POST', path: `${route}${encoded.query ? `?${encoded.query}` : ''}`, headers: encoded.headers, body: encoded.body, label: `valid ${route}`, route: `post ${route}`, uuids: [] },
    events,
  }
}
