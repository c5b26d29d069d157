// Micro benchmark of HogQL queries (`POST …/query/`, storage's hogql-query.ts) on the embedded store: EVENTS events
// 10 s apart over 5,000 distinct ids with five properties each (sessions of ten events), written to a fresh events.db, then each query run
// three times on the store's reader as the read thread runs it (the plan in Node over the events read once; a join's
// tables each so, then joined in Node as the query endpoint joins them; what the events' groups, persons and cohorts
// have now made up as persons.db would answer it). Prints
// each query's median and range, so a change to the Node engine can be weighed. Runs on the compiled output:
// `npx tsc -p . && node bench/micro/hogql-queries.mjs` (EVENTS=1000000 for the long run).
import { compileSearchRegex } from '../../dist/src/flags/index.js'
import { fillLookup, joinRows, parseHogqlQuery, runHogqlQuery, SqliteEventStore } from '../../dist/src/storage/events/index.js'
import { eventRow, freshEventsDb } from '../lib/events-db.mjs'

const EVENTS = Number(process.env.EVENTS ?? 100_000)
const TEAM = 1
const T0 = Date.parse('2024-01-01T00:00:00Z')
const QUERIES = [
  'SELECT event, count() FROM events GROUP BY event ORDER BY count() DESC',
  'SELECT distinct_id, count() AS n FROM events GROUP BY distinct_id ORDER BY n DESC LIMIT 10',
  'SELECT avg(n), max(n) FROM (SELECT distinct_id, count() AS n FROM events GROUP BY distinct_id)',
  "SELECT count() FROM (SELECT distinct_id FROM events WHERE properties.$browser = 'Chrome')",
  'SELECT plan, avg(spent) FROM (SELECT properties.plan AS plan, distinct_id, sum(properties.price) AS spent FROM events GROUP BY plan, distinct_id) GROUP BY plan ORDER BY plan',
  'SELECT * FROM events ORDER BY timestamp DESC LIMIT 100',
  "SELECT uuid, timestamp, properties.$browser FROM events WHERE timestamp > '2024-01-05' ORDER BY timestamp LIMIT 100",
  'SELECT * FROM events ORDER BY properties.price DESC, timestamp LIMIT 100',
  "SELECT $group_0, count() FROM events WHERE notEmpty($group_0) GROUP BY $group_0 ORDER BY count() DESC LIMIT 10",
  'SELECT toStartOfInterval(timestamp, interval 15 minute) AS t, count() FROM events GROUP BY t ORDER BY t DESC LIMIT 10',
  "SELECT formatDateTime(timestamp, '%Y-%m-%d %H:%i') AS m, count() FROM events GROUP BY m ORDER BY m LIMIT 10",
  'SELECT distinct_id, argMax(properties.plan, timestamp) FROM events GROUP BY distinct_id ORDER BY distinct_id LIMIT 10',
  'SELECT count(), avg($session_duration), sum($is_bounce) FROM sessions',
  "WITH 10 AS least_events, busy AS (SELECT distinct_id, count() AS n FROM events GROUP BY distinct_id HAVING n >= least_events) SELECT count() FROM busy",
  'SELECT s.plan, count() FROM events e JOIN (SELECT distinct_id, argMax(properties.plan, timestamp) AS plan FROM events GROUP BY distinct_id) s ON e.distinct_id = s.distinct_id GROUP BY s.plan ORDER BY s.plan',
  "SELECT e.event, count() FROM events e LEFT JOIN (SELECT distinct_id FROM events WHERE properties.plan = 'pro' GROUP BY distinct_id) p ON e.distinct_id = p.distinct_id WHERE e.timestamp > '2024-01-10' AND p.distinct_id != '' GROUP BY e.event ORDER BY e.event",
  // The events' groups, persons and a cohort now, as persons.db would give them (hogql-lookups.ts): 40 groups, 5,000 persons.
  'SELECT group_0.properties.tier, count() FROM events GROUP BY 1 ORDER BY 1',
  'SELECT toStartOfMonth(person.created_at) AS signed_up, uniq(distinct_id) FROM events GROUP BY signed_up ORDER BY signed_up',
  'SELECT count() FROM events WHERE person_id IN COHORT 1',
  // Regexes over each event's URL (hogql-regex.ts): a search, a group extracted, a replacement with groups.
  "SELECT count() FROM events WHERE properties.$current_url =~ '/1[0-9]$'",
  "SELECT extract(properties.$current_url, '^https?://[^/]+/(\\\\d+)') AS page, count() FROM events GROUP BY page ORDER BY page",
  "SELECT replaceRegexpOne(properties.$current_url, '^https?://([^/]+)/(.*)$', '\\\\2@\\\\1') AS u, count() FROM events GROUP BY u ORDER BY u LIMIT 5",
  // Arrays (hogql-arrays.ts): a split indexed, has() of a literal.
  "SELECT splitByChar('/', properties.$current_url)[4] AS page, count() FROM events WHERE has(['$pageview', 'buy'], event) GROUP BY page ORDER BY page",
  // URL functions (hogql-urls.ts) and CASE.
  "SELECT domain(properties.$current_url) AS site, path(properties.$current_url) AS page, count() FROM events GROUP BY site, page ORDER BY site, page",
  "SELECT CASE WHEN properties.price BETWEEN 10 AND 20 THEN 'mid' WHEN properties.price < 10 THEN 'low' ELSE 'high' END AS band, count() FROM events GROUP BY band ORDER BY band",
  // The ternary and countDistinct; LIMIT n BY (hogql-order.ts), which keeps every row until the sort.
  "SELECT properties.price > 10 ? 'big' : 'small' AS size, countDistinct(distinct_id) FROM events GROUP BY size ORDER BY size",
  'SELECT distinct_id, event, timestamp FROM events ORDER BY timestamp DESC LIMIT 1 BY distinct_id LIMIT 100',
  'SELECT distinct_id, properties.plan AS plan, count() AS n FROM events GROUP BY distinct_id, plan ORDER BY n DESC, distinct_id LIMIT 1 BY distinct_id LIMIT 100',
  // Texts read as dates and times (hogql-datetime-text.ts), the moments, and week numbers.
  "SELECT toStartOfWeek(toDateTime(concat('2024-01-0', toString(toInt(toFloat(properties.price)) % 9 + 1), ' 10:00:00'))) AS w, count() FROM events GROUP BY w ORDER BY w",
  'SELECT distinct_id, varPop(properties.price), corr(properties.price, toUnixTimestamp(timestamp)) FROM events GROUP BY distinct_id ORDER BY distinct_id LIMIT 10',
  'SELECT toYearWeek(timestamp, 3) AS w, count() FROM events GROUP BY w ORDER BY w',
  "SELECT toDate(toTimeZone(timestamp, 'America/New_York')) AS d, toLastDayOfMonth(toTimeZone(timestamp, 'Asia/Tokyo')) AS m, count() FROM events GROUP BY d, m ORDER BY d",
  'SELECT distinct_id, medianExactLow(properties.price), quantileExactExclusive(0.9)(properties.price) FROM events GROUP BY distinct_id ORDER BY distinct_id LIMIT 10',
  // Arrays of a group's values and the functions of arrays over them; functions of texts; age.
  "SELECT distinct_id, groupUniqArray(properties.plan), length(groupArray(event)), has(groupArray(event), 'buy') FROM events GROUP BY distinct_id ORDER BY distinct_id LIMIT 10",
  // The parametric aggregations (hogql-array-aggregations.ts): quantiles of each level, topK's counts, groupArray's first n.
  "SELECT event, quantiles(0.5, 0.9, 0.99)(properties.price), topK(3)(properties.$browser), groupArray(5)(distinct_id) FROM events GROUP BY event ORDER BY event",
  // Lambdas (hogql-arrays.ts): over each event's split, and over a group's array.
  "SELECT event, count() FROM events WHERE arrayExists(x -> x = '5' OR x = '15', splitByChar('/', properties.$current_url)) GROUP BY event ORDER BY event",
  "SELECT distinct_id, arrayCount(x -> x > 25, groupArray(properties.price)), arrayStringConcat(arrayMap(x -> upper(x), arraySlice(groupUniqArray(event), 1, 2)), ',') FROM events GROUP BY distinct_id ORDER BY distinct_id LIMIT 10",
  "SELECT format('{}:{}', leftPad(left(event, 3), 5, '.'), properties.plan) AS k, countSubstrings(k, 'a'), age('day', min(timestamp), max(timestamp)) FROM events GROUP BY k ORDER BY k",
]

