/**
 * HogQL property filters (`type: "hogql"`, PostHog's `property_to_expr` parses the key) pass the same events on
 * both stores and in the action matcher: SQLite through its registered function, ClickHouse through the SQL of
 * clickhouse-hogql.ts, each as hogql-math.ts evaluates the expression. Events with texts, numbers, booleans,
 * objects, nulls and missing properties, and of several names (the `event` and `distinct_id` fields).
 */
import t from 'tap'
import { propertyFilters } from '../../../src/experiments/metrics.js'
import { propertiesHold } from '../../../src/management/actions/properties.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'

const TEAM = 4

const PROPERTIES: Record<string, Record<string, unknown>> = {
  d1: { $browser: 'Chrome', plan: 'pro', amount: 25, $current_url: 'https://x.io/pricing?a=1' },
  d2: { $browser: 'Firefox', plan: 'free', amount: '100', $current_url: 'https://x.io/PRICING' },
  d3: {},
  d4: { $browser: null, plan: 'team', amount: 0, paid: true, $current_url: 'https://x.io/docs/a_b', order: { items: { 'o"k': 'q', n: 3 }, total: '12.5' } },
  d5: { $browser: 'chrome', plan: { tier: 2 }, amount: 'n/a', paid: false, 'odd "key"': 'yes', 'back\\slash': 'b' },
}

/** Event names by distinct id (the rest are `$pageview`s), for the `event` field. */
const EVENTS: Record<string, string> = { d2: 'signed up', d4: '$autocapture', d5: "it's" }
const eventOf = (id: string) => EVENTS[id] ?? '$pageview'

