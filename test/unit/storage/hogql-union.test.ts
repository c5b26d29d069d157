import t from 'tap'
import { parseHogqlQuerySet } from '../../../src/storage/events/hogql-union.js'

const NOW = Date.parse('2024-03-10T12:00:00Z')
const set = (text: string, limit = 100) => parseHogqlQuerySet(text, { now: NOW, zone: 'UTC' }, limit)

t.test('UNION ALL and UNION DISTINCT join whole SELECTs, each planned with its own ORDER BY and LIMIT', async (t) => {
  const all = set("select event, count() as n from events group by event union all select 'total', count() from events")
  t.same([all.parts.length, all.distinct, all.paginated, all.limit], [2, false, true, 100], 'without LIMIT: the answer holds 100 rows and says whether there were more')
  t.same(all.columns.map((c) => [c.name, c.type]), [['event', 'String'], ['n', 'UInt64']], "the first SELECT's names")
  t.same(all.parts.map((p) => p.fetch), [101, 101], 'each SELECT reads at most the answer and one more')
  const limited = set('(select event from events order by timestamp desc limit 3) UNION DISTINCT (select event from events limit 5)')
  t.same([limited.distinct, limited.paginated, limited.limit, limited.parts.map((p) => p.fetch)], [true, false, 50_000, [3, 5]], 'in parentheses, each with its LIMIT')
  t.same(set('select null, 1 from events union all select timestamp, 2 from events').columns.map((c) => c.time), ['datetime', null], 'typed as the first SELECT that gives the column other than NULL')
  t.equal(set('with q as (select event from events) select * from q union all select event from events').parts[0].source?.table, 'events', 'each SELECT with its own WITH')
  t.equal(set('select 1 from events').parts.length, 1, 'one SELECT is a set of one')
})

t.test('what a UNION is not read as is a 400 naming it', async (t) => {
  for (const [text, message] of [
    ['select 1 from events union select 2 from events', /UNION is written UNION ALL or UNION DISTINCT/],
    ['select 1 from events union all select 2 from events union distinct select 3 from events', /with UNION ALL or with UNION DISTINCT, not both/],
    ['select 1, 2 from events union all select 3 from events', /give as many columns each: the first gives 2, SELECT 2 gives 1/],
    ["select 1 from events union all select 'x' from events", /Column 1 of the UNION is a number in one SELECT and a text in SELECT 2/],
    ['select timestamp from events union all select toDate(timestamp) from events', /is a date and time in one SELECT and a date in SELECT 2/],
    ['select count() from (select 1 from events union all select 2 from events)', /UNION joins whole queries here/],
    [Array.from({ length: 21 }, () => 'select 1 from events').join(' union all '), /joins at most 20 SELECTs/],
    ['select 1 from events union all', /The query is empty/],
  ] as const) {
    t.throws(() => set(text), message, text.slice(0, 80))
  }
})
