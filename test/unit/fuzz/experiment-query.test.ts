/**
 * The new engine under hostile queries, in-process on a real SQLite store with exposures and metric events:
 * random ExperimentQuery metrics (every metric type and math, funnels of every order, retention windows,
 * event, person and group breakdowns, session durations, winsorisation, thresholds, event, element, person,
 * group, cohort and HogQL filters against a real persons.db, HogQL math), mutated at random, and exposure queries with
 * random windows, are answered or refused with a 4xx, never anything else.
 */
import t from 'tap'
import { ExperimentQueryRunner } from '../../../src/experiments/query/runner.js'
import { compileSearchRegex } from '../../../src/flags/index.js'
import { StaticCohortWriter } from '../../../src/persons/index.js'
import { inPlaceScans } from '../../../src/persons/scans.js'
import { DAY, HOUR, T0, experimentWorld } from '../experiments/fixture.js'
import { ev, harness } from '../persons/fixtures.js'
import type { Rng } from './rng.js'
import { fuzzCases, fuzzRun } from './run.js'
import { hostileString, mutate, randomJson } from './values.js'

const RUN = fuzzRun(600)
t.setTimeout(Math.max(120_000, RUN.cases * 200))

const EVENTS = ['clicked', 'purchased', 'viewed', '$pageview', '$feature_flag_called']
const PROPERTIES = ['amount', 'plan', '$browser', '$session_id', 'n/a', 'nested']
const OPERATORS = ['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'gt', 'lt', 'gte', 'is_set', 'is_not_set', 'is_date_before', 'between', 'in']

function filter(rng: Rng): Record<string, unknown> {
  if (rng.chance(0.1)) {
    const expressions = ["properties.amount > 10", "properties.plan in ('pro', 'free')", "properties.$browser ilike 'ch%'", "person.properties.tier = 'gold'", "person.properties.tier = properties.plan", 'properties.plan', 'count() > 1', hostileString(rng)]
    return { key: rng.pick(expressions), type: 'hogql', value: null }
  }
  if (rng.chance(0.15)) return { key: 'id', type: 'cohort', value: rng.pick([1, 2, 3, '2', 99, -1, 'x', null]), ...(rng.chance(0.4) ? { operator: rng.pick(['in', 'not_in', 'exact']) } : {}) }
  const type = rng.pick(['event', 'event', 'person', 'group', 'element'])
  const key = type === 'element' && rng.chance(0.8) ? rng.pick(['selector', 'tag_name', 'href', 'text']) : rng.pick(PROPERTIES)
  const leaf: Record<string, unknown> = { key, operator: rng.pick(OPERATORS), value: rng.pick(['pro', 5, [1, 2], '.*', null, '2024-01-01', 'a.btn > #x', [], hostileString(rng)]), type }
  if (type === 'group') leaf.group_type_index = rng.pick([0, 1, 4, 5, -1, '0', null])
  return leaf
}

function source(rng: Rng): Record<string, unknown> {
  const node: Record<string, unknown> = rng.chance(0.85) ? { kind: 'EventsNode', event: rng.chance(0.9) ? rng.pick(EVENTS) : null } : { kind: 'ActionsNode', id: rng.pick([1, 999, '1', null]) }
  if (rng.chance(0.3)) node.properties = Array.from({ length: rng.int(3) + 1 }, () => filter(rng))
  const math = rng.pick(['total', 'sum', 'avg', 'min', 'max', 'unique_session', 'dau', 'unique_group', 'hogql', 'median', undefined])
  if (math !== undefined) node.math = math
  if (rng.chance(0.5)) node.math_property = rng.pick([...PROPERTIES, '$session_duration', '$is_bounce'])
  if (rng.chance(0.2)) node.math_property_type = rng.pick(['session_properties', 'event_properties', null, 5])
  if (math === 'unique_group') node.math_group_type_index = rng.pick([0, 1, 4, 5, null])
  if (math === 'hogql') node.math_hogql = rng.pick(['sum(properties.amount * 2)', 'avg(if(properties.plan = \'pro\', 1, 0))', 'count()', 'properties.amount / 0', 'max(toFloat(properties.nested))', hostileString(rng)])
  return node
}

function metric(rng: Rng): Record<string, unknown> {
  const type = rng.pick(['mean', 'mean', 'funnel', 'ratio', 'retention'])
  const m: Record<string, unknown> = { kind: 'ExperimentMetric', metric_type: type }
  if (type === 'mean') m.source = source(rng)
  if (type === 'ratio') Object.assign(m, { numerator: source(rng), denominator: source(rng) })
  if (type === 'funnel') {
    m.series = Array.from({ length: rng.int(4) + 1 }, () => source(rng))
    if (rng.chance(0.5)) m.funnel_order_type = rng.pick(['ordered', 'unordered', 'strict', 'random'])
  }
  if (type === 'retention') {
    Object.assign(m, {
      start_event: rng.chance(0.3) ? { kind: 'ExperimentExposureNode' } : source(rng),
      completion_event: source(rng),
      retention_window_start: rng.pick([0, 1, 7, -1]),
      retention_window_end: rng.pick([1, 7, 30, 0]),
      retention_window_unit: rng.pick(['day', 'hour', 'week', 'month', 'second']),
      start_handling: rng.pick(['first_seen', 'last_seen']),
    })
  }
  if (rng.chance(0.3)) Object.assign(m, { conversion_window: rng.pick([0, 1, 24, -3]), conversion_window_unit: rng.pick(['hour', 'day', 'minute']) })
  if (rng.chance(0.2)) Object.assign(m, { lower_bound_percentile: rng.pick([0, 0.05]), upper_bound_percentile: rng.pick([0.95, 1]) })
  if (rng.chance(0.15)) m.threshold = rng.pick([1, 10, 0])
  if (rng.chance(0.15)) m.ignore_zeros = true
  if (rng.chance(0.25)) {
    m.breakdownFilter = {
      breakdowns: Array.from({ length: rng.int(3) + 1 }, () => {
        const type = rng.pick(['event', 'person', 'group'])
        return { property: rng.pick(PROPERTIES), type, ...(type === 'group' ? { group_type_index: rng.pick([0, 1, 4, 5, null]) } : {}) }
      }),
    }
  }
  return m
}

t.test(`the new engine under ${RUN.cases} hostile queries (FUZZ_SEED=${RUN.seed})`, async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const e = w.create({ name: 'E', feature_flag_key: 'k', start_date: new Date(T0 - DAY).toISOString() })
  const rows = []
  for (let i = 0; i < 60; i++) {
    const id = `p${i}`
    const at = T0 - DAY + i * 600_000
    const groups = [`c${i % 3}`, '', '', '', ''] as const
    rows.push({ distinctId: id, event: '$feature_flag_called', at, groups, properties: { $feature_flag: 'k', $feature_flag_response: i % 7 === 0 ? 'test' : i % 2 === 0 ? 'control' : 'test', $browser: i % 3 === 0 ? 'Chrome' : null } })
    if (i % 11 === 0) rows.push({ distinctId: id, event: '$feature_flag_called', at: at + 1000, properties: { $feature_flag: 'k', $feature_flag_response: 'control' } })
    for (let k = 0; k < i % 4; k++) {
      rows.push({ distinctId: id, event: EVENTS[k], at: at + (k + 1) * HOUR, elementsChain: k % 2 ? 'a.btn:href="/x"nth-child="1"nth-of-type="1"text="Go"' : '', properties: { amount: [5, '7', 'n/a', null, 1e300][k % 5], plan: k % 2 === 0 ? 'pro' : 'free', $session_id: `${id}-${k}`, nested: { a: [1] } } })
    }
    rows.push({ distinctId: id, event: 'clicked', at: at - 2 * HOUR })
  }
  await w.events(rows)
  // persons.db with the same distinct ids: plans of every third person, three companies (group type 0) of the
  // exposures, a static cohort (1) and dynamic ones.
  const persons = harness()
  const companies = [0, 1, 2].map((k) => ev('$groupidentify', 'p0', { $group_type: 'company', $group_key: `c${k}`, $group_set: { plan: k === 0 ? 'pro' : 'free', amount: k } }, { team_id: w.project.id }))
  persons.db.transaction(() => persons.stage.process([...Array.from({ length: 60 }, (_, i) => ev('$identify', `p${i}`, { $set: { plan: i % 3 === 0 ? 'pro' : 'free', amount: i } }, { team_id: w.project.id })), ...companies]))()
  new StaticCohortWriter(persons.db).replaceMembers(w.project.id, 1, ['p1', 'p2', 'p3'])
  const cohorts = new Map([
    [1, { is_static: true, deleted: false, filters: null }],
    [2, { is_static: false, deleted: false, filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person' }] }] } } }],
    [3, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'x', type: 'behavioral', value: 'performed_event' }] } } }],
  ])
  const runner = new ExperimentQueryRunner({
    events: w.store!,
    experiments: w.experiments,
    actionById: (teamId, id) => w.m.actions.byId(teamId, id),
    persons: inPlaceScans(persons.db, compileSearchRegex).listing,
    cohortById: (teamId, id) => (teamId === w.project.id ? (cohorts.get(id) ?? null) : null),
  })
  const answers: Array<Promise<string>> = []
  fuzzCases(t, RUN, 'query', (rng) => {
    const query: Record<string, unknown> = rng.chance(0.85)
      ? { kind: 'ExperimentQuery', experiment_id: e.id, metric: metric(rng) }
      : { kind: 'ExperimentExposureQuery', experiment_id: e.id, ...(rng.chance(0.5) ? { start_date: rng.pick([null, new Date(T0 - 2 * DAY).toISOString(), 'soon', 5]) } : {}) }
    const body = rng.chance(0.75) ? { query } : rng.chance(0.8) ? { query: mutate(rng, query) } : randomJson(rng, 3)
    // The runner is asynchronous: each answer is settled below, its outcome judged there.
    answers.push(
      runner.run(w.project, body, T0 + DAY).then(
        () => 'accepted some',
        (error: unknown) => {
          if (error instanceof Error && 'status' in error && typeof error.status === 'number' && error.status >= 400 && error.status < 500) return `${error.status}`
          throw error
        },
      ),
    )
    return 'accepted some'
  })
  const outcomes = new Map<string, number>()
  const crashes: string[] = []
  for (const [i, answer] of answers.entries()) {
    try {
      const outcome = await answer
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
    } catch (error) {
      crashes.push(`case ${i}: ${error instanceof Error ? error.stack : String(error)}`.slice(0, 1500))
    }
  }
  t.same(crashes.slice(0, 5), [], `every query is answered or refused with a 4xx (reproduce one: FUZZ_SEED=${RUN.seed} FUZZ_CASE=<n>)`)
  t.ok((outcomes.get('accepted some') ?? 0) > RUN.cases / 10, `a fair share answered: ${JSON.stringify(Object.fromEntries(outcomes))}`)
})