/** What persons.db answers of a lookup, made up alike: group tiers, persons' created_at over a year, every other user in the cohort. */
function lookupValues(of) {
  if (of.holder === 'cohort') return [{ text: 1, ids: Array.from({ length: 2500 }, (_, i) => `user-${i * 2}`) }]
  if (of.holder === 'group') return Array.from({ length: 40 }, (_, i) => ({ text: ['free', 'team', 'enterprise'][i % 3], ids: [`org-${i}`] }))
  return Array.from({ length: 5000 }, (_, i) => ({ text: T0 - (i % 365) * 86_400_000, ids: [`user-${i}`] }))
}

const { file, sink, remove } = freshEventsDb('skylark-hogql-queries-')
try {
  let built = performance.now()
  for (let start = 0; start < EVENTS; start += 10_000) {
    const rows = []
    for (let i = start; i < Math.min(start + 10_000, EVENTS); i++) {
      // Sessions of 10 events, 100 s long.
      const properties = { $browser: ['Chrome', 'Firefox', 'Safari'][i % 3], plan: i % 7 === 0 ? 'pro' : 'free', price: (i % 50) + 0.5, $session_id: `s-${Math.floor(i / 10)}`, $current_url: `https://x.io/${i % 20}` }
      rows.push(eventRow(TEAM, `user-${i % 5000}`, ['$pageview', 'click', 'buy'][i % 3], T0 + i * 10_000, properties, { groups: [i % 4 === 0 ? `org-${i % 40}` : '', '', '', '', ''] }))
    }
    await sink.write(rows)
  }
  await sink.close()
  built = performance.now() - built
  const store = new SqliteEventStore(file, compileSearchRegex)
  console.log(`events.db: ${EVENTS} events over 5,000 distinct ids, written in ${(built / 1000).toFixed(1)} s`)
  for (const text of QUERIES) {
    const plan = parseHogqlQuery(text, { now: T0 + EVENTS * 10_000, zone: 'UTC', regex: compileSearchRegex })
    for (const lookup of plan.lookups) fillLookup(lookup, lookupValues(lookup.of))
    const runs = []
    let rows = []
    for (let r = 0; r < 3; r++) {
      const started = performance.now()
      // A join, as the query endpoint runs it: each table's query on the store, then joined here.
      if (plan.join !== null) {
        const sides = []
        for (const side of plan.join.sides) sides.push(await store.hogqlQuery(TEAM, side))
        rows = runHogqlQuery(plan, await joinRows(plan.join, sides, compileSearchRegex), compileSearchRegex)
      } else rows = await store.hogqlQuery(TEAM, plan)
      runs.push(performance.now() - started)
    }
    runs.sort((a, b) => a - b)
    console.log(`${String(rows.length).padStart(5)} rows  median ${runs[1].toFixed(0).padStart(5)} ms (${runs[0].toFixed(0)}–${runs[2].toFixed(0)})  ${text}`)
  }
  store.close()
} finally {
  remove()
}
