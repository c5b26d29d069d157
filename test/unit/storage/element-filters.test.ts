/**
 * Element filters (`type: "element"`) in the new engine's metric filters read as PostHog's `property_to_expr`
 * compiles them, and both event stores match the same events: `text` on any text of the chain, `href` on its
 * first href, `selector` and `tag_name` as an action step's, each operator as a property filter's (regex ones
 * included), and lists.
 */
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { propertyFilters } from '../../../src/experiments/metrics.js'
import type { EventRow } from '../../../src/storage/events/index.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores } from '../../helpers/event-stores.js'

const TEAM = 3
const T0 = Date.parse('2024-06-01T00:00:00Z')

/** d1…d5, one autocaptured click each (d4 a pageview without elements). */
const CHAINS: Record<string, string> = {
  d1: 'a.btn:href="/signup"nth-child="1"nth-of-type="1"text="Sign up";div:attr_id="nav"nth-child="1"nth-of-type="1"',
  d2: 'button:nth-child="2"nth-of-type="1"text="Log in";form:attr_id="login"nth-child="1"nth-of-type="1"',
  d3: 'a:href="/pricing"nth-child="1"nth-of-type="1"text="Pricing"',
  d4: '',
  d5: 'span:nth-child="1"nth-of-type="1"text="sign UP now";a:href="/signup?ref=1"nth-child="1"nth-of-type="1"',
}

function rows(): EventRow[] {
  return Object.entries(CHAINS).map(([id, chain], i) => ({
    uuid: randomUUID(),
    team_id: TEAM,
    event: chain === '' ? '$pageview' : '$autocapture',
    distinct_id: id,
    person_id: `00000000-0000-4000-8000-00000000000${i}`,
    properties: '{}',
    timestamp: T0 + i * 1000,
    created_at: T0 + i * 1000,
    groups: ['', '', '', '', ''],
    elements_chain: chain,
  }))
}

const element = (key: string, value: unknown, operator?: string) => ({ type: 'element', key, value, ...(operator ? { operator } : {}) })

const CASES: Array<[string, Record<string, unknown>, string[]]> = [
  ['text exact', element('text', 'Sign up'), ['d1']],
  ['text icontains, any text of the chain', element('text', 'sign up', 'icontains'), ['d1', 'd5']],
  ['text is_not: some text differs (PostHog arrayExists)', element('text', 'Sign up', 'is_not'), ['d2', 'd3', 'd5']],
  ['text is_set', element('text', null, 'is_set'), ['d1', 'd2', 'd3', 'd5']],
  ['text is_not_set: no text is unset', element('text', null, 'is_not_set'), []],
  ['text one of a list', element('text', ['Sign up', 'Pricing']), ['d1', 'd3']],
  ['text is_not a list: every value some text differs from', element('text', ['Sign up', 'Log in'], 'is_not'), ['d3', 'd5']],
  ['text a single-item list is its item', element('text', ['Log in']), ['d2']],
  ['href exact, the first href only', element('href', '/signup'), ['d1']],
  ['href icontains', element('href', 'signup', 'icontains'), ['d1', 'd5']],
  ['href is_not, a chain without one included', element('href', '/signup', 'is_not'), ['d2', 'd3', 'd4', 'd5']],
  ['href is_set', element('href', null, 'is_set'), ['d1', 'd3', 'd5']],
  ['tag_name exact', element('tag_name', 'button'), ['d2']],
  ['tag_name is_not', element('tag_name', 'a', 'is_not'), ['d2', 'd4']],
  ['selector of a tag and class', element('selector', 'a.btn'), ['d1']],
  ['selector of an id alone', element('selector', '#login'), ['d2']],
  ['selector is_not', element('selector', '#login', 'is_not'), ['d1', 'd3', 'd4', 'd5']],
  ['text regex: a search of any text', element('text', '^(Sign|Log) ', 'regex'), ['d1', 'd2']],
  ['text not_regex: some text it does not find', element('text', '^Sign', 'not_regex'), ['d2', 'd3', 'd5']],
  ['href regex', element('href', '\\?ref=\\d$', 'regex'), ['d5']],
  ['href not_regex, a chain without one included', element('href', '^/signup', 'not_regex'), ['d2', 'd3', 'd4']],
  ['an empty list matches nothing', element('text', []), []],
]

t.test('element filters match the same events on both stores, as PostHog compiles them', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { sqlite, clickhouse } = await bothEventStores(t, rows(), 'skylark_element_filters')
  for (const [name, leaf, want] of CASES) {
    const filter = { teamId: TEAM, properties: propertyFilters([leaf]) }
    t.same(await sqlite.distinctIds(filter), want, `SQLite: ${name}`)
    t.same(await clickhouse.distinctIds(filter), want, `ClickHouse: ${name}`)
  }
})

t.test('element filters the stores cannot compute are a 400 naming them', async (t) => {
  t.throws(() => propertyFilters([element('attr_class', 'btn')]), { code: 'invalid', detail: 'Element filters on "attr_class" are not supported; selector, tag_name, href and text are.' })
  t.throws(() => propertyFilters([element('selector', 'a', 'icontains')]), { code: 'invalid', detail: 'Element selector filters take only the exact and is_not operators.' })
  t.throws(() => propertyFilters([element('tag_name', null)]), { code: 'invalid', detail: 'An element tag_name filter needs a value.' })
  t.throws(() => propertyFilters([element('tag_name', 'a', 'regex')]), { code: 'invalid', detail: 'Element tag_name filters take only the exact and is_not operators.' })
  t.throws(() => propertyFilters([element('text', '(?<!x)y', 'regex')]), { code: 'invalid', detail: /can't run the regex "\(\?<!x\)y"/ })
  t.same(propertyFilters([element('text', 'Sign up')]), [{ element: 'text', filter: { key: 'text', operator: 'exact', value: 'Sign up' } }])
})