const CASES: Array<[string, string[]]> = [
  ["properties.$browser = 'Chrome'", ['d1']],
  // A missing (or null) property differs from any value, as PostHog's printer writes != (ifNull(notEquals(…), 1)).
  ["properties.$browser != 'Chrome'", ['d2', 'd3', 'd4', 'd5']],
  ['properties.amount > 20', ['d1', 'd2']],
  ['properties.amount >= 0 and properties.amount < 50', ['d1', 'd4']],
  ["properties.$current_url like '%/pricing%'", ['d1']],
  ["properties.$current_url ilike '%/pricing%'", ['d1', 'd2']],
  ["properties.$current_url like '%a\\\\_b'", ['d4']],
  ["properties.$current_url not ilike '%pricing%'", ['d3', 'd4', 'd5']],
  ["properties.plan in ('pro', 'team')", ['d1', 'd4']],
  ["properties.plan not in ['pro', 'team']", ['d2', 'd3', 'd5']],
  ["properties.plan in ('pro', 'team') or properties.plan like 'f%'", ['d1', 'd2', 'd4']],
  ['properties.plan = \'{"tier":2}\'', ['d5']],
  ["properties.paid = 'true' or properties.paid = 'false'", ['d4', 'd5']],
  ['isNull(properties.$browser)', ['d3', 'd4']],
  ["coalesce(properties.$browser, 'none') = 'none'", ['d3', 'd4']],
  ['toFloat(properties.amount)', ['d1', 'd2']],
  ['if(properties.amount > 50, 1, 0) or properties.plan = \'pro\'', ['d1', 'd2']],
  ["properties.`odd \"key\"` = 'yes'", ['d5']],
  // The longest list: one IN in ClickHouse's SQL (≈8 KB), where `=`s joined by or would be ≈130 KB.
  [`properties.plan in (${Array.from({ length: 999 }, (_, i) => `'p${i}'`).join(', ')}, 'team')`, ['d4']],
  ['properties.amount in (0, 25)', ['d1', 'd4']],
  ["lower(properties.$browser) = 'chrome'", ['d1', 'd5']],
  ["startsWith(properties.$current_url, 'https://x.io/P')", ['d2']],
  // re2's search: anywhere in the text, null for a missing one; `not` keeps the nulls out, as ClickHouse's.
  ["match(properties.$current_url, '/(pricing|docs)')", ['d1', 'd4']],
  // HogQL keeps a backslash it has no escape for: `\d` reaches the regex as it is written.
  ["match(properties.amount, '^\\d+$')", ['d1', 'd2', 'd4']],
  ["not match(properties.$browser, '^[Cc]hrome$')", ['d2']],
  // The event's own fields, as texts.
  ["event = '$pageview'", ['d1', 'd3']],
  ["event != '$pageview' and properties.plan = 'free'", ['d2']],
  ["event in ('signed up', 'it\\'s')", ['d2', 'd5']],
  ["distinct_id like 'd%' and not distinct_id in ('d1', 'd3')", ['d2', 'd4', 'd5']],
  ["match(distinct_id, '^d[45]$') or startsWith(event, 'sign')", ['d2', 'd4', 'd5']],
  ["length(event) > 9", ['d4']],
  ["`distinct_id` = 'd3'", ['d3']],
  ["coalesce(properties.$browser, event) = '$autocapture'", ['d4']],
  ["if(event = '$pageview', properties.plan, distinct_id) in ('pro', 'd5')", ['d1', 'd5']],
  // toString and concat: a number written as ClickHouse writes a Float64, concat reading null as '' (PostHog's printer).
  ["toString(properties.amount + 0) = '25'", ['d1']],
  ["toString(1e21) = '1e21' and toString(-0) = '-0' and toString(1 / 0) = 'inf' and toString(0.1 + 0.2) = '0.30000000000000004'", ['d1', 'd2', 'd3', 'd4', 'd5']],
  ["concat(properties.plan, '/', event) = 'pro/$pageview'", ['d1']],
  ["concat(properties.$browser, '-', properties.amount * 2) = '-0'", ['d4']],
  ["isNull(toString(properties.$browser)) and concat(properties.$browser, 'x') = 'x'", ['d3', 'd4']],
  // toInt, as accurateCastOrNull(x, 'Int64'): a text's integer digits only, a number truncated, never −0.
  ['toInt(properties.amount) in (25, 100, 0)', ['d1', 'd2', 'd4']],
  ["toString(toInt(properties.amount * -0.01)) = '0'", ['d1', 'd4']],
  ["isNull(toInt(concat(properties.amount, '.5')))", ['d1', 'd2', 'd3', 'd4', 'd5']],
  // Int64's last values, as texts of 19 digits: …725 fits, …825 is past 2⁶³ − 1 (18.16's toInt64OrNull wraps it).
  ["toInt(concat('92233720368547757', properties.amount)) > 0", ['d1', 'd3', 'd4']],
  ["isNull(toInt(concat('92233720368547758', properties.amount)))", ['d1', 'd2', 'd5']],
  // round, ties to even (18.16's own round takes 2.5 to 3 and 25 to 30), −0 kept.
  ['round(properties.amount / 10) = 2 and round(properties.amount, -1) = 20', ['d1']],
  ["round(properties.amount / 8, 2) = 3.12 or toString(round(properties.amount * -0.01)) = '-0'", ['d1', 'd4']],
  // Paths within objects (PostHog's JSONExtractRaw(properties, 'order', 'total')); a text or a number holds no keys.
  ['properties.order.total * 2 = 25 and properties.plan.tier = 2', []],
  ['properties.order.total * 2 = 25 or properties.plan.tier = 2', ['d4', 'd5']],
  ["properties.order.items['o\"k'] = 'q' and properties['order'].items.n = 3", ['d4']],
  ["isNull(properties.order.total.x) and isNull(properties.$current_url.x) and isNull(properties.plan.tier.x)", ['d1', 'd2', 'd3', 'd4', 'd5']],
  ['least(properties.amount, 50) = 25 or greatest(properties.amount, null, -1) = 50', ['d1']],
  ["greatest(properties.plan, 'm') = 'pro'", ['d1']],
  ["multiIf(properties.amount > 50, 'big', properties.amount > 10, 'mid', 'small') = 'mid'", ['d1']],
  ["isNull(nullIf(properties.plan, 'pro')) and isNotNull(nullIf(properties.amount, 0))", ['d1']],
  ["position(properties.$current_url, '/docs') > 0 or replaceAll(lower(properties.$current_url), 'https://x.io', '') = '/pricing'", ['d2', 'd4']],
  ["trim(concat('  ', properties.plan, ' ')) = 'pro'", ['d1']],
  // HogQL's `??` (ifNull) and `c ? a : b` (if), as PostHog's parser reads them.
  ["(properties.$browser ?? properties.plan ?? event) in ('$pageview', 'team')", ['d3', 'd4']],
  // ClickHouse's names of PostHog's casts: toInt's and toFloat's readings, a narrower type's range (else NULL), -OrZero.
  ['toInt64(properties.amount) = toInt32(properties.amount) and toInt32(properties.amount) > 50', ['d2']],
  ['isNull(toInt8(properties.amount * 2))', ['d2', 'd3', 'd5']],
  ['toFloat64OrZero(properties.amount) = 0 and toUInt8(toInt64OrZero(properties.amount) - 1) is null', ['d3', 'd4', 'd5']],
  ["(properties.plan ?? 'none') = 'none' and (properties.amount > 20 ? 'big' : 'small') = 'small'", ['d3']],
  ["properties.amount > 50 ? properties.plan = 'free' : properties.amount > 20 ? 1 : 0", ['d1', 'd2']],
  ['event = 1', []],
  ['null', []],
  ['1 = 1', ['d1', 'd2', 'd3', 'd4', 'd5']],
]

