/**
 * Experiment metrics give the same per-variant sums on SQLite and on ClickHouse (the CI's 18.16): random
 * queries of the shapes the runner builds (src/experiments/query/metric.ts and runner.ts: means of every source
 * math, ratios, funnels of each order, retention from an event or the exposure; windows, winsorisation, thresholds,
 * CUPED, matured users, group entities, both multiple-variant handlings, activation, event, person and group
 * breakdowns, step filters, HogQL math on event and person properties) over random events whose times collide on a 500 ms grid, whose amounts take the
 * shapes that told the stores apart before (texts with spaces or signs, `1e3`, `n/a`, booleans, nulls, missing),
 * and whose persons have one or two distinct ids. Both stores must answer alike, or refuse alike; the sums are
 * compared to 1e-9 of their size, as each store adds in an order of its own.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { propertyFilters } from '../../../src/experiments/metrics.js'
import type { EventRow, ExperimentBreakdown, ExperimentVariantsQuery, FunnelStep, PersonProperty, PropertyNode, PropertyPath, SourceMath } from '../../../src/storage/events/index.js'
import { SESSION_PROPERTIES } from '../../../src/storage/events/experiment-types.js'
import { hogqlProperties, parseHogqlMath } from '../../../src/storage/events/hogql-math.js'
import { sourceFields, sourceProperties } from '../../../src/storage/events/experiment-rows.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { asSet, bothEventStores } from '../../helpers/event-stores.js'
import { Rng } from './rng.js'
import { fuzzRun } from './run.js'

const TEAM = 11
const { seed: SEED, cases: CASES, only: ONLY } = fuzzRun(120)

const T0 = Date.parse('2024-06-01T00:00:00Z')
const MINUTE = 60_000
const PERSONS = 36
const EVENTS = ['clicked', 'viewed', 'purchased', '$pageview', '$autocapture', '$screen']
const MISSING = Symbol('missing')
/** Numbers and texts of them; sums of the decimal ones differ in their last bits by the order of adding (compared to 1e-9). */
const AMOUNTS: unknown[] = [0, 1, 2.5, -0.5, 3, 8, 100, 0.1, 19.99, '2.53', '3', ' 3', '+5', '-2.5', '1e3', 'n/a', '', null, true, MISSING]
const BROWSERS: unknown[] = ['Chrome', 'Safari', 42, '', null, MISSING]
const person = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`

function withProperties(into: Record<string, unknown>, values: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(values)) if (v !== MISSING) into[k] = v
  return into
}

/** The events of every person: flag calls (some of another flag or variant), then metric events around them. */
function rows(rng: Rng): EventRow[] {
  const out: EventRow[] = []
  for (let n = 0; n < PERSONS; n++) {
    const ids = rng.chance(0.3) ? [`d-${n}`, `d-${n}-b`] : [`d-${n}`]
    const org = rng.chance(0.8) ? `org-${rng.int(6)}` : ''
    const add = (event: string, at: number, properties: Record<string, unknown>) =>
      out.push({
        uuid: randomUUID(),
        team_id: TEAM,
        event,
        distinct_id: rng.pick(ids),
        person_id: person(n),
        properties: JSON.stringify(properties),
        timestamp: at,
        created_at: at,
        // Now and then an event of another organisation than the person's.
        groups: [rng.chance(0.1) ? `org-${rng.int(6)}` : org, '', '', '', ''],
        elements_chain: '',
      })
    const grid = (from: number, span: number) => from + rng.int(span / 500) * 500
    const exposed = grid(T0, 40 * MINUTE)
    const calls = rng.weighted([[1, 0], [6, 1], [2, 2], [1, 3]])
    for (let c = 0; c < calls; c++) {
      const at = c === 0 ? exposed : grid(exposed - 5000, 20_000)
      const flag = rng.chance(0.9) ? 'f' : 'g'
      add('$feature_flag_called', at, withProperties({ $feature_flag: flag }, { $feature_flag_response: rng.pick(['control', 'test', 'control', 'test', 'other', MISSING]), $browser: rng.pick(BROWSERS), plan: rng.pick(['pro', 'free', MISSING]) }))
    }
    const sessions = [`s${rng.int(4)}`, `p${n}`]
    for (let e = rng.range(2, 12); e > 0; e--) {
      const at = rng.chance(0.15) ? grid(exposed - 30_000, 30_000) : grid(exposed, 60_000)
      // `order` for HogQL's paths: an object of an amount, of another object, a text that looks like one.
      const order = rng.pick<unknown>([withProperties({}, { total: rng.pick(AMOUNTS) }), { total: { n: 1 } }, '{"total":3}', MISSING])
      add(rng.pick(EVENTS), at, withProperties({}, { amount: rng.pick(AMOUNTS), $session_id: rng.pick([...sessions, sessions[1], '', MISSING]), $current_url: rng.pick(['https://a.test/1', 'https://a.test/2', '', 42, MISSING]), plan: rng.pick(['pro', 'free', MISSING]), order }))
    }
  }
  return out
}

const HOGQL = ['sum(properties.amount * 2 + 1)', "avg(if(properties.plan = 'pro', properties.amount, -1))", 'count(toFloat(properties.amount))', 'max(properties.amount / 2)', 'min(coalesce(properties.amount, 7))', 'properties.amount', "count(properties.$session_id)", 'sum(abs(properties.amount) - floor(properties.amount))', 'sum(properties.order.total)', "avg(round(properties.order['total'] * properties.amount, 1))", "sum(if(event = 'purchased', properties.amount, 0))", "count(if(distinct_id like '%1%', event, null))", 'uniq(properties.plan)', 'count(distinct round(properties.amount))', "countIf(properties.amount > 2 or event = 'viewed')", 'median(properties.amount)', 'quantile(0.25)(properties.amount * 2)', 'quantileExactLow(0.5)(properties.amount)', "quantileExactInclusiveIf(0.3)(properties.order.total, properties.plan = 'pro')", 'any(properties.amount)', "sumIf(properties.amount, properties.plan = 'pro')", "avgIf(properties.amount * 2, event != 'viewed')", 'minIf(properties.amount, properties.amount > 1)', "maxIf(properties.order.total, properties.plan != 'pro')", "uniq(substring(properties.plan, 2, -1))", 'uniqIf(properties.plan, properties.amount > 1)']

/** HogQL math on person properties, alone or beside the event's. */
const PERSON_HOGQL = ['sum(person.properties.ltv)', "avg(if(person.properties.plan = 'pro', properties.amount, 0))", 'count(distinct person.properties.plan)', 'sumIf(person.properties.ltv * properties.amount, person.properties.plan != properties.plan)', 'max(person.properties.ltv.usd)', 'any(coalesce(person.properties.ltv, properties.amount))']

/**
 * A person property's texts as the runner resolves them (PersonProperty): each person's text with its distinct
 * ids, now and then a person without it or an id of no person.
 */
function personProperty(rng: Rng, path: PropertyPath): PersonProperty {
  const byText = new Map<string, string[]>()
  for (let n = 0; n < PERSONS; n++) {
    if (rng.chance(0.15)) continue
    const text = path[0] === 'plan' ? ['pro', 'free', 'team'][n % 3] : rng.pick(['12.5', String(n), '-3', 'n/a', '1e3', ' 4', 'true'])
    byText.set(text, [...(byText.get(text) ?? []), ...[`d-${n}`, `d-${n}-b`].filter(() => rng.chance(0.9))])
  }
  return { path, values: [...byText].map(([text, ids]) => ({ text, ids })) }
}

function personMath(rng: Rng): SourceMath {
  const hogql = parseHogqlMath(rng.pick(PERSON_HOGQL))
  return { kind: 'hogql', hogql, persons: hogqlProperties(hogql.expr, 'person').map((path) => personProperty(rng, path)) }
}

function sourceMath(rng: Rng, mean: boolean): SourceMath {
  return rng.weighted<() => SourceMath>([
    [3, () => ({ kind: 'count' })],
    [4, () => ({ kind: rng.pick(['sum', 'avg', 'min', 'max'] as const), property: 'amount' })],
    [2, () => ({ kind: 'distinct', key: rng.pick(['$session_id', 'person', '$group_0'] as const) })],
    [1, () => ({ kind: 'any' })],
    [2, () => ({ kind: 'hogql', hogql: parseHogqlMath(rng.pick(HOGQL)) })],
    [1, () => personMath(rng)],
    [mean ? 2 : 0, () => ({ kind: 'session', sessionProperty: rng.pick(SESSION_PROPERTIES), aggregation: rng.pick(['sum', 'avg', 'min', 'max', 'distinct'] as const) })],
  ])()
}

/** A condition of a step or the exposure: an event property, or a person or group filter as the runner resolves it. */
function condition(rng: Rng): PropertyNode {
  return rng.weighted<() => PropertyNode>([
    [4, () => propertyFilters([{ ...rng.pick([
      { key: 'plan', operator: 'exact', value: 'pro' },
      { key: 'amount', operator: 'gt', value: 2 },
      { key: 'amount', operator: 'is_set' },
      { key: '$current_url', operator: 'icontains', value: '/1' },
    ]), type: 'event' }])[0]],
    // A person filter: the distinct ids of its persons (or, `excluded`, of those failing it), one id of a person at times.
    [1, () => ({ distinctIds: Array.from({ length: PERSONS }, (_, n) => n).filter(() => rng.chance(0.6)).map((n) => (rng.chance(0.8) ? `d-${n}` : `d-${n}-b`)), excluded: rng.chance(0.5) })],
    [1, () => ({ groupTypeIndex: 0, groupKeys: ['org-0', 'org-2', 'org-5'].filter(() => rng.chance(0.6)), excluded: rng.chance(0.5) })],
  ])()
}

function step(rng: Rng): FunnelStep {
  const event = rng.weighted<string | string[] | null>([[8, rng.pick(EVENTS)], [1, null], [1, [rng.pick(EVENTS), rng.pick(EVENTS)]]])
  return rng.chance(0.25) ? { event, properties: [condition(rng)] } : { event }
}

function breakdown(rng: Rng): ExperimentBreakdown {
  return rng.weighted<() => ExperimentBreakdown>([
    [3, () => rng.pick(['$browser', 'plan'])],
    // A person property's groups as the runner resolves them: distinct ids by value (an id in one group at most).
    [1, () => ({ groupTypeIndex: null, values: ['gold', 'basic'].map((text, r) => ({ text, ids: Array.from({ length: PERSONS }, (_, n) => n).filter((n) => n % 3 === r).map((n) => (rng.chance(0.8) ? `d-${n}` : `d-${n}-b`)) })) })],
    [1, () => ({ groupTypeIndex: 0, values: [{ text: 'large', ids: ['org-0', 'org-3'] }, { text: 'small', ids: ['org-1'] }] })],
  ])()
}

/** A query of a shape the runner builds (its combinations only: thresholds of means of counts and sums, CUPED where PostHog applies it, …). */
function query(rng: Rng): ExperimentVariantsQuery {
  const type = rng.weighted([[4, 'mean'], [2, 'ratio'], [3, 'funnel'], [2, 'retention']] as const)
  const variants = rng.chance(0.8) ? ['control', 'test'] : ['control', 'test', 'other']
  const exposure = { teamId: TEAM, event: '$feature_flag_called', after: T0, before: T0 + 3_600_000, properties: [...propertyFilters([{ key: '$feature_flag', operator: 'exact', value: 'f', type: 'event' }, { key: '$feature_flag_response', operator: 'exact', value: variants, type: 'event' }]), ...(rng.chance(0.15) ? [condition(rng)] : [])] }
  const window = rng.chance(0.5) ? null : rng.pick([2500, 9000, 30_000, 120_000])
  let steps: FunnelStep[]
  let sources: SourceMath[] = []
  const aggregation: ExperimentVariantsQuery['aggregation'] = { type, sources, windowMs: window, lowerPercentile: null, upperPercentile: null, ignoreZeros: false }
  let cuped = false
  if (type === 'mean') {
    sources = [sourceMath(rng, true)]
    steps = [step(rng)]
    const math = sources[0]
    if ((math.kind === 'count' || math.kind === 'sum') && rng.chance(0.4)) aggregation.threshold = rng.pick([1, 1, 2, 3])
    else {
      if (rng.chance(0.3)) aggregation.lowerPercentile = rng.pick([0.1, 0.25])
      if (rng.chance(0.3)) aggregation.upperPercentile = rng.pick([0.75, 0.9])
      aggregation.ignoreZeros = rng.chance(0.2)
      cuped = math.kind !== 'session' && rng.chance(0.3)
    }
  } else if (type === 'ratio') {
    sources = [sourceMath(rng, false), sourceMath(rng, false)]
    steps = [step(rng), step(rng)]
  } else if (type === 'funnel') {
    steps = Array.from({ length: rng.range(1, 4) }, () => step(rng))
    aggregation.funnelOrder = rng.pick(['ordered', 'unordered', 'strict'] as const)
    if (rng.chance(0.15)) aggregation.windowMs = 0
    cuped = aggregation.funnelOrder !== 'unordered' && rng.chance(0.3)
  } else {
    const fromExposure = rng.chance(0.3)
    const unit = rng.pick(['second', 'minute', 'hour', 'day'] as const)
    const start = rng.int(3)
    const end = start + rng.int(unit === 'second' ? 30 : 3)
    aggregation.retention = {
      startHandling: fromExposure ? 'first_seen' : rng.pick(['first_seen', 'last_seen']),
      unit,
      start,
      end,
      startBefore: T0 + rng.pick([3_600_000, 1_800_000]),
      completionBefore: T0 + rng.pick([7_200_000, 1_900_000]),
      maturedBy: rng.chance(0.2) ? T0 + rng.int(40) * MINUTE : null,
      offsets: [[T0 - 86_400_000, rng.pick([0, -65_000, 3_600_000])]],
    }
    if (fromExposure) aggregation.windowMs = null
    steps = fromExposure ? [{ event: exposure.event, properties: exposure.properties }, step(rng)] : [step(rng), step(rng)]
  }
  aggregation.sources = sources
  if (type !== 'retention' && aggregation.windowMs !== null && rng.chance(0.3)) aggregation.maturedBy = T0 + rng.int(40) * MINUTE
  const lookback = cuped ? rng.pick([1500, 20_000]) : 0
  if (cuped) aggregation.cupedLookbackMs = lookback
  const groups = rng.chance(0.25)
  const breakdowns = rng.chance(0.4) ? Array.from({ length: rng.range(1, 2) }, () => breakdown(rng)) : []
  const props = sourceProperties(sources)
  return {
    teamId: TEAM,
    groupTypeIndex: groups ? 0 : null,
    exposure,
    variantProperty: '$feature_flag_response',
    activation: rng.chance(0.15) ? { teamId: TEAM, event: rng.pick(EVENTS), after: T0, before: T0 + 3_600_000 } : null,
    breakdowns,
    bounce: rng.chance(0.3) ? { seconds: rng.pick([5, 10, 30]), mode: rng.pick(['count_pageviews', 'uniq_urls', 'uniq_page_screen_autocaptures'] as const) } : undefined,
    metric: {
      after: T0 - lookback,
      before: T0 + 3_600_000 + (aggregation.windowMs ?? 0),
      steps,
      valueProperties: props,
      valueFields: sourceFields(sources),
      distinctKeys: [...new Set(sources.flatMap((s) => (s.kind === 'distinct' ? [s.key] : s.kind === 'session' ? ['$session_id' as const] : [])))],
    },
    variants,
    multipleVariantHandling: groups || rng.chance(0.4) ? 'first_seen' : 'exclude',
    aggregation,
  }
}

/** Where two answers differ, numbers compared to 1e-9 of their size; null when they agree. */
function difference(a: unknown, b: unknown, path = ''): string | null {
  if (typeof a === 'number' && typeof b === 'number') {
    return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)) ? null : `${path}: ${a} against ${b}`
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${path}: ${a.length} items against ${b.length}`
    for (let i = 0; i < a.length; i++) {
      const d = difference(a[i], b[i], `${path}[${i}]`)
      if (d !== null) return d
    }
    return null
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => (a as Record<string, unknown>)[k] !== undefined || (b as Record<string, unknown>)[k] !== undefined)
    for (const k of keys) {
      const d = difference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`)
      if (d !== null) return d
    }
    return null
  }
  return Object.is(a, b) ? null : `${path}: ${JSON.stringify(a)} against ${JSON.stringify(b)}`
}

async function answer<T>(read: () => Promise<T>): Promise<{ ok: T } | { error: string }> {
  try {
    return { ok: await read() }
  } catch (error) {
    return { error: String(error).slice(0, 300) }
  }
}

t.test(`experiment metrics under ${CASES} random queries give the same sums on both stores (FUZZ_SEED=${SEED})`, { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { sqlite, clickhouse } = await bothEventStores(t, rows(new Rng(SEED, 1_000_000)), 'skylark_experiment_stores_fuzz')
  const failures: string[] = []
  let counted = 0
  for (let i = ONLY ?? 0; i < (ONLY === null ? CASES : ONLY + 1) && failures.length < 5; i++) {
    const q = query(new Rng(SEED, i))
    const [onSqlite, onClickHouse] = [await answer(() => sqlite.experimentVariants(q)), await answer(() => clickhouse.experimentVariants(q))]
    const what = `case ${i}: ${JSON.stringify({ ...q, exposure: q.exposure.properties!.slice(2) })}`
    if ('error' in onSqlite || 'error' in onClickHouse) {
      failures.push(`${what}\n  SQLite ${JSON.stringify(onSqlite).slice(0, 300)}\n  ClickHouse ${JSON.stringify(onClickHouse).slice(0, 300)}`)
      continue
    }
    if (onSqlite.ok.variants.some((v) => v.sum !== 0)) counted++
    const d = difference(onSqlite.ok, onClickHouse.ok)
    if (d !== null) failures.push(`${what}\n  SQLite against ClickHouse at ${d}`)
    // The exposures tab's counts, of every fourth query (they read the exposure alone).
    if (i % 4 === 0) {
      const [a, b] = [await answer(() => sqlite.experimentExposures(q)), await answer(() => clickhouse.experimentExposures(q))]
      const sorted = (r: typeof a) => ('ok' in r ? asSet(r.ok) : r)
      if (JSON.stringify(sorted(a)) !== JSON.stringify(sorted(b))) failures.push(`${what}\n  exposures: SQLite ${JSON.stringify(sorted(a)).slice(0, 600)}\n  ClickHouse ${JSON.stringify(sorted(b)).slice(0, 600)}`)
    }
  }
  t.same(failures, [], `the stores agree (reproduce one: FUZZ_SEED=${SEED} FUZZ_CASE=<n>)`)
  t.ok(counted > CASES / 2 || ONLY !== null, `most queries added something up (${counted})`)
})
