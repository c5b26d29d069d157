/**
 * `{"kind": "HogQLQuery"}` at the query endpoint, run once against each event store: the same queries must give
 * the same rows on SQLite and on ClickHouse (18.16 included), in PostHog's HogQLQueryResponse.
 */
import type { Test } from 'tap'
import { startServer, type TestServer } from '../../helpers/server.js'
import { readUntil } from '../../helpers/wait.js'
import { waitForEvents, type StoreSetup } from '../ingestion/suite.js'

const DAY = 86_400_000

export function hogqlQuerySuite(t: Test, setup: StoreSetup): void {
  let server: TestServer
  const now = Date.now()
  // 30 events of three names over ten users, a day apart from 2024-01-01, with a price on every other one.
  const batch = Array.from({ length: 30 }, (_, i) => ({
    event: ['view', 'click', 'buy'][i % 3],
    uuid: `0190d1e2-0000-7000-8000-${String(i).padStart(12, '0')}`,
    timestamp: new Date(Date.UTC(2024, 0, 1) + i * DAY + 123).toISOString(),
    properties: {
      distinct_id: `user-${i % 10}`,
      n: i,
      ...(i % 2 === 0 ? { price: i * 1.5 } : {}),
      plan: i < 15 ? 'free' : 'pro',
      shop: { city: i % 4 === 0 ? 'Oslo' : 'Rome' },
      // The persons of user-0 … user-3 get an email and a tier; the last $set wins (user-0's tier is gold).
      ...(i % 10 < 4 ? { $set: { email: `u${i % 10}@example.com`, tier: i % 10 === 0 && i >= 10 ? 'gold' : 'basic' } } : {}),
    },
  }))
  batch.push({ event: 'recent', uuid: '0190d1e2-0000-7000-8000-999999999999', timestamp: new Date(now - 3_600_000).toISOString(), properties: { distinct_id: 'user-x', $session_id: 's-1', $groups: { company: 'acme' } } as never })
  t.before(async () => {
    server = await startServer({ env: setup.env() })
    const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
    if (res.status !== 200) throw new Error(`batch answered ${res.status}`)
    await waitForEvents(server, 'after=2023-12-31T00:00:00Z', batch.length)
  })
  t.teardown(async () => {
    await server?.stop()
    server?.cleanup()
  })
  const query = (text: string) => server.api('POST', `/api/projects/${server.boot.project_id}/query/`, { query: { kind: 'HogQLQuery', query: text } })
  const rows = async (text: string) => {
    const res = await query(text)
    if (res.status !== 200) throw new Error(`${text}: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body.results
  }

  t.test('counts per event name, ordered by the count, as PostHog answers them', async (t) => {
    const res = await query("SELECT event, count() AS n FROM events WHERE timestamp < '2024-03-01' GROUP BY 1 ORDER BY 2 DESC, 1")
    t.equal(res.status, 200)
    t.same(res.body.results, [['buy', 10], ['click', 10], ['view', 10]])
    t.same(res.body.columns, ['event', 'n'])
    t.same(res.body.types, [['event', 'String'], ['n', 'UInt64']])
    t.match(res.body, { hasMore: false, limit: 100, offset: 0, is_cached: false, timezone: 'UTC', hogql: /^SELECT event/ })
    const twice = await rows("select event as a, event as b, count() from events where event != 'recent' group by a, b order by a")
    t.same(twice, [['buy', 'buy', 10], ['click', 'click', 10], ['view', 'view', 10]], 'one key in two columns')
    t.same(await rows("select 'all', count() from events where event = 'none'"), [['all', 0]], 'a constant beside an aggregation of no events')
    const written = "select events.event as name, count(*) as n from events as e where name != 'recent' and e.timestamp > '2023-01-01' group by events.event order by n desc nulls last, name"
    t.same(await rows(written), [['buy', 10], ['click', 10], ['view', 10]], "count(*), the table's name and alias before fields, an alias in WHERE, NULLS LAST")
    const kept = await query("select distinct_id, count() as n from events where event != 'recent' group by distinct_id having sum(properties.n) > 50 and n = 3 order by max(properties.n) desc")
    // user-k has n = k, k + 10, k + 20: sums 30 + 3k, over 50 from user-7 on.
    t.same(kept.body.results, [['user-9', 3], ['user-8', 3], ['user-7', 3]], 'HAVING over an alias and an aggregation not selected')
    t.same(kept.body.columns, ['distinct_id', 'n'], 'the hidden columns are not answered')
  })

  t.test('columns and orders over aggregations and keys, and columns reading another by its alias', async (t) => {
    const res = await query(
      "select upper(event) as name, round(sum(properties.n) / count(), 1) as mean, countIf(properties.price > 20) * 100 / count() as share from events where event != 'recent' group by event order by mean desc",
    )
    // buy: n = 2, 5 … 29, prices (even n) 3, 12, 21, 30, 39; click: 1, 4 … 28, 6 … 42; view: 0, 3 … 27, 0 … 36.
    t.same(res.body.results, [['BUY', 15.5, 30], ['CLICK', 14.5, 30], ['VIEW', 13.5, 20]])
    t.same(res.body.columns, ['name', 'mean', 'share'], 'the aggregations they read are not answered')
    t.same(res.body.types, [['name', 'Nullable(String)'], ['mean', 'Nullable(Float64)'], ['share', 'Nullable(Float64)']])
    t.same(await rows("select count() - 1 from events where event = 'none'"), [[-1]], 'over the one row of no events')
    t.same(await rows("select max(properties.n) / 0, min(properties.n) / 0 - max(properties.n) / 0 from events where event != 'recent'"), [[null, null]], 'an infinity and NaN are answered as null')
    // user-k has n = k, k + 10, k + 20: a mean of k + 10.
    t.same(await rows("select distinct_id from events where event != 'recent' group by distinct_id order by sum(properties.n) / count() desc limit 2"), [['user-9'], ['user-8']])
    t.same(await rows('select properties.n as n, n * 2 as twice from events where properties.n < 3 order by twice desc'), [[2, 4], [1, 2], [0, 0]])
    const firsts = await rows("select distinct_id, any(properties.price), any(timestamp) from events where event != 'recent' group by distinct_id order by distinct_id limit 2")
    // user-0 has n = 0, 10, 20 (prices 0, 15, 30); user-1 n = 1, 11, 21, priced none: any is the first in time not null.
    t.same(firsts, [['user-0', 0, '2024-01-01T00:00:00.123000Z'], ['user-1', null, '2024-01-02T00:00:00.123000Z']])
  })

  t.test('aggregations over properties: sums, means, extremes, distinct counts and conditions', async (t) => {
    const [row] = await rows(
      "select count(), count(properties.price), sum(properties.price), avg(properties.n), min(properties.n), max(properties.price), uniq(distinct_id), count(distinct properties.plan), countIf(properties.plan = 'pro'), sumIf(properties.n, event = 'buy') from events where event != 'recent'",
    )
    // prices 0, 3, 6 … 42 (i even, i·1.5); n 0–29; buys are i = 2, 5 … 29
    t.same(row, [30, 15, 315, 14.5, 0, 42, 10, 2, 15, 155])
    // prices 0 … 42 in steps of 3: the median the eighth of fifteen; the 0.95 quantile at index 13.3, between 39 and 42.
    const [quantiles] = await rows("select median(properties.price), quantile(0.95)(properties.price) from events where event != 'recent'")
    t.equal(quantiles[0], 21)
    t.ok(Math.abs(quantiles[1] - 39.9) < 1e-9, `the 0.95 quantile interpolated: ${quantiles[1]}`)
    const [empty] = await rows("select count(), sum(properties.price), max(properties.n), uniq(properties.n) from events where event = 'none'")
    t.same(empty, [0, null, null, 0], 'one row of no events: counts 0, the rest null')
  })

  t.test('expressions, nested properties, DISTINCT and ORDER BY with nulls last both ways', async (t) => {
    t.same(await rows("select distinct properties.shop.city as city from events where event != 'recent' order by city"), [['Oslo'], ['Rome']])
    const top = await rows("select properties.n * 2 + 1, upper(event), properties.price from events where properties.n < 4 order by properties.price desc, properties.n")
    t.same(top, [[5, 'BUY', 3], [1, 'VIEW', 0], [3, 'CLICK', null], [7, 'VIEW', null]])
    const asc = await rows('select properties.price from events where properties.n < 4 order by properties.price')
    t.same(asc, [[0], [3], [null], [null]])
    const [[whole]] = await rows('select properties from events where properties.n = 3')
    t.match(JSON.parse(whole), { distinct_id: 'user-3', n: 3, plan: 'free', shop: { city: 'Rome' } }, 'properties whole, as its JSON text')
  })

  t.test('% and intDiv bucket numbers; sqrt, pow, log2, sign and the -OrZero divisions compute as ClickHouse does', async (t) => {
    t.same(await rows("select properties.n % 3 as r, count() from events where event != 'recent' group by r order by r"), [[0, 10], [1, 10], [2, 10]])
    t.same(await rows("select intDiv(properties.n, 10) as decade, sum(properties.n) from events where event != 'recent' group by decade order by decade"), [[0, 45], [1, 145], [2, 245]])
    t.same(await rows('select sqrt(properties.n), pow(2, properties.n), log2(power(2, properties.n)), sign(properties.n - 10), intDivOrZero(properties.n, 0), properties.n % 0, -properties.n % 4 from events where properties.n = 9'), [[3, 512, 9, -1, 0, null, -1]], 'NaN of a zero divisor answered as null')
    t.same(await rows("select toUnixTimestamp(timestamp) % 86400, count() from events where event != 'recent' group by 1"), [[0, 30]], 'seconds into the UTC day')
  })

  t.test('JOINs: events with their persons, subqueries and each other; a row without a match reads its columns\' defaults', async (t) => {
    const left = "select e.distinct_id, p.properties.email from events e left join persons p on e.person_id = p.id where e.event = 'buy' and e.properties.n < 10 order by e.properties.n"
    t.same(await rows(left), [['user-2', 'u2@example.com'], ['user-5', null], ['user-8', null]], 'LEFT JOIN persons: a person without the property reads null')
    const viaJoin = await rows('select e.uuid, p.properties.email, p.properties.tier from events e left join persons p on e.person_id = p.id order by e.uuid')
    t.same(viaJoin, await rows('select uuid, person.properties.email, person.properties.tier from events order by uuid'), 'a LEFT JOIN of persons reads what person.properties reads')
    const tiers = "select p.properties.tier as tier, count() from events e join persons p on e.person_id = p.id where p.properties.tier is not null group by tier order by tier"
    t.same(await rows(tiers), [['basic', 9], ['gold', 3]], "each event's person, now (user-0's last $set made it gold)")
    const perUser = 'select s.distinct_id, s.n, p.properties.email from (select distinct_id, any(person_id) as pid, count() as n from events group by distinct_id) s join persons p on s.pid = p.id where p.properties.email is not null order by s.distinct_id'
    t.same(await rows(perUser), [0, 1, 2, 3].map((i) => [`user-${i}`, 3, `u${i}@example.com`]), 'a subquery joined with persons')
    const missing = 'select e.distinct_id, q.email, q.id from events e left join (select id, properties.email as email from persons where properties.email is not null) q on e.person_id = q.id where e.properties.n = 5'
    t.same(await rows(missing), [['user-5', null, '00000000-0000-0000-0000-000000000000']], "without a match: NULL of a Nullable column, a UUID's zero (ClickHouse's join_use_nulls = 0)")
    const full = 'select a.n, b.m from (select toFloat(properties.n) as n from events where properties.n < 3) a full outer join (select properties.n + 1 as m from events where properties.n in (1, 2)) b on a.n = b.m order by a.n, b.m'
    t.same(await rows(full), [[0, null], [1, null], [2, 2], [null, 3]], 'FULL JOIN keeps the rows of both sides')
    t.same(await rows("select count() from events e cross join (select 1 as one from events where properties.n < 2) c where e.event = 'buy'"), [[20]], 'CROSS JOIN: every pair')
    const emails = 'with j as (select e.event as ev, p.properties.email as email from events e left join persons p on e.person_id = p.id) select email, count(), uniq(ev) from j where email is not null group by email order by email'
    t.same(await rows(emails), [0, 1, 2, 3].map((i) => [`u${i}@example.com`, 3, 3]), 'a join within a query WITH names: its rows, then the query over them')
    t.same(await rows("select max(n) from (select count() as n from (select e.uuid from events e join events f on e.uuid = f.uuid where f.event = 'buy') g)"), [[10]], 'within subqueries')
    t.same(await rows("select count() from events where distinct_id in (select e.distinct_id from events e join persons p on e.person_id = p.id where p.properties.tier = 'gold')"), [[3]], 'within IN')
    t.same(await rows("select extract(properties.plan, '^(.)r') as f, replaceRegexpOne(properties.plan, '(.)(.)', '\\\\2\\\\1') as r, count() from events where properties.plan =~* '^(FREE|PRO)$' group by f, r order by f"), [['f', 'rfee', 15], ['p', 'rpo', 15]], 'regexes: the first group, a replacement with groups, =~*')
    t.same(await rows("select splitByChar('e', properties.plan)[1] as head, has(['pro', 'team'], properties.plan) as paid, count() from events where properties.plan is not null group by head, paid order by head"), [['fr', 0, 15], ['pro', 1, 15]], 'arrays: a split indexed, has() of a literal')
    const bands = "select case when properties.n < 10 then 'low' when properties.n between 10 and 19 then 'mid' else 'high' end as band, case event when 'buy' then 1 else 0 end as bought, count() from events where properties.n is not null group by band, bought order by band, bought"
    t.same(await rows("select count() from events where timestamp between '2024-01-05' and '2024-01-10' and event != 'recent'"), [[5]], 'BETWEEN of timestamp and texts: both ends kept (the 10th starts at .123 ms past midnight)')
    t.same(await rows(bands), [['high', 0, 6], ['high', 1, 4], ['low', 0, 7], ['low', 1, 3], ['mid', 0, 7], ['mid', 1, 3]], 'CASE WHEN with BETWEEN, and CASE of a subject')
    const nullish = "select properties.plan ?? 'none' as plan, properties.n >= 20 ? 'late' : 'early' as half, countDistinct(event) from events group by plan, half order by plan, half"
    t.same(await rows(nullish), [['free', 'early', 3], ['none', 'early', 1], ['pro', 'early', 3], ['pro', 'late', 3]], '?? as ifNull, c ? a : b as if (a NULL condition taking the else), countDistinct')
    const url = "concat('https://www.', properties.plan, '.io/p?utm=', event, '#top')"
    const sites = await rows(`select domainWithoutWWW(${url}) as site, extractURLParameter(${url}, 'utm') as utm, count() from events where properties.plan is not null and path(${url}) = '/p' group by site, utm order by site, utm`)
    t.same(sites, ['free', 'pro'].flatMap((plan) => ['buy', 'click', 'view'].map((utm) => [`${plan}.io`, utm, 5])), "URL functions: a domain without www, a parameter's value, a path")
    const [[...star]] = await rows("select e.*, p.properties.email from events e left join persons p on e.person_id = p.id where e.event = 'recent'")
    t.same(star, [...(await rows("select * from events where event = 'recent'"))[0], null], "e.*: the events' columns, as SELECT * of events gives them")
    const refusals: Array<[string, RegExp]> = [
      ['select properties.n from events e join persons p on e.person_id = p.id', /"properties" is in more than one joined table/],
      ['select e.event from events e join persons p using (id)', /USING id names a field of the joined table and of exactly one table before it/],
      ['select e.event from events e join persons p on e.distinct_id = p.is_identified', /ON compares a text with a number/],
      ['select * from events e join persons p on e.person_id = p.id', /SELECT \* of a join/],
      // The endpoint reads a query with the stores' regex engine, which checks each pattern (hogql-regex.ts).
      [String.raw`select replaceRegexpAll(properties.plan, '\\s*', '') from events`, /can match an empty text/],
      ['select extract(properties.plan, \'(?<=f)r\') from events', /one skylark's stores can't run/],
      ["select splitByChar('/', properties.plan) from events", /An array is read here only by the functions of arrays/],
    ]
    for (const [text, message] of refusals) {
      const res = await query(text)
      t.equal(res.status, 400, text)
      t.match(res.body, { type: 'validation_error', detail: message }, text)
    }
  })

  t.test("{filters} reads the query's date range on the table it stands in; without the placeholder filters are not read", async (t) => {
    const count = async (text: string, filters: unknown) => {
      const res = await server.api('POST', `/api/projects/${server.boot.project_id}/query/`, { query: { kind: 'HogQLQuery', query: text, filters } })
      return res.status === 200 ? res.body.results : res
    }
    const january = { dateRange: { date_from: '2024-01-05', date_to: '2024-01-08' } }
    // The events of January 5, 6 and 7 (each at .123 past midnight).
    t.same(await count('select count() from events where {filters}', january), [[3]], 'from inclusive, to exclusive, on the wall clock of the project')
    t.same(await count('select count() from events where timestamp >= {filters.dateRange.from} and timestamp < {filters.dateRange.to}', january), [[3]], 'the bounds themselves')
    t.same(await count("select count() from events e join persons p on e.person_id = p.id where {filters} and e.event = 'buy'", january), [[1]], 'in a join: the events table')
    t.same(await count('select count() from sessions where {filters}', { dateRange: { date_from: '-1d' } }), [[1]], "sessions by $start_timestamp, a relative date from now")
    t.same(await count('select count() from events where {filters}', { dateRange: { date_from: 'all' } }), [[31]], "'all' bounds nothing")
    t.same(await count("select count() from events where event = 'buy'", { ...january, properties: [{ key: 'x', value: 1 }] }), [[10]], 'a query without {filters} reads none of them, as PostHog')
    const where = (properties: unknown) => count('select count() from events where {filters}', { properties })
    t.same(await where([{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }]), [[15]], 'an event property filter')
    t.same(await where([{ key: 'email', value: 'EXAMPLE.com', operator: 'icontains', type: 'person' }]), [[12]], "a person property filter: the events' persons now")
    t.same(await where([{ key: "event = 'buy'", type: 'hogql' }, { key: 'n', value: 25, operator: 'gt' }]), [[2]], 'a HogQL filter, and filters all holding')
    t.same(await where({ type: 'OR', values: [{ key: 'n', value: 1 }, { key: 'n', value: ['2', '3'], operator: 'exact' }] }), [[3]], 'a group of OR; a list of values is IN')
    t.same(await where([{ key: 'plan', value: '^p', operator: 'regex' }, { key: 'price', operator: 'is_set' }]), [[7]], 'regex and is_set: the priced pro events (n even, 16 to 28)')
    t.same(await where([{ key: 'n', value: [3, 5], operator: 'between' }]), [[3]], 'between, inclusive')
    // The gold tier is the team's own: events of persons without a tier are kept, as PostHog's != keeps a NULL.
    const project = `/api/projects/${server.boot.project_id}/`
    t.equal((await server.api('PATCH', project, { test_account_filters: [{ key: 'tier', operator: 'is_not', value: 'gold', type: 'person' }] })).status, 200)
    t.same(await count('select count() from events where {filters}', { filterTestAccounts: true }), [[28]], "filterTestAccounts: the project's test account filters")
    t.equal((await server.api('PATCH', project, { test_account_filters: [] })).status, 200)
    const refusals: Array<[string, unknown, RegExp]> = [
      ['select count() from events where {filters}', { properties: [{ key: 'plan', value: 'pro', type: 'tree' }] }, /has type "tree"; \{filters\} reads event, person, group, cohort and hogql filters/],
      ['select count() from events where {filters}', { properties: [{ key: 'plan', value: 'pro', operator: 'semver_gt' }] }, /operator "semver_gt" is not read in \{filters\}/],
      ['select count() from sessions where {filters}', { properties: [{ key: 'plan', value: 'pro' }] }, /reads its property filters in a SELECT of the events table/],
      ['select count() from events where {filters}', { dateRange: { date_from: 'last tuesday' } }, /date_from must be an ISO 8601 date/],
      ['select count() from events where {filters}', { dateRanges: {} }, /filters.dateRanges is not one of/],
      ['select count() from persons where {filters}', january, /\{filters\} is read in a SELECT of the events, sessions or groups table/],
      ['select count() from events where timestamp < {filters.dateRange.to}', { dateRange: { date_from: '-7d' } }, /reads the query's filters.dateRange.date_to, which it does not give/],
      ['select {filters.compare} from events', january, /\{filters.compare\} is not read/],
      ['select {variables.x} from events', undefined, /SQL variables, PostHog's insight variables, are not read here/],
    ]
    for (const [text, filters, message] of refusals) t.match(await count(text, filters), { status: 400, body: { detail: message } }, text)
  })

  t.test("SELECT * reads PostHog's columns of events: created_at, the group keys, $session_id and $window_id among them", async (t) => {
    const res = await query("select * from events where event = 'recent'")
    t.equal(res.status, 200, JSON.stringify(res.body))
    const columns = ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at', '$session_id', '$window_id', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4']
    t.same(res.body.columns, columns)
    const [row] = res.body.results
    const byName = Object.fromEntries(columns.map((c, i) => [c, row[i]]))
    t.match(byName, { uuid: '0190d1e2-0000-7000-8000-999999999999', event: 'recent', distinct_id: 'user-x', elements_chain: '', $session_id: 's-1', $window_id: '', $group_0: 'acme', $group_1: '' })
    t.match(JSON.parse(byName.properties), { $session_id: 's-1', $groups: { company: 'acme' } })
    // ClickHouse 18.16 keeps created_at to the second.
    const created = Date.parse(byName.created_at)
    t.ok(created >= Math.floor(now / 1000) * 1000 && created <= Date.now(), `created_at ${byName.created_at} is when it was stored`)
    t.same(await rows("select $group_0, count() from events where notEmpty($group_0) and created_at > now() - interval 1 hour group by $group_0"), [['acme', 1]])
  })

  t.test('a query of a subquery: events per user, then their mean, sums regrouped, dates read back', async (t) => {
    t.same(await rows("select avg(n), max(n), count() from (select distinct_id, count() as n from events where event != 'recent' group by distinct_id)"), [[3, 3, 10]])
    // n = i of event i; plan free below 15 (0 + … + 14 = 105), pro from 15 (15 + … + 29 = 330).
    const regrouped = await query(
      "select s.plan, sum(total) as t from (select properties.plan as plan, distinct_id, sum(properties.n) as total from events where event != 'recent' group by plan, distinct_id) as s group by s.plan order by t desc",
    )
    t.same([regrouped.body.results, regrouped.body.types], [[['pro', 330], ['free', 105]], [['s.plan', 'Nullable(String)'], ['t', 'Nullable(Float64)']]], 'a column read whole keeps its type')
    t.same(await rows("select count() from (select distinct_id from events where event = 'buy' order by timestamp desc limit 4)"), [[4]], "the subquery's LIMIT")
    // user-k's last event is 20 + k.
    t.same(await rows("select min(t) from (select max(timestamp) as t from events where event != 'recent' group by distinct_id)"), [['2024-01-21T00:00:00.123000Z']])
    const all = await query("select * from (select event, count() from events where event != 'recent' group by event) order by 1")
    t.same([all.body.columns, all.body.types[1], all.body.results], [['event', 'count()'], ['count()', 'UInt64'], [['buy', 10], ['click', 10], ['view', 10]]])
    const named = "with 10 as pro_from, per_user as (select distinct_id, count() as n, max(properties.n) as top from events where event != 'recent' group by distinct_id) select count(), sum(n) from per_user where top >= pro_from"
    t.same(await rows(named), [[10, 30]], 'the same read through WITH, a query and an expression named')
    // ClickHouse 18.16 dropped an aggregating subquery's unread aggregations, and with them its aggregating.
    t.same(await rows("select count(), count(k) from (select 'x' as k, count() from events)"), [[1, 1]], 'a subquery aggregating without GROUP BY is one row')
    t.same(await rows("select count() from (select 1 as k, count() * 2 from events where event = 'none')"), [[1]], 'of no events too')
  })

  t.test("FROM person_distinct_ids reads persons.db's distinct ids with their persons' uuids", async (t) => {
    t.same(await rows('select count(), uniq(person_id) from person_distinct_ids'), [[11, 11]], 'user-0 … user-9 and user-x, a person each')
    const joined = "select e.event, count() from events e join person_distinct_ids d on e.distinct_id = d.distinct_id where d.person_id = e.person_id group by e.event order by e.event"
    t.same(await rows(joined), [['buy', 10], ['click', 10], ['recent', 1], ['view', 10]], "joined with the events: each event's person is its distinct id's")
  })

  t.test("person.id, person.created_at and person.is_identified are the event's person's now, as the persons table has them", async (t) => {
    const ofEvents = await rows("select distinct distinct_id, person.id, person.created_at, person.is_identified from events where event != 'recent' order by distinct_id")
    const ofPersons = await rows("select e.distinct_id, p.id, p.created_at, p.is_identified from (select distinct distinct_id, person_id from events where event != 'recent') e join persons p on e.person_id = p.id order by e.distinct_id")
    t.equal(ofEvents.length, 10)
    t.same(ofEvents, ofPersons)
    t.same(await rows("select count() from events where event != 'recent' and person.id = person_id and person.created_at <= now()"), [[30]], 'compared as a uuid and a date and time')
  })

  t.test("person_id IN COHORT reads the cohort's persons now, by id or name; {filters} reads cohort filters so", async (t) => {
    // user-0's person is the one of tier gold (3 events); user-1 … user-3 are basic.
    const created = await server.api('POST', `/api/projects/${server.boot.project_id}/cohorts/`, { name: 'Gold tier', filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [{ key: 'tier', value: 'gold', operator: 'exact', type: 'person' }] }] } } })
    t.equal(created.status, 201, JSON.stringify(created.body))
    const id = created.body.id as number
    t.same(await rows(`select distinct_id, count() from events where person_id in cohort ${id} group by distinct_id`), [['user-0', 3]])
    t.same(await rows("select count() from events where person_id not in cohort 'Gold tier'"), [[28]], 'by name, and NOT IN')
    t.same(await rows(`select countIf(person_id in cohort ${id}), count() from events`), [[3, 31]], 'in a column')
    const filtered = await server.api('POST', `/api/projects/${server.boot.project_id}/query/`, { query: { kind: 'HogQLQuery', query: 'select count() from events where {filters}', filters: { properties: [{ key: 'id', value: id, type: 'cohort', operator: 'not_in' }] } } })
    t.same(filtered.body.results, [[28]], "a cohort filter of {filters}, as PostHog's property_to_expr writes it")
    for (const [text, detail] of [
      ["select count() from events where person_id in cohort 'Nobody'", 'Could not find a cohort with the name Nobody.'],
      ['select count() from events where person_id in cohort 999999', 'The cohort filter names cohort 999999, which does not exist.'],
      [`select count() from events where distinct_id in cohort ${id}`, "IN COHORT reads person_id and a cohort's id or name here, as in person_id IN COHORT 5."],
    ]) {
      const res = await query(text)
      t.same([res.status, res.body.detail], [400, detail], text)
    }
  })

  t.test('x IN (SELECT …) reads the values of a subquery run first', async (t) => {
    // The buyers of n ≥ 25 are user-6 (26) and user-9 (29); their events are 3 each.
    t.same(await rows("select distinct_id, count() from events where distinct_id in (select distinct_id from events where event = 'buy' and properties.n >= 25) group by distinct_id order by distinct_id"), [['user-6', 3], ['user-9', 3]])
    t.same(await rows("select count() from events where event != 'recent' and distinct_id not in (select distinct_id from events where properties.n < 28)"), [[0]], 'every user sent an event before the 28th')
    t.same(await rows("select any(1.5), argMax(2, timestamp), argMin(event, timestamp) from events where event = 'none'"), [[null, null, null]], 'any, argMin and argMax of no events are NULL')
    // Only 'recent' has no plan; 15 events are on pro.
    const plans = (not: string, of: string) => rows(`select count() from events where properties.plan ${not}in (select properties.plan from events where ${of})`)
    t.same(await Promise.all([plans('', "event = 'recent' or properties.n = 20"), plans('not ', "event = 'recent' or properties.n = 20"), plans('', 'properties.n = 20')]), [[[16]], [[15]], [[15]]], "a NULL in the set holds for a NULL x, as PostHog's transform_null_in")
    const many = await query('select count() from events where uuid in (select uuid from events)')
    t.same(many.body.results, [[31]])
  })

  t.test('NULLS FIRST: the rows without a value before the others, either way', async (t) => {
    // A price on every other event: 0 at n = 0, 3 at n = 2.
    const prices = (how: string) => rows(`select toFloat(properties.price) as p from events where properties.n < 4 order by p ${how}`)
    t.same(await Promise.all([prices('desc nulls first'), prices('nulls first'), prices('desc')]), [[[null], [null], [3], [0]], [[null], [null], [0], [3]], [[3], [0], [null], [null]]])
  })

  t.test('LIMIT n BY: the first n rows of each value, in order', async (t) => {
    const top = "select event, toFloat(properties.n) as n from events where event != 'recent' order by n desc limit 2 by event"
    t.same(await rows(top), [['buy', 29], ['click', 28], ['view', 27], ['buy', 26], ['click', 25], ['view', 24]], "each event's two largest n")
    t.same(await rows(`${top} limit 4`), [['buy', 29], ['click', 28], ['view', 27], ['buy', 26]], 'then LIMIT')
    // user-0 … user-4 sent two events on free and one on pro, the others one on free and two on pro.
    const plans = "select distinct_id, properties.plan as plan, count() as c from events where event != 'recent' group by distinct_id, plan order by c desc, distinct_id limit 1 by distinct_id"
    t.same(await rows(plans), Array.from({ length: 10 }, (_, u) => [`user-${u}`, u < 5 ? 'free' : 'pro', 2]), "groups: each user's plan of most events")
  })

  t.test('(SELECT …) as a value: its one row, run first, NULL without one', async (t) => {
    const share = "select event, round(count() * 100 / (select count() from events where event != 'recent'), 2) as pct from events where event != 'recent' group by event order by event"
    t.same(await rows(share), [['buy', 33.33], ['click', 33.33], ['view', 33.33]], "each event's share of them all")
    t.same(await rows("select count() from events where properties.n > (select avg(properties.n) from events) and properties.plan = (select any(properties.plan) from events where properties.n = 29)"), [[15]], 'in WHERE: n of 15 … 29 beyond the mean 14.5, all pro')
    t.same(await rows("select (select max(properties.n) from events where event = 'none'), (select 'x') || event from events where properties.n = 3"), [[null, 'xview']], 'no row is NULL; a text (`||` is concat)')
    const two = await query('select (select event from events where properties.n < 2) from events')
    t.match(two, { status: 400, body: { type: 'validation_error', detail: /Scalar subquery returned more than one row/ } }, "more than one row, as ClickHouse's message says")
  })

  t.test('texts read as dates and times: toDateTime and parseDateTimeBestEffort of a value, NULL for a text of none', async (t) => {
    const day = "concat('2024-01-', toString(properties.n + 10), ' 10:00:00')"
    const text = `select toDateTime(${day}), dateDiff('hour', timestamp, parseDateTimeBestEffort(${day}, 'Europe/Oslo')), toString(toDate(${day})), toDateTime(properties.plan) from events where properties.n < 2 order by properties.n`
    // Read in Oslo, the second is a date and time of Oslo's, whose hours dateDiff counts as ClickHouse's
    // toStableRelativeHourNum does, less 1970's offset there (+01:00): 10:00 in Oslo is 09:00 UTC, 225 hours on, 224 so.
    t.same(await rows(text), [['2024-01-10T10:00:00Z', 224, '2024-01-10', null], ['2024-01-11T10:00:00Z', 224, '2024-01-11', null]])
  })

  t.test("another zone's date and time (toTimeZone, a zone argument) is written with its offset and typed with its zone", async (t) => {
    const text = "select toTimeZone(timestamp, 'Asia/Tokyo') as t, toHour(t), toStartOfDay(timestamp, 'America/New_York'), toDate(toTimeZone(timestamp, 'Pacific/Kiritimati')), formatDateTime(timestamp, '%F %T', 'Asia/Kolkata') from events where properties.n = 0"
    const res = await query(text)
    t.same(res.body.results, [['2024-01-01T09:00:00.123000+09:00', 9, '2023-12-31T00:00:00-05:00', '2024-01-01', '2024-01-01 05:30:00']], 'the first event, at 2024-01-01 00:00:00.123 UTC')
    const types = res.body.types.map(([, type]: [string, string]) => type)
    t.same([types[0], types[2], types[3]], ["DateTime64(6, 'Asia/Tokyo')", "DateTime64(6, 'America/New_York')", 'Date'])
    t.same(await rows("select count() from events where toTimeZone(timestamp, 'Asia/Tokyo') < '2024-01-01 09:00:01'"), [[1]], 'a text compared with one is read on its wall clock')
  })

  t.test('a choice of dates and times is one, and the periods built of others are dates', async (t) => {
    t.same(await rows('select minIf(timestamp, properties.n >= 28), maxIf(timestamp, properties.n < 1) from events'), [['2024-01-29T00:00:00.123000Z', '2024-01-01T00:00:00.123000Z']], "an -If's value")
    const text = 'select coalesce(toDateTime(properties.plan), timestamp), toLastDayOfMonth(timestamp), toStartOfISOYear(timestamp), timeZoneOf(timestamp) from events where properties.n = 0'
    t.same(await rows(text), [['2024-01-01T00:00:00.123000Z', '2024-01-31', '2024-01-01', 'UTC']], 'coalesce of a text read as none; the last day of January; ISO 2024 starts on Monday, January 1')
  })

  t.test("ClickHouse's exact quantiles: the high and low median, the spreadsheets' exclusive interpolation, -If", async (t) => {
    const text = "select medianExact(properties.n), medianExactLow(properties.n), quantileExactExclusive(0.25)(properties.n), quantileExactInclusiveIf(0.5)(properties.n, properties.n > 0) from events where properties.n < 4"
    t.same(await rows(text), [[2, 1, 0.25, 2]], 'of n 0 … 3 (the -If of 1 … 3)')
  })

  t.test("ClickHouse's functions of texts: left, right, pads, repeat, concatWithSeparator; a cut character answered as U+FFFD", async (t) => {
    const text = "select left(properties.plan, 2), right(distinct_id, -5), leftPad(toString(properties.n), 3, '0'), repeat('ab', 2), concatWithSeparator('/', event, properties.n), lengthUTF8('Straße'), countSubstrings(distinct_id, 'e') from events where properties.n = 7"
    t.same(await rows(text), [['fr', '7', '007', 'abab', 'click/7', 6, 1]])
    const cut = "select left('é', 1), concat(left('é', 1), right('é', 1)), lengthUTF8(left('é€', 4)), left(properties.plan || '€', 5) from events where properties.n = 7"
    t.same(await rows(cut), [['\uFFFD', 'é', 2, 'free\uFFFD']], "a character cut is its bytes, answered as ClickHouse's client reads them")
  })

  t.test('groupArray and groupUniqArray answer arrays: the values in time, the unique ones where each first stands', async (t) => {
    const res = await query("select distinct_id, groupArray(event) as events, groupUniqArray(properties.plan), groupArrayIf(toFloat(properties.n), properties.n < 10), format('{} {}', distinct_id, 'x') from events where distinct_id in ('user-1', 'user-2') group by distinct_id order by distinct_id")
    t.equal(res.status, 200, JSON.stringify(res.body))
    t.same(res.body.results, [
      ['user-1', ['click', 'buy', 'view'], ['free', 'pro'], [1], 'user-1 x'],
      ['user-2', ['buy', 'view', 'click'], ['free', 'pro'], [2], 'user-2 x'],
    ])
    t.same(res.body.types.slice(1, 4), [['events', 'Array(String)'], ['groupUniqArray(properties.plan)', 'Array(String)'], ['groupArrayIf(toFloat(properties.n), properties.n < 10)', 'Array(Float64)']])
    const readers = await query("select distinct_id, length(groupArray(event)) as n, arrayStringConcat(groupUniqArray(properties.plan), '+') from events where distinct_id in ('user-1', 'user-2') group by distinct_id having has(groupArray(event), 'buy') order by n, distinct_id")
    t.same(readers.body.results, [['user-1', 3, 'free+pro'], ['user-2', 3, 'free+pro']], 'the functions of arrays read a group\'s array')
    const refused = await query('select groupArray(event) as x from events order by x')
    t.equal(refused.status, 400)
    t.match(refused.body, { type: 'validation_error', detail: /x: the array groupArray\(\) gives is read here as a column of the answer, or by the functions of arrays/ })
  })

  t.test('quantiles, topK(n) and groupArray(n) answer arrays; the functions of arrays read them', async (t) => {
    const res = await query("select event, quantiles(0.5, 1)(properties.n), topK(2)(properties.shop.city), groupArray(2)(distinct_id) from events where event != 'recent' group by event order by event")
    t.equal(res.status, 200, JSON.stringify(res.body))
    // view: n 0, 3 … 27; click 1 … 28; buy 2 … 29. Rome is more often the city of each.
    t.same(res.body.results, [
      ['buy', [15.5, 29], ['Rome', 'Oslo'], ['user-2', 'user-5']],
      ['click', [14.5, 28], ['Rome', 'Oslo'], ['user-1', 'user-4']],
      ['view', [13.5, 27], ['Rome', 'Oslo'], ['user-0', 'user-3']],
    ])
    t.same(res.body.types.slice(1).map(([, type]: [string, string]) => type), ['Array(Float64)', 'Array(String)', 'Array(String)'])
    t.same(await rows("select event from events where event != 'recent' group by event having quantiles(0.5)(properties.n)[1] > 14 order by event"), [['buy'], ['click']], 'read in HAVING')
    const remade = "select arrayStringConcat(arrayReverseSort(groupUniqArray(properties.plan)), ','), arraySlice(arraySort(splitByChar('-', distinct_id)), 2, 1)[1], hasAny(groupUniqArray(properties.plan), ['pro', 'x']), countEqual(splitByChar('-', distinct_id), 'user') from events where properties.n = 7 group by distinct_id"
    t.same(await rows(remade), [['free', 'user', 0, 1]], 'sorted and sliced arrays, hasAny and countEqual')
    const refused = await query('select topK(properties.plan) from events')
    t.equal(refused.status, 400)
    t.match(refused.body, { type: 'validation_error', detail: /topK\(n\) takes how many values it keeps before the expression/ })
  })

  t.test("lambdas map, filter and test arrays, a group's too; a lambda ClickHouse refuses is a 400", async (t) => {
    const text = "select distinct_id, arrayStringConcat(arrayMap(x -> upper(x), splitByChar('-', distinct_id)), '_'), arrayCount(x -> x != 'buy', groupArray(event)), arrayFirst(x -> x != 'click', groupArray(event)), arrayExists(x -> x = 'pro', groupUniqArray(properties.plan)), arraySum(x -> length(x), splitByChar('-', distinct_id)) from events where distinct_id in ('user-1', 'user-2') group by distinct_id order by distinct_id"
    t.same(await rows(text), [['user-1', 'USER_1', 2, 'buy', 1, 5], ['user-2', 'USER_2', 2, 'buy', 1, 5]])
    const refused = await query("select arrayFilter(x -> x, splitByChar('-', distinct_id))[1] from events")
    t.equal(refused.status, 400)
    t.match(refused.body, { type: 'validation_error', detail: /arrayFilter\(\)'s lambda is a condition, not a text/ })
  })

  t.test('variances, standard deviations, covariances and correlations; of one value a sample has none (NaN, written null)', async (t) => {
    const text = "select varPop(properties.n), stddevSamp(properties.n), varSampIf(properties.n, properties.n = 0), stddevPopIf(properties.price, properties.n = 1) from events where properties.n < 4"
    t.same(await rows(text), [[1.25, Math.sqrt(5 / 3), null, null]])
    const pairs = 'select covarPop(properties.n, properties.n), corr(properties.n, properties.price), covarSamp(properties.n, properties.price) from events where properties.n < 4'
    t.same(await rows(pairs), [[1.25, 1, 3]], 'covariances and the correlation, of the rows with both (n 0 and 2 have a price)')
    t.same(await rows('select skewPop(properties.n), kurtPop(properties.n) from events where properties.n < 4'), [[0, 1.64]], 'skewness and kurtosis')
  })

  t.test('a query without FROM is one row of constants', async (t) => {
    t.same(await rows("select 1 + 1, toDate(toDateTime('2024-01-31')) + interval 1 day, formatDateTime(toDateTime('2024-01-05 10:00:00'), '%F %a')"), [[2, '2024-02-01', '2024-01-05 Fri']])
    t.same(await rows('select count() union all select count() from events where event = \'buy\''), [[1], [10]], 'beside a query of events')
  })

  t.test("FROM sessions reads PostHog's sessions from the events grouped by $session_id", async (t) => {
    const sessions = await query('select session_id, distinct_id, $session_duration, $pageview_count, $is_bounce, $start_timestamp = $end_timestamp from sessions')
    t.same(sessions.body.results, [['s-1', 'user-x', 0, 0, 0, 1]], 'the one event with a session')
  })

  t.test('UNION ALL gives the rows of each SELECT in turn; UNION DISTINCT each row once', async (t) => {
    const totals = await query("select event, count() as n from events where event != 'recent' group by event order by event union all select 'all', count() from events where event != 'recent'")
    t.same([totals.body.results, totals.body.columns, totals.body.hasMore], [[['buy', 10], ['click', 10], ['view', 10], ['all', 30]], ['event', 'n'], false])
    const plans = "(select properties.plan as p from events where event = 'buy' order by p) union distinct (select properties.plan from events where event != 'recent' order by 1 desc limit 3)"
    t.same(await rows(plans), [['free'], ['pro']])
    const mixed = await query("select 1, 2 from events union all select 3 from events")
    t.same([mixed.status, mixed.body.type, mixed.body.detail], [400, 'validation_error', 'The SELECTs of a UNION give as many columns each: the first gives 2, SELECT 2 gives 1.'])
  })

  t.test('timestamps: compared with texts, now() and intervals, read back as PostHog writes them', async (t) => {
    const res = await query("SELECT uuid, timestamp, distinct_id FROM events WHERE timestamp >= '2024-01-05' AND timestamp < toDateTime('2024-01-07 00:00:00') ORDER BY timestamp")
    t.same(res.body.results, [
      ['0190d1e2-0000-7000-8000-000000000004', '2024-01-05T00:00:00.123000Z', 'user-4'],
      ['0190d1e2-0000-7000-8000-000000000005', '2024-01-06T00:00:00.123000Z', 'user-5'],
    ])
    t.same(res.body.types.map((x: string[]) => x[1]), ['UUID', "DateTime64(6, 'UTC')", 'String'])
    t.same(await rows('select event from events where timestamp > now() - interval 1 day'), [['recent']])
    t.same(await rows('select count() from events where timestamp >= yesterday() and toDate(timestamp) <= today()'), [[1]], 'today() and yesterday()')
    t.same(await rows("select max(timestamp), min(timestamp) from events where event = 'buy'"), [['2024-01-30T00:00:00.123000Z', '2024-01-03T00:00:00.123000Z']])
    const days = await query("select toDate(timestamp) as day, count() from events where timestamp < '2024-01-04' group by day order by day")
    t.same(days.body.results, [['2024-01-01', 1], ['2024-01-02', 1], ['2024-01-03', 1]], 'days written as dates')
    t.same(days.body.types[0], ['day', 'Date'])
    const months = await query("select toStartOfMonth(timestamp) as m, count() from events where event != 'recent' group by m order by m")
    t.same(months.body.results, [['2024-01-01', 30]], "a month's start is a Date, as ClickHouse's toStartOfMonth gives it")
    t.same(months.body.types[0], ['m', 'Date'])
    const weeks = "select toMonday(timestamp) as w, toStartOfQuarter(timestamp) as q, toStartOfYear(timestamp) as y, count() from events where event != 'recent' group by w, q, y order by w limit 2"
    t.same(await rows(weeks), [['2024-01-01', '2024-01-01', '2024-01-01', 7], ['2024-01-08', '2024-01-01', '2024-01-01', 7]], 'weeks from Monday, quarters, years')
    t.same(await rows("select count() from events where toStartOfWeek(timestamp) = '2024-01-07'"), [[7]], 'weeks from Sunday')
    // Days in threes from 1970 (2024-01-01 is day 19,723), fortnights from Monday 1970-01-05, dateTrunc's month a Date.
    const intervals = await query("select toStartOfInterval(timestamp, interval 3 day) as d, toStartOfInterval(timestamp, toIntervalWeek(2)) as w, dateTrunc('month', timestamp) as m, count() from events where timestamp < '2024-01-05' group by d, w, m order by d")
    t.same(intervals.body.results, [['2023-12-31T00:00:00Z', '2023-12-25', '2024-01-01', 2], ['2024-01-03T00:00:00Z', '2023-12-25', '2024-01-01', 2]], 'toStartOfInterval and dateTrunc')
    t.same(intervals.body.types.map((x: string[]) => x[1]), ["DateTime64(6, 'UTC')", 'Date', 'Date', 'UInt64'])
    const texts = "select formatDateTime(timestamp, '%a %e %b %Y, %r %f'), toString(toDate(timestamp)) from events where timestamp < '2024-01-02'"
    t.same(await rows(texts), [['Mon  1 Jan 2024, 12:00 AM 123000', '2024-01-01']], 'formatDateTime and toString of a Date')
    t.same(await rows("select count(), toDateTime('2024-03-31 10:00:00') - interval 2 month from events where timestamp < toDateTime('2024-03-01') - interval 1 month"), [[30, '2024-01-31T10:00:00Z']], 'months on the wall clock')
    t.same(await rows('select now() + interval 1e308 day from events limit 1'), [[null]], 'a date and time past what one can hold is null')
    // 2024-01-01 was a Monday: the 30 days hold five Mondays and five Tuesdays.
    const weekdays = await rows("select toDayOfWeek(timestamp) as dow, count() from events where event != 'recent' group by dow order by dow")
    t.same(weekdays, [[1, 5], [2, 5], [3, 4], [4, 4], [5, 4], [6, 4], [7, 4]], 'a part of the date as a key')
    const spans = await rows("select dateDiff('day', min(timestamp), max(timestamp)), dateDiff('week', min(timestamp), max(timestamp)), toHour(max(timestamp)), toUnixTimestamp(min(timestamp)) from events where event != 'recent'")
    t.same(spans, [[29, 4, 0, 1704067200]], 'dateDiff over aggregations: the boundaries crossed')
    // keyset paging as PostHog advises it
    const page = await rows("select properties.n from events where timestamp > '2024-01-28 00:00:00.123' order by timestamp limit 5")
    t.same(page, [[28], [29], [null]])
  })

  t.test("person properties are the event's person's now; person_id is its person", async (t) => {
    // The persons are written beside the events; wait until the last $set is read.
    const tiers = await readUntil(
      'the persons',
      () => rows("select person.properties.tier as tier, count(), uniq(distinct_id) from events where event != 'recent' group by tier order by tier"),
      (r) => JSON.stringify(r).includes('gold'),
    )
    // user-0 (3 events) gold; user-1 … user-3 (9 events) basic; the other 18 events' persons have no tier.
    t.same(tiers, [['basic', 9, 3], ['gold', 3, 1], [null, 18, 6]])
    t.same(await rows("select distinct distinct_id from events where person.properties.email like 'u1@%' or person.properties.email = 'u2@example.com' order by distinct_id"), [['user-1'], ['user-2']])
    const ids = await rows("select distinct_id, uniq(person_id) from events where event != 'recent' group by distinct_id order by distinct_id limit 2")
    t.same(ids, [['user-0', 1], ['user-1', 1]], "each distinct id's events carry one person")
    const [[a], [b]] = await rows("select person_id from events where distinct_id in ('user-0', 'user-1') and properties.n < 2 order by timestamp")
    t.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-/)
    t.not(a, b, 'two distinct ids, two persons')
  })

  t.test("FROM persons reads persons.db's persons, whichever store holds the events", async (t) => {
    // PostHog's documented example of the query API.
    const emails = await rows('select properties.email from persons where properties.email is not null order by properties.email')
    t.same(emails, [['u0@example.com'], ['u1@example.com'], ['u2@example.com'], ['u3@example.com']])
    const res = await query("select * from persons where properties.email = 'u1@example.com'")
    t.same(res.body.columns, ['id', 'created_at', 'properties', 'is_identified'])
    t.same(res.body.types.map((x: string[]) => x[1]), ['UUID', "DateTime64(6, 'UTC')", 'String', 'Int8'])
    const [[id, createdAt, properties, identified]] = res.body.results
    const [[personId]] = await rows("select person_id from events where distinct_id = 'user-1' limit 1")
    t.equal(id, personId, "the person's id is the events' person_id")
    t.match(createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
    t.match(JSON.parse(properties), { email: 'u1@example.com', tier: 'basic' })
    t.equal(identified, 0)
    t.same(await rows("select properties.tier as tier, count() from persons where properties.tier is not null group by tier order by tier"), [['basic', 3], ['gold', 1]])
  })

  t.test("placeholders take the query's values; {filters} without filters is true", async (t) => {
    const ask = (body: Record<string, unknown>) => server.api('POST', `/api/projects/${server.boot.project_id}/query/`, { query: { kind: 'HogQLQuery', ...body } })
    const res = await ask({ query: 'select count() from events where event = {name} and properties.n >= {low} and {filters}', values: { name: 'buy', low: 20 } })
    t.same(res.body.results, [[4]], 'buys at n = 20, 23, 26, 29')
    const filtered = await ask({ query: 'select count() from events where {filters}', filters: { properties: [{ key: 'x', value: 1, operator: 'between' }] } })
    t.equal(filtered.status, 400)
    t.match(filtered.body, { type: 'validation_error', attr: 'filters', detail: /between takes a list of two numbers/ })
    const missing = await ask({ query: 'select {x} from events' })
    t.match(missing.body, { type: 'validation_error', detail: /The placeholder \{x\} has no value/ })
  })

  t.test('without LIMIT 100 rows and hasMore; a LIMIT is taken as given', async (t) => {
    const res = await query('select properties.n from events order by timestamp')
    t.match(res.body, { hasMore: false, limit: 100 })
    t.equal(res.body.results.length, 31)
    const limited = await query('select properties.n from events order by timestamp limit 2')
    t.same(limited.body.results, [[0], [1]])
    t.notOk('hasMore' in limited.body)
  })

  t.test('what is not read is a 400 naming it, in the contract envelope', async (t) => {
    for (const [text, detail] of [
      ['select event from events offset 5', /OFFSET is not supported on queries made with a personal API key/],
      ['select event from events limit 5 offset 5', /OFFSET is not supported/],
      ['select person_mode from events', /Unknown field "person_mode": HogQL queries of events here read/],
      ['select event from raw_sessions', /read one table, events, persons, groups, sessions or person_distinct_ids/],
      ['select event from persons', /Unknown field "event": HogQL queries of persons/],
      ['select event, count() from events', /Column event is neither aggregated nor in GROUP BY/],
      ['select event from events array join persons', /ARRAY JOIN is not read/],
      ['select event, count() from events group by event having properties.n > 1', /HAVING reads each group/],
      ['select properties.n / count() from events', /neither aggregated nor in GROUP BY/],
      ['select timestamp + 1 from events', /read here whole, compared, or plus or minus an interval/],
      ["select event from events where timestamp > 'yesterday'", /Cannot read "yesterday" as a date and time/],
      ['select anyHeavy(properties.n) from events', /not supported in HogQL queries here/],
      ['select sum(count()) from events', /read here as a whole column/],
      ['select person.email from events', /Of the person, skylark reads its properties/],
      ['select person.properties.email, count() from events', /neither aggregated nor in GROUP BY/],
      ['select event from events where', /empty/],
    ] as const) {
      const res = await query(text)
      t.equal(res.status, 400, text)
      t.match(res.body, { type: 'validation_error', code: 'invalid', detail }, text)
    }
    const missing = await server.api('POST', `/api/projects/${server.boot.project_id}/query/`, { query: { kind: 'HogQLQuery' } })
    t.match(missing.body, { code: 'invalid', attr: 'query' })
  })

  // Last: the groups API's writes are events too ($groupidentify), which the tests above would count.
  t.test("FROM groups reads persons.db's groups, whichever store holds the events", async (t) => {
    for (const [key, seats] of [['acme', 5], ['initech', 50]] as const) {
      const res = await server.api('POST', `/api/projects/${server.boot.project_id}/groups/`, { group_type_index: 0, group_key: key, group_properties: { name: key.toUpperCase(), seats } })
      t.equal(res.status, 201, JSON.stringify(res.body))
    }
    const keyed = await readUntil('the groups', () => rows('select key, properties.seats from groups where index = 0 order by key'), (r) => r.length === 2)
    t.same(keyed, [['acme', 5], ['initech', 50]])
    const res = await query("select * from groups where key = 'acme'")
    t.same([res.body.columns, res.body.types[0]], [['index', 'key', 'created_at', 'properties'], ['index', 'UInt8']])
    t.same(res.body.results[0].slice(0, 2), [0, 'acme'])
    t.match(JSON.parse(res.body.results[0][3]), { name: 'ACME', seats: 5 })
    t.same(await rows('select index, count(), sum(properties.seats) from groups group by index'), [[0, 2, 55]])
  })

  t.test("group_0.properties reads the event's group of type 0 as it is now, as PostHog's lazy join of the groups", async (t) => {
    // After the test above: acme (5 seats) and initech are groups of type 0 (company); only 'recent' is acme's.
    const own = "event != '$groupidentify'"
    t.same(await rows(`select group_0.properties.name, group_0.properties.seats * 2, count() from events where ${own} group by 1, 2 order by 1`), [['ACME', 10, 1], [null, null, 30]])
    t.same(await rows(`select distinct_id from events where ${own} and group_0.properties.seats > 1`), [['user-x']], 'in WHERE')
    t.same(await rows(`select count() from events where ${own} and group_1.properties.name is null`), [[31]], 'a type without groups: NULL')
    const filters = { properties: [{ key: 'seats', value: 3, operator: 'gt', type: 'group', group_type_index: 0 }, { key: own, type: 'hogql' }] }
    const filtered = await server.api('POST', `/api/projects/${server.boot.project_id}/query/`, { query: { kind: 'HogQLQuery', query: 'select distinct_id from events where {filters}', filters } })
    t.same(filtered.body.results, [['user-x']], "{filters}' group property filter, as PostHog's property_to_expr writes it")
    t.same(await rows(`select group_0.key, formatDateTime(group_0.created_at, '%Y') = formatDateTime(now(), '%Y'), count() from events where ${own} group by 1, 2 order by 1`), [['', 0, 30], ['acme', 1, 1]], "group_0.key and created_at: '' and 1970 without a group, as a LEFT JOIN's defaults")
    const refused = await query('select group_0.index from events')
    t.same([refused.status, refused.body.detail], [400, 'Of group_0, skylark reads its properties (group_0.properties.<key>) and key, created_at in HogQL queries.'])
  })
}