const hogql = (key: string) => ({ type: 'hogql', key, value: null })

t.test('HogQL filters pass the same events on both stores and in the action matcher', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const rows = pageviewRows(TEAM, PROPERTIES).map((row) => ({ ...row, event: eventOf(row.distinct_id) }))
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_hogql_filters')
  for (const [text, want] of CASES) {
    const name = text.length > 80 ? `${text.slice(0, 77)}...` : text
    const properties = propertyFilters([hogql(text)])
    const filter = { teamId: TEAM, properties }
    t.same(await sqlite.distinctIds(filter), want, `SQLite: ${name}`)
    t.same(await clickhouse.distinctIds(filter), want, `ClickHouse: ${name}`)
    const matched = Object.keys(PROPERTIES).filter((id) => propertiesHold(properties, { event: eventOf(id), distinct_id: id, properties: PROPERTIES[id] }))
    t.same(matched, want, `action matcher: ${name}`)
  }
  // Two filters in one query, over the same property, and beside an event filter on it: aliases defined alike.
  const both = { teamId: TEAM, properties: propertyFilters([hogql('properties.amount > 20'), hogql("properties.amount in ('100')"), { key: 'amount', value: '100' }]) }
  t.same(await sqlite.distinctIds(both), ['d2'], 'SQLite: several filters')
  t.same(await clickhouse.distinctIds(both), ['d2'], 'ClickHouse: several filters')
  // visitParam (18.16) compares the key's raw text: one holding a quote or a backslash is found as JSON escapes it.
  for (const [key, value] of [['odd "key"', 'yes'], ['back\\slash', 'b']]) {
    const plain = { teamId: TEAM, properties: [{ key, operator: 'exact' as const, value }] }
    t.same(await sqlite.distinctIds(plain), ['d5'], `SQLite: the key ${key}`)
    t.same(await clickhouse.distinctIds(plain), ['d5'], `ClickHouse: the key ${key}`)
  }
})

t.test('a HogQL filter skylark cannot read is a 400 naming it', async (t) => {
  t.throws(() => propertyFilters([hogql('properties.plan')]), { code: 'invalid', detail: /^HogQL filter "properties.plan": The expression is a text, not a condition/ })
  t.throws(() => propertyFilters([hogql("pdi.person.properties.email = 'a'")]), { code: 'invalid', detail: /^HogQL filter "pdi.person.properties.email = 'a'": Unknown field "pdi"/ })
  t.throws(() => propertyFilters([hogql("person.id = 'a'")]), { code: 'invalid', detail: /Of the person, skylark reads its properties/ })
  t.throws(() => propertyFilters([hogql("timestamp > '2024-01-01'")]), { code: 'invalid', detail: /Unknown field "timestamp": skylark reads .*, event and distinct_id in HogQL filters/ })
  t.throws(() => propertyFilters([hogql("Event = 'a'")]), { code: 'invalid', detail: /Unknown field "Event"/ })
  t.throws(() => propertyFilters([hogql('count() > 2')]), { code: 'invalid', detail: /Aggregations such as count\(\) are not allowed in HogQL filters/ })
  t.throws(() => propertyFilters([{ type: 'hogql' }]), { code: 'invalid', detail: 'Every metric property filter needs a key.' })
  t.match(propertyFilters([{ type: 'hogql', key: "properties.a = 'x'", operator: 'exact', value: 'ignored' }]), [{ hogql: { op: '=' } }], 'operator and value are not read')
  t.throws(() => propertyFilters([hogql("match(properties.a, '(?=x)')")]), { code: 'invalid', detail: /match\(\)'s pattern "\(\?=x\)" is one skylark's stores can't run/ })
  t.throws(() => propertyFilters([hogql('match(properties.a, properties.b)')]), { code: 'invalid', detail: /match\(\) takes its pattern as a text literal/ })
  t.throws(() => propertyFilters([hogql("match(properties.a, 2)")]), { code: 'invalid', detail: /match\(\) takes texts, not numbers/ })
})
