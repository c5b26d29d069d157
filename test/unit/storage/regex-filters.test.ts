/**
 * The regex operators of event property filters (`regex`, `not_regex`) pass the same events on both stores and in
 * the action matcher, as PostHog's `match` does: a search of the property's text, `not_regex` passing a missing
 * property. A pattern the stores can't all run (re2 has no look-around or backreferences) is a 400. Person and group
 * filters take them where their reader says so (test/unit/experiments/query-person-filters.test.ts).
 */
import t from 'tap'
import { propertyFilters } from '../../../src/experiments/metrics.js'
import { propertiesHold } from '../../../src/management/actions/properties.js'
import { readPropertyFilter, type NodeRules } from '../../../src/storage/events/index.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'

const TEAM = 5

const PROPERTIES: Record<string, Record<string, unknown>> = {
  d1: { $current_url: 'https://x.io/welcome/42', plan: 'pro', n: 12 },
  d2: { $current_url: 'https://x.io/welcome/abc', plan: 'Pro', n: 7 },
  d3: {},
  d4: { $current_url: null, plan: 'team', n: true },
  d5: { $current_url: 'https://x.io/a', plan: 'enter\nprise' },
}


const regex = (key: string, value: unknown, operator = 'regex') => ({ key, value, operator, type: 'event' })

const CASES: Array<[string, Record<string, unknown>, string[]]> = [
  ['a search, not a whole match', regex('$current_url', '/welcome/\\d+$'), ['d1']],
  ['case matters', regex('plan', '^pro$'), ['d1']],
  ['a class ignores it', regex('plan', '^[Pp]ro$'), ['d1', 'd2']],
  // 18.16's match looked for the pattern's literal ("pro") case and all before running it, and missed "Pro" (matchSql).
  ['an inline flag ignores it', regex('plan', '(?i)^pro$'), ['d1', 'd2']],
  ['from where it stands', regex('$current_url', 'WELCOME/(?i)abc'), []],
  ['from where it stands, up to its end', regex('$current_url', 'welcome/(?i)ABC'), ['d2']],
  ['on the text of a number', regex('n', '^1\\d$'), ['d1']],
  ['on the text of a boolean', regex('n', '^true$'), ['d4']],
  ['not_regex passes a missing or null property', regex('$current_url', 'welcome/4', 'not_regex'), ['d2', 'd3', 'd4', 'd5']],
  ['alternation', regex('plan', 'team|^Pro'), ['d2', 'd4']],
  // ClickHouse's match runs re2 with dot_nl: `.` takes a line break too, unless the pattern says (?-s).
  ['a dot matches a line break', regex('plan', '^enter.prise$'), ['d5']],
  ['unless the pattern turns that off', regex('plan', '(?-s)^enter.prise$'), []],
  ['a line break is no line start without (?m)', regex('plan', '^prise'), []],
  ['with (?m) it is', regex('plan', '(?m)^prise'), ['d5']],
]

t.test('regex filters pass the same events on both stores and in the action matcher', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { sqlite, clickhouse } = await bothEventStores(t, pageviewRows(TEAM, PROPERTIES), 'skylark_regex_filters')
  for (const [name, leaf, want] of CASES) {
    const properties = propertyFilters([leaf])
    const filter = { teamId: TEAM, properties }
    t.same(await sqlite.distinctIds(filter), want, `SQLite: ${name}`)
    t.same(await clickhouse.distinctIds(filter), want, `ClickHouse: ${name}`)
    t.same(Object.keys(PROPERTIES).filter((id) => propertiesHold(properties, { event: '$pageview', distinct_id: id, properties: PROPERTIES[id] })), want, `action matcher: ${name}`)
  }
})

t.test('a regex the stores cannot all run, or one that is no text, is a 400; a reader that runs none refuses the operators', async (t) => {
  t.throws(() => propertyFilters([regex('plan', '^(?=p)')]), { code: 'invalid', detail: /can't run the regex "\^\(\?=p\)"/ }, 'look-ahead')
  t.throws(() => propertyFilters([regex('plan', '(a)\\1')]), { code: 'invalid', detail: /can't run the regex/ }, 'a backreference')
  t.throws(() => propertyFilters([regex('plan', '(')]), { code: 'invalid', detail: /can't run the regex/ }, 'no regex at all')
  t.throws(() => propertyFilters([regex('plan', ['a', 'b'])]), { code: 'invalid', detail: /needs a scalar value or a list of them \(a text, for a regex\)/ })
  const anyType: NodeRules = { kind: () => (f) => f, regex: () => true, refuse: (r) => { throw new Error(r.why) } }
  t.match(readPropertyFilter({ key: 'email', value: 'x', operator: 'regex', type: 'person' }, 'p', anyType), { operator: 'regex' }, 'any type its reader takes')
  t.match(readPropertyFilter({ key: 'email', value: 'x', operator: 'regex' }, 'p', anyType), { operator: 'regex' })
  t.throws(() => readPropertyFilter({ key: 'email', value: 'x', operator: 'regex' }, 'p', { ...anyType, regex: undefined }), { message: 'operator' }, 'where the reader says nothing of regexes')
  t.match(propertyFilters([{ key: 'plan', value: '^p', operator: 'not_regex' }]), [{ key: 'plan', operator: 'not_regex', value: '^p' }], 'a filter without a type is an event one')
})
