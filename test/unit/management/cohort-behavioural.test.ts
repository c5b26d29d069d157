import t from 'tap'
import { evaluatedCohortCondition, evaluatedCohortsNamed, performedEvent, type CohortSource, type PerformedEvent } from '../../../src/management/index.js'

const TEAM = 3
const NOW = Date.parse('2026-03-31T12:00:00Z')
const DAY = 86_400_000
const leaf = (extra: Record<string, unknown> = {}) => ({ type: 'behavioral', key: '$pageview', value: 'performed_event', event_type: 'events', time_value: 30, time_interval: 'day', ...extra })

t.test('a performed_event condition reads who sent the event from the start of its window up to now', async (t) => {
  t.same(performedEvent(leaf(), TEAM, NOW), { teamId: TEAM, event: '$pageview', after: NOW - 30 * DAY, before: NOW, properties: [] })
  t.equal(performedEvent(leaf({ time_value: '2', time_interval: 'week' }), TEAM, NOW).after, NOW - 14 * DAY, 'a number as text')
  t.equal(performedEvent(leaf({ time_value: 1, time_interval: 'month' }), TEAM, NOW).after, Date.parse('2026-02-28T12:00:00Z'), 'a calendar month, the day kept within it')
  t.equal(performedEvent(leaf({ explicit_datetime: '-12h' }), TEAM, NOW).after, NOW - DAY / 2, 'explicit_datetime wins')
  t.equal(performedEvent(leaf({ explicit_datetime: '2026-01-01' }), TEAM, NOW).after, Date.parse('2026-01-01'), 'or a date')
  t.same(performedEvent(leaf({ event_filters: [{ key: '$browser', value: 'Firefox', type: 'event' }] }), TEAM, NOW).properties, [{ key: '$browser', operator: 'exact', value: 'Firefox' }])
})

t.test('the behavioural conditions skylark cannot read are refused, naming what', async (t) => {
  t.throws(() => performedEvent(leaf({ value: 'performed_event_first_time' }), TEAM, NOW), { code: 'invalid', detail: 'The behavioural condition "performed_event_first_time" is one skylark can\'t evaluate (only performed_event and performed_event_multiple are).' })
  t.throws(() => performedEvent(leaf({ event_type: 'actions', key: 4 }), TEAM, NOW), { code: 'invalid', detail: /names an event .* not an action's/ })
  t.throws(() => performedEvent(leaf({ time_value: 0 }), TEAM, NOW), { code: 'invalid', detail: /positive integer time_value/ })
  t.throws(() => performedEvent(leaf({ time_interval: 'fortnight' }), TEAM, NOW), { code: 'invalid', detail: /time_interval must be one of hour, day, week, month, year/ })
  t.throws(() => performedEvent(leaf({ explicit_datetime: 'soon' }), TEAM, NOW), { code: 'invalid', detail: /explicit_datetime "soon" is not a date/ })
  t.throws(() => performedEvent(leaf({ event_filters: [{ key: 'plan', value: 'pro', type: 'person' }] }), TEAM, NOW), { code: 'invalid', detail: 'A performed_event condition filters on event properties only.' })
})

t.test('a cohort is evaluated with its performed_event conditions read once each, negations and nested cohorts included', async (t) => {
  const cohorts = new Map<number, CohortSource>([
    [1, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [leaf({ negation: true }), { type: 'cohort', key: 'id', value: 2 }] } } }],
    [2, { is_static: false, deleted: false, filters: { properties: { type: 'OR', values: [leaf(), { type: 'person', key: 'plan', value: 'pro' }] } } }],
  ])
  const reads: PerformedEvent[] = []
  const read = async (q: PerformedEvent) => {
    reads.push(q)
    return [['anon-1', 1], ['ada', 3]] as const
  }
  const condition = await evaluatedCohortCondition(1, (team, id) => (team === TEAM ? (cohorts.get(id) ?? null) : null), TEAM, read, NOW)
  const who = { personsOf: ['anon-1', 'ada'], teamId: TEAM }
  t.same(condition, { type: 'AND', values: [{ not: who }, { type: 'OR', values: [who, { key: 'plan', operator: 'exact', value: 'pro' }] }] })
  t.equal(reads.length, 1, 'the same condition, negated in one cohort, is read once')
  await t.rejects(evaluatedCohortCondition(1, (_, id) => cohorts.get(id) ?? null, TEAM, null, NOW), { code: 'invalid', detail: /^Cohort 1 has conditions skylark can't evaluate here/ }, 'without an event store: refused')
})

t.test('the dynamic cohorts a filter tree names are evaluated first, each once; static, deleted and unknown ones are left to the filter', async (t) => {
  const cohorts = new Map<number, CohortSource>([
    [1, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [leaf()] } } }],
    [2, { is_static: true, deleted: false, filters: null }],
    [3, { is_static: false, deleted: true, filters: { properties: { type: 'AND', values: [leaf()] } } }],
  ])
  let reads = 0
  const read = async () => (reads++, [['ada', 1]] as const)
  const tree = { type: 'OR', values: [{ type: 'cohort', key: 'id', value: 1 }, { type: 'AND', values: [{ type: 'cohort', key: 'id', value: '1', operator: 'not_in' }, { type: 'cohort', key: 'id', value: 2 }] }, { type: 'cohort', key: 'id', value: 3 }, { type: 'cohort', key: 'id', value: 9 }] }
  const evaluated = await evaluatedCohortsNamed(tree, (_, id) => cohorts.get(id) ?? null, TEAM, read, NOW)
  t.same([...evaluated], [[1, { type: 'AND', values: [{ personsOf: ['ada'], teamId: TEAM }] }]])
  t.equal(reads, 1)
  t.same(await evaluatedCohortsNamed('not a tree', (_, id) => cohorts.get(id) ?? null, TEAM, read, NOW), new Map())
})

