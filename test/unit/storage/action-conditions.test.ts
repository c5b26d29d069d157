/**
 * An action's condition compiled to SQL selects, on both stores, exactly the stored events the pure matcher
 * accepts: LIKE's wildcards, exact and regex urls, selectors (with an id alone, through a parent), tags,
 * hrefs and texts in every mode (non-ASCII case included), property filters, steps without an event, and
 * actions without steps or conditions. Real events.db and a real ClickHouse server.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { compileSearchRegex } from '../../../src/flags/index.js'
import { actionCondition, compileAction, type ActionStep } from '../../../src/management/index.js'
import { toStep } from '../../../src/management/actions/record.js'
import { SqliteEventSink, SqliteEventStore, type EventRow, type EventSink, type EventStore } from '../../../src/storage/events/index.js'
import { prepareDataDir } from '../../../src/storage/index.js'
import { clickhouseEventStore, clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { testDir } from '../../helpers/temp.js'

const TEAM = 7
const T0 = Date.parse('2024-05-01T12:00:00Z')
const chain = {
  formButton: 'button.cta.big:attr__class="cta big"attr_id="cta"nth-child="1"nth-of-type="1"text="Sign up";form:nth-child="2"nth-of-type="1";body:nth-child="1"nth-of-type="1"',
  loneButton: 'button:nth-child="1"nth-of-type="1"text="Sign up";div:nth-child="1"nth-of-type="1"',
  link: 'a:attr__href="/Pricing?a=1"href="/Pricing?a=1"nth-child="1"nth-of-type="1"text="ÜBER uns";nav:nth-child="1"nth-of-type="1"',
  abbr: 'abbr:nth-child="1"nth-of-type="1"text="a";span:nth-child="1"nth-of-type="1"',
}

const EVENTS: Array<Pick<EventRow, 'event' | 'elements_chain'> & { properties: Record<string, unknown> }> = [
  { event: '$autocapture', elements_chain: chain.formButton, properties: { $current_url: 'https://x.io/abc' } },
  { event: '$autocapture', elements_chain: chain.loneButton, properties: { $current_url: 'https://x.io/a_c' } },
  { event: '$autocapture', elements_chain: chain.link, properties: { $current_url: 'https://x.io/p/12' } },
  { event: '$autocapture', elements_chain: chain.abbr, properties: {} },
  { event: '$pageview', elements_chain: '', properties: { $current_url: 'https://x.io/p/12', amount: '15' } },
  { event: '$pageview', elements_chain: '', properties: { $current_url: 'https://X.io/ABC', amount: 3 } },
  { event: '$pageview', elements_chain: '', properties: { $current_url: 42 } },
  { event: 'purchase', elements_chain: '', properties: { amount: 20, plan: 'pro' } },
  { event: 'purchase', elements_chain: '', properties: { plan: null } },
]

const ACTIONS: Record<string, Partial<ActionStep>[]> = {
  'no steps': [],
  'a step without conditions': [{}],
  'url contains, _ a wildcard': [{ url: 'a_c' }],
  'url contains, case-sensitive': [{ url: '/ABC' }],
  'url exact': [{ event: '$pageview', url: 'https://x.io/p/12', url_matching: 'exact' }],
  'url regex': [{ url: '^https://[^/]+/p/\\d+$', url_matching: 'regex' }],
  'a selector through a parent': [{ event: '$autocapture', selector: 'form > button.cta' }],
  'a selector by id alone': [{ event: '$autocapture', selector: '#cta' }],
  'a selector by tag': [{ event: '$autocapture', selector: 'a' }],
  'a tag name': [{ event: '$autocapture', tag_name: 'a' }],
  'href exact': [{ event: '$autocapture', href: '/Pricing?a=1' }],
  'href contains, any case': [{ event: '$autocapture', href: 'pricing', href_matching: 'contains' }],
  'href regex': [{ event: '$autocapture', href: 'a=\\d$', href_matching: 'regex' }],
  'text exact': [{ event: '$autocapture', text: 'Sign up' }],
  'text contains, non-ASCII case': [{ event: '$autocapture', text: 'über', text_matching: 'contains' }],
  'text regex': [{ event: '$autocapture', text: '^Ü', text_matching: 'regex' }],
  'element conditions ignored off $autocapture': [{ event: '$pageview', text: 'nothing' }],
  'properties': [{ properties: [{ key: 'amount', operator: 'gt', value: 10 }, { key: 'plan', operator: 'is_not', value: 'free' }] }],
  'is_set holds for a null': [{ event: 'purchase', properties: [{ key: 'plan', operator: 'is_set' }] }],
  'a regex the stores cannot run matches nothing': [{ event: '$autocapture', tag_name: 'a(' }],
  'a look-around (not re2) matches nothing, other steps still do': [{ url: 'x(?=\\.io)', url_matching: 'regex' }, { event: 'purchase' }],
  'any of two steps': [{ event: 'purchase', properties: [{ key: 'plan', value: 'pro' }] }, { event: '$autocapture', selector: 'button', text: 'Sign up' }],
}

function rows(): EventRow[] {
  return EVENTS.map((e, i) => ({
    uuid: randomUUID(),
    team_id: TEAM,
    event: e.event,
    distinct_id: `d${i}`,
    person_id: '00000000-0000-4000-8000-000000000001',
    properties: JSON.stringify(e.properties),
    timestamp: T0 + i * 1000,
    created_at: T0,
    groups: ['', '', '', '', ''],
    elements_chain: e.elements_chain,
  }))
}

async function agree(t: Test, sink: EventSink, store: EventStore): Promise<void> {
  const written = rows()
  await sink.write(written)
  for (const [name, steps] of Object.entries(ACTIONS)) {
    const full = steps.map(toStep)
    const test = compileAction(full)
    const expected = written.filter((r) => test({ event: r.event, distinct_id: r.distinct_id, properties: JSON.parse(r.properties), elements_chain: r.elements_chain })).map((r) => r.uuid)
    const found = await store.list({ teamId: TEAM, properties: [actionCondition(full)] }, { limit: 100, offset: 0, ascending: true })
    t.same(found.map((e) => e.uuid), expected, `${name}: ${expected.length} of ${written.length}`)
  }
}

t.test('SQLite selects what the matcher accepts', async (t) => {
  const paths = prepareDataDir(testDir(t, 'skylark-action-sql-'))
  const sink = new SqliteEventSink(paths.events)
  const store = new SqliteEventStore(paths.events, compileSearchRegex)
  t.teardown(async () => {
    await sink.close()
    await store.close()
  })
  await agree(t, sink, store)
})

t.test('ClickHouse selects what the matcher accepts', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { sink, store } = await clickhouseEventStore(t, 'skylark_action_sql')
  await agree(t, sink, store)
})
