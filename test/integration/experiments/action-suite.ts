/**
 * Legacy experiment results whose `filters` name an action, end to end once per event store: an action of
 * four steps (an `$autocapture` click by selector and text, a `$pageview` by url regex, a custom event by
 * property, another by a HogQL filter) is created over the API, events that match it and near misses that
 * must not (another parent, another text, another url, another property value) go through /batch/, and the
 * funnel and trend results must count exactly the matching ones. The expected counts are the scenario's, and the pure matcher must
 * agree with them event by event, so the store's SQL and the matcher answer alike.
 */
import type { Test } from 'tap'
import { compileAction, type ActionStep } from '../../../src/management/index.js'
import { toStep } from '../../../src/management/actions/record.js'
import { experimentServer, type BatchEvent, type ExperimentServer } from './fixture.js'

const HOUR = 3_600_000
const STEPS: Partial<ActionStep>[] = [
  { event: '$autocapture', selector: 'form > button', text: 'sign up', text_matching: 'contains' },
  { event: '$pageview', url: '/welcome/\\d+$', url_matching: 'regex' },
  { event: 'signed_up', properties: [{ key: 'plan', value: ['pro', 'team'], type: 'event' }] },
  { event: 'upgraded', properties: [{ key: "toFloat(properties.seats) > 5 and properties.plan ilike 't%'", type: 'hogql' }] },
]
const FORM_BUTTON = (text: string) => `button.cta:attr__class="cta"nth-child="1"nth-of-type="1"text="${text}";form.signup:attr__class="signup"nth-child="2"nth-of-type="1";body:nth-child="1"nth-of-type="1"`
const LONE_BUTTON = 'button:nth-child="1"nth-of-type="1"text="Sign up";div:nth-child="1"nth-of-type="1"'

/** How a user may try to sign up: the events sent, and whether the action must count them. */
const WAYS: Array<{ matches: boolean; event: string; properties: Record<string, unknown> }> = [
  { matches: true, event: '$autocapture', properties: { $elements_chain: FORM_BUTTON('Sign Up now') } },
  { matches: true, event: '$pageview', properties: { $current_url: 'https://app.example.com/welcome/42' } },
  { matches: true, event: 'signed_up', properties: { plan: 'team' } },
  { matches: false, event: '$autocapture', properties: { $elements_chain: LONE_BUTTON } },
  { matches: false, event: '$autocapture', properties: { $elements_chain: FORM_BUTTON('Log in') } },
  { matches: false, event: '$pageview', properties: { $current_url: 'https://app.example.com/welcome/abc' } },
  { matches: false, event: 'signed_up', properties: { plan: 'free' } },
  { matches: false, event: 'viewed pricing', properties: {} },
  { matches: true, event: 'upgraded', properties: { seats: 10, plan: 'Team' } },
  { matches: false, event: 'upgraded', properties: { seats: '3', plan: 'team' } },
]

export function actionResultsSuite(t: Test, env: () => Record<string, string>): void {
  let f: ExperimentServer
  const start = Date.now() - 2 * HOUR
  const ids: Record<string, number> = {}
  /** Per experiment and variant: users entered, and how many of them (funnel) or events (trend) matched. */
  const expected: Record<string, Record<string, { users: number; matched: number }>> = {}
  const sent: BatchEvent[] = []

  t.before(async () => {
    f = await experimentServer(env())
    const action = await f.api('POST', `${f.base}/actions/`, { name: 'Signed up', steps: STEPS })
    if (action.status !== 201) throw new Error(`action: ${action.status} ${action.text}`)
    const launch = new Date(start).toISOString()
    const filters = {
      funnel: { insight: 'FUNNELS', events: [{ id: 'viewed pricing', order: 0 }], actions: [{ id: action.body.id, order: 1 }] },
      trend: { insight: 'TRENDS', actions: [{ id: action.body.id, order: 0, type: 'actions' }] },
    }
    for (const [key, metric] of Object.entries(filters)) {
      const res = await f.api('POST', f.experiments, { name: `By action (${key})`, feature_flag_key: `action-${key}`, filters: metric, start_date: launch })
      if (res.status !== 201) throw new Error(`create ${key}: ${res.status} ${res.text}`)
      ids[key] = res.body.id
    }
    // Every variant gets each way once per round; the test variant has one more round of the matching ways.
    for (const key of Object.keys(filters)) {
      expected[key] = {}
      for (const [variant, rounds] of [['control', 3], ['test', 4]] as const) {
        const counts = (expected[key][variant] = { users: 0, matched: 0 })
        for (let r = 0; r < rounds; r++) {
          WAYS.forEach((way, w) => {
            if (r === 3 && !way.matches) return
            const user = `${key}-${variant}-${r}-${w}`
            const at = start + HOUR + sent.length * 10
            const feature = { [`$feature/action-${key}`]: variant }
            counts.users++
            if (way.matches) counts.matched++
            sent.push({ event: '$feature_flag_called', distinct_id: user, at, properties: { $feature_flag: `action-${key}`, $feature_flag_response: variant } })
            sent.push({ event: 'viewed pricing', distinct_id: user, at: at + 1, properties: feature })
            sent.push({ event: way.event, distinct_id: user, at: at + 2, properties: { ...way.properties, ...feature } })
          })
        }
      }
    }
    await f.send(sent)
    const byEvent = new Map<string, number>()
    for (const e of sent) byEvent.set(e.event, (byEvent.get(e.event) ?? 0) + 1)
    for (const [event, n] of byEvent) await f.waitFor(`event=${encodeURIComponent(event)}`, n, 45_000)
  })
  t.teardown(() => f?.close())

  const results = async (key: string) => {
    const res = await f.api('GET', `${f.experiments}${ids[key]}/results/`)
    if (res.status !== 200) throw new Error(`results of ${key}: ${res.status} ${res.text}`)
    return res.body.result
  }

  t.test('the pure matcher agrees with the scenario, event by event', async (t) => {
    const test = compileAction(STEPS.map(toStep))
    const stored = (e: BatchEvent) => ({ event: e.event, distinct_id: e.distinct_id, properties: e.properties ?? {}, elements_chain: String(e.properties?.$elements_chain ?? '') })
    for (const way of WAYS) t.equal(test(stored({ event: way.event, distinct_id: 'x', at: 0, properties: way.properties })), way.matches, JSON.stringify(way))
  })

  t.test('a funnel whose second step is the action counts the people who matched it', async (t) => {
    const r = await results('funnel')
    const c = expected.funnel
    t.same(r.variants, [
      { key: 'control', success_count: c.control.matched, failure_count: c.control.users - c.control.matched },
      { key: 'test', success_count: c.test.matched, failure_count: c.test.users - c.test.matched },
    ])
    t.match(r.insight[0][1], { action_id: Number, type: 'actions', name: 'Signed up' })
  })

  t.test('a trend of the action counts its matching events per variant', async (t) => {
    const r = await results('trend')
    const c = expected.trend
    t.same(r.variants.map((v: { key: string; count: number }) => [v.key, v.count]), [
      ['control', c.control.matched],
      ['test', c.test.matched],
    ])
    t.match(r.insight[0], { action: { type: 'actions', name: 'Signed up' } })
  })
}