t.test("a performed_event_multiple condition compares each person's count, as PostHog's get_count_operator reads its operator", async (t) => {
  const multiple = (extra: Record<string, unknown>) => leaf({ value: 'performed_event_multiple', operator_value: 2, ...extra })
  const cohortOf = (condition: Record<string, unknown>) => new Map<number, CohortSource>([[1, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [condition, leaf()] } } }]])
  const reads: PerformedEvent[] = []
  const read = async (q: PerformedEvent) => (reads.push(q), [['anon-1', 1], ['ada', 3]] as const)
  const evaluate = (condition: Record<string, unknown>) => evaluatedCohortCondition(1, (_, id) => cohortOf(condition).get(id) ?? null, TEAM, read, NOW)
  const ids = ['anon-1', 'ada']
  for (const [operator, sql] of [['gte', '>='], ['lte', '<='], ['gt', '>'], ['lt', '<'], ['eq', '='], ['exact', '='], [undefined, '=']]) {
    t.same(await evaluate(multiple({ operator })), {
      type: 'AND',
      values: [{ personsOf: ids, teamId: TEAM, times: { counts: [1, 3], operator: sql, value: 2 } }, { personsOf: ids, teamId: TEAM }],
    }, `${operator ?? 'no operator'} is ${sql}`)
  }
  t.equal(reads.length, 7, 'the counted condition and the plain one read the same events once per evaluation')
  t.match(await evaluate(multiple({ operator_value: '4' })), { values: [{ times: { value: 4 } }] }, 'a number as text')
  await t.rejects(evaluate(multiple({ operator: 'between' })), { code: 'invalid', detail: 'count_operator must be gte, lte, eq, or None' })
  await t.rejects(evaluate(multiple({ operator_value: 0 })), { code: 'invalid', detail: 'A performed_event_multiple condition needs a positive integer operator_value.' })
  await t.rejects(evaluate(multiple({ operator_value: undefined })), { code: 'invalid', detail: /positive integer operator_value/ })
})
