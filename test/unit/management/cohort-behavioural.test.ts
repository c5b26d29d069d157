import t from 'tap'
import { behaviouralReading, evaluatedCohortCondition, evaluatedCohortsNamed, type BehaviouralReading, type CohortSource, type PerformedReader } from '../../../src/management/index.js'
import type { TallyQuery, TallyRow, TimesQuery, TimesRow } from '../../../src/storage/events/index.js'

const TEAM = 3
const NOW = Date.parse('2026-03-31T12:00:00Z')
const DAY = 86_400_000
const leaf = (extra: Record<string, unknown> = {}) => ({ type: 'behavioral', key: '$pageview', value: 'performed_event', event_type: 'events', time_value: 30, time_interval: 'day', ...extra })
const tallyOf = (extra: Record<string, unknown>) => behaviouralReading(leaf(extra), TEAM, NOW) as Extract<BehaviouralReading, { query: unknown }>
const queryOf = (extra: Record<string, unknown>) => tallyOf(extra).query
/** A reader of tallies only: these cohorts have no sequence. */
const tallyReader = (tallies: (q: TallyQuery) => Promise<TallyRow[]>): PerformedReader => ({ tallies, times: async () => t.fail('no sequence is read') as never, actionById: () => null })

t.test('a performed_event condition reads who sent the event from the start of its window up to now', async (t) => {
  t.same(behaviouralReading(leaf(), TEAM, NOW), { query: { teamId: TEAM, event: '$pageview', after: NOW - 30 * DAY, before: NOW, properties: [], windows: [[NOW - 30 * DAY, NOW]] }, checks: null, atLeast: 0 })
  t.equal(queryOf({ time_value: '2', time_interval: 'week' }).after, NOW - 14 * DAY, 'a number as text')
  t.equal(queryOf({ time_value: 1, time_interval: 'month' }).after, Date.parse('2026-02-28T12:00:00Z'), 'a calendar month, the day kept within it')
  t.equal(queryOf({ explicit_datetime: '-12h' }).after, NOW - DAY / 2, 'explicit_datetime wins')
  t.equal(queryOf({ explicit_datetime: '2026-01-01' }).after, Date.parse('2026-01-01'), 'or a date')
  t.same(queryOf({ event_filters: [{ key: '$browser', value: 'Firefox', type: 'event' }] }).properties, [{ key: '$browser', operator: 'exact', value: 'Firefox' }])
})

t.test("the other kinds read their windows and check a person's tallies as PostHog's cohort query does", async (t) => {
  const reading = tallyOf
  const start = NOW - 30 * DAY
  const recent = NOW - 7 * DAY
  t.same(reading({ value: 'performed_event_multiple', operator: 'gte', operator_value: 3 }), {
    query: { teamId: TEAM, event: '$pageview', after: start, before: NOW, properties: [], windows: [[start, NOW]] },
    checks: [{ column: 1, operator: '>=', value: 3 }],
    atLeast: 1,
  })
  t.same(reading({ value: 'performed_event_first_time' }), {
    query: { teamId: TEAM, event: '$pageview', before: NOW, properties: [], windows: [] },
    checks: [{ column: 0, operator: '>=', value: start }],
    atLeast: 1,
  }, 'every event before now is read: the first one must lie in the window')
  t.same(reading({ value: 'stopped_performing_event', seq_time_value: 7, seq_time_interval: 'day' }), {
    query: { teamId: TEAM, event: '$pageview', after: start, before: NOW, properties: [], windows: [[start, recent], [recent, NOW]] },
    checks: [{ column: 1, operator: '>', value: 0 }, { column: 2, operator: '=', value: 0 }],
    atLeast: 2,
  })
  t.same(reading({ value: 'restarted_performing_event', seq_time_value: 7, seq_time_interval: 'day' }), {
    query: { teamId: TEAM, event: '$pageview', before: NOW, properties: [], windows: [[0, start], [start, recent], [recent, NOW]] },
    checks: [{ column: 1, operator: '>', value: 0 }, { column: 2, operator: '=', value: 0 }, { column: 3, operator: '>', value: 0 }],
    atLeast: 3,
  })
  const weekly = reading({ value: 'performed_event_regularly', time_value: 1, time_interval: 'week', total_periods: 3, min_periods: 2, operator: 'gte', operator_value: 2 })
  const week = 7 * DAY
  t.same(weekly.query.windows, [[NOW - week, NOW], [NOW - 2 * week, NOW - week], [NOW - 3 * week, NOW - 2 * week]], 'the last three weeks, newest first')
  t.same([weekly.query.after, weekly.checks, weekly.atLeast], [NOW - 3 * week, [1, 2, 3].map((column) => ({ column, operator: '>=', value: 2 })), 2])
})

t.test('what skylark cannot read, or PostHog refuses, is a 400 naming it', async (t) => {
  const refused = (extra: Record<string, unknown>, detail: string | RegExp) => t.throws(() => behaviouralReading(leaf(extra), TEAM, NOW), { code: 'invalid', detail }, String(detail))
  refused({ value: 'performed_event_again' }, 'The behavioural condition "performed_event_again" is not one PostHog has.')
  refused({ event_type: 'actions', key: 4 }, 'The behavioural condition names action 4, which does not exist.')
  refused({ event_type: 'cohorts', key: 4 }, 'A behavioural condition\'s event_type must be "events" or "actions".')
  refused({ value: 'performed_event_sequence', seq_event_type: 'actions', seq_event: 4, seq_time_value: 1, seq_time_interval: 'day' }, 'The behavioural condition names action 4, which does not exist.')
  refused({ value: 'performed_event_sequence', seq_event: 5, seq_time_value: 1, seq_time_interval: 'day' }, 'A behavioural condition on an event names it by seq_event.')
  refused({ value: 'performed_event_sequence', seq_event: 'x', seq_time_value: 1, seq_time_interval: 'fortnight' }, "The behavioural condition's seq_time_interval must be one of minute, hour, day, week, month, year.")
  refused({ value: 'performed_event_sequence', seq_event: 'x', seq_time_interval: 'day' }, 'The behavioural condition needs a positive integer seq_time_value.')
  refused({ explicit_datetime: '-3d', explicit_datetime_to: 'later' }, /explicit_datetime_to "later" is not a date/)
  refused({ time_value: 0 }, /positive integer time_value/)
  refused({ time_interval: 'fortnight' }, /time_interval must be one of hour, day, week, month, year/)
  refused({ explicit_datetime: 'soon' }, /explicit_datetime "soon" is not a date/)
  refused({ event_filters: [{ key: 'plan', value: 'pro', type: 'person' }] }, 'A behavioural condition filters on event properties only.')
  refused({ value: 'stopped_performing_event', seq_time_value: 60, seq_time_interval: 'day' }, 'seq_date must be more recent than date')
  refused({ value: 'stopped_performing_event' }, 'The behavioural condition needs a positive integer seq_time_value.')
  refused({ value: 'performed_event_regularly', total_periods: 2, min_periods: 3, operator_value: 1 }, 'min_periods (3) cannot be greater than total_periods (2)')
  refused({ value: 'performed_event_regularly', operator_value: 1 }, /needs positive integers time_value, total_periods and min_periods/)
})

t.test('a cohort is evaluated with its performed_event conditions read once each, negations and nested cohorts included', async (t) => {
  const cohorts = new Map<number, CohortSource>([
    [1, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [leaf({ negation: true }), { type: 'cohort', key: 'id', value: 2 }] } } }],
    [2, { is_static: false, deleted: false, filters: { properties: { type: 'OR', values: [leaf(), { type: 'person', key: 'plan', value: 'pro' }] } } }],
  ])
  const reads: TallyQuery[] = []
  const read = async (q: TallyQuery) => {
    reads.push(q)
    return [['anon-1', NOW - DAY, 1], ['ada', NOW - 2 * DAY, 3]] satisfies TallyRow[]
  }
  const condition = await evaluatedCohortCondition(1, (team, id) => (team === TEAM ? (cohorts.get(id) ?? null) : null), TEAM, tallyReader(read), NOW)
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
  const read = async () => (reads++, [['ada', NOW - DAY, 1]] satisfies TallyRow[])
  const tree = { type: 'OR', values: [{ type: 'cohort', key: 'id', value: 1 }, { type: 'AND', values: [{ type: 'cohort', key: 'id', value: '1', operator: 'not_in' }, { type: 'cohort', key: 'id', value: 2 }] }, { type: 'cohort', key: 'id', value: 3 }, { type: 'cohort', key: 'id', value: 9 }] }
  const evaluated = await evaluatedCohortsNamed(tree, (_, id) => cohorts.get(id) ?? null, TEAM, tallyReader(read), NOW)
  t.same([...evaluated], [[1, { type: 'AND', values: [{ personsOf: ['ada'], teamId: TEAM }] }]])
  t.equal(reads, 1)
  t.same(await evaluatedCohortsNamed('not a tree', (_, id) => cohorts.get(id) ?? null, TEAM, tallyReader(read), NOW), new Map())
})

t.test("a performed_event_multiple condition compares each person's count, as PostHog's get_count_operator reads its operator", async (t) => {
  const multiple = (extra: Record<string, unknown>) => leaf({ value: 'performed_event_multiple', operator_value: 2, ...extra })
  const cohortOf = (condition: Record<string, unknown>) => new Map<number, CohortSource>([[1, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [condition, leaf()] } } }]])
  const reads: TallyQuery[] = []
  const read = async (q: TallyQuery) => (reads.push(q), [['anon-1', NOW - DAY, 1], ['ada', NOW - 2 * DAY, 3]] satisfies TallyRow[])
  const evaluate = (condition: Record<string, unknown>) => evaluatedCohortCondition(1, (_, id) => cohortOf(condition).get(id) ?? null, TEAM, tallyReader(read), NOW)
  const ids = ['anon-1', 'ada']
  for (const [operator, sql] of [['gte', '>='], ['lte', '<='], ['gt', '>'], ['lt', '<'], ['eq', '='], ['exact', '='], [undefined, '=']]) {
    t.same(await evaluate(multiple({ operator })), {
      type: 'AND',
      values: [{ personsOf: ids, teamId: TEAM, tallies: { rows: [[NOW - DAY, 1], [NOW - 2 * DAY, 3]], checks: [{ column: 1, operator: sql, value: 2 }], atLeast: 1 } }, { personsOf: ids, teamId: TEAM }],
    }, `${operator ?? 'no operator'} is ${sql}`)
  }
  t.equal(reads.length, 7, 'the counted condition and the plain one read the same events once per evaluation')
  t.match(await evaluate(multiple({ operator_value: '4' })), { values: [{ tallies: { checks: [{ value: 4 }] } }] }, 'a number as text')
  await t.rejects(evaluate(multiple({ operator: 'between' })), { code: 'invalid', detail: 'count_operator must be gte, lte, eq, or None' })
  await t.rejects(evaluate(multiple({ operator_value: 0 })), { code: 'invalid', detail: 'A performed_event_multiple condition needs a positive integer operator_value.' })
  await t.rejects(evaluate(multiple({ operator_value: undefined })), { code: 'invalid', detail: /positive integer operator_value/ })
})

t.test('a sequence reads the times of both events since the start; its window is in fixed seconds, as PostHog\'s funnel', async (t) => {
  const sequence = (extra: Record<string, unknown>) => behaviouralReading(leaf({ value: 'performed_event_sequence', seq_event: 'signup', seq_time_value: 2, seq_time_interval: 'day', ...extra }), TEAM, NOW)
  const step = (event: string) => ({ event, properties: [] })
  t.same(sequence({}), { times: { teamId: TEAM, steps: [step('$pageview'), step('signup')], after: NOW - 30 * DAY, before: NOW }, windowMs: 2 * DAY })
  t.same(sequence({ seq_event: '$pageview' }), { times: { teamId: TEAM, steps: [step('$pageview')], after: NOW - 30 * DAY, before: NOW }, windowMs: 2 * DAY }, 'one event: two of them')
  t.equal((sequence({ seq_time_value: 1, seq_time_interval: 'month' }) as { windowMs: number }).windowMs, 30 * DAY, 'a month is 30 days')
  t.equal((sequence({ seq_time_value: 5, seq_time_interval: 'minute' }) as { windowMs: number }).windowMs, 300_000)
  t.same((sequence({ explicit_datetime: '-10d', explicit_datetime_to: '-2d' }) as { times: TimesQuery }).times, { teamId: TEAM, steps: [step('$pageview'), step('signup')], after: NOW - 10 * DAY, before: NOW - 2 * DAY }, 'explicit_datetime_to ends it')
  t.equal(queryOf({ explicit_datetime: '-10d', explicit_datetime_to: '-2d' }).before, NOW - 2 * DAY, 'and performed_event')
  t.equal(queryOf({ explicit_datetime_to: '-2d' }).before, NOW, 'only beside an explicit_datetime')
})

t.test("a sequence cohort sends each id's times to persons.db, or true where the id's own events make it", async (t) => {
  const cohorts = new Map<number, CohortSource>([[1, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [leaf({ value: 'performed_event_sequence', seq_event: 'signup', seq_time_value: 1, seq_time_interval: 'hour', negation: true }), leaf({ value: 'performed_event_sequence', seq_event: 'signup', seq_time_value: 1, seq_time_interval: 'hour' })] } } }]])
  const reads: TimesQuery[] = []
  const times = async (q: TimesQuery) => {
    reads.push(q)
    return [['ada', [NOW - 3 * DAY], [NOW - 3 * DAY + 60_000]], ['anon', [NOW - DAY], []], ['bob', [], [NOW - 2 * DAY]]] satisfies TimesRow[]
  }
  const condition = await evaluatedCohortCondition(1, (_, id) => cohorts.get(id) ?? null, TEAM, { tallies: async () => t.fail('no tally') as never, times, actionById: () => null }, NOW)
  const who = { personsOf: ['ada', 'anon', 'bob'], teamId: TEAM, sequence: { rows: [true, [[NOW - DAY], []], [[], [NOW - 2 * DAY]]], windowMs: 3_600_000 } }
  t.same(condition, { type: 'AND', values: [{ not: who }, who] })
  t.equal(reads.length, 1, 'read once')
})

t.test("an action's events are read as its steps match them: the steps' events where each names one", async (t) => {
  const steps = (events: Array<string | null>) => events.map((event) => ({ event, properties: null, selector: null, tag_name: null, text: null, text_matching: null, href: null, href_matching: null, url: null, url_matching: null }))
  const actions = new Map([[7, { steps: steps(['purchase', 'upgrade']) }], [8, { steps: steps(['purchase', null]) }], [9, { steps: [] }]])
  const actionById = (team: number, id: number) => (team === TEAM ? (actions.get(id) ?? null) : null)
  const reading = (extra: Record<string, unknown>) => behaviouralReading(leaf({ event_type: 'actions', ...extra }), TEAM, NOW, actionById) as Extract<BehaviouralReading, { query: unknown }>
  const seven = reading({ key: 7, event_filters: [{ key: 'plan', value: 'pro', type: 'event' }] }).query
  t.same(seven.event, ['purchase', 'upgrade'])
  t.match(seven.properties, [{ actionSteps: [{ event: 'purchase' }, { event: 'upgrade' }] }, { key: 'plan', value: 'pro' }], 'the action, then the event filters')
  t.equal(reading({ key: '8' }).query.event, undefined, 'a step without an event: every event is looked at; the id as text')
  t.same(reading({ key: 9 }).query.properties, [{ actionSteps: [] }], "an action without steps: every event, as PostHog's action_to_expr")
  t.throws(() => behaviouralReading(leaf({ event_type: 'actions', key: 7 }), TEAM + 1, NOW, actionById), { code: 'invalid', detail: 'The behavioural condition names action 7, which does not exist.' }, "another project's")
  const sequence = behaviouralReading(leaf({ value: 'performed_event_sequence', seq_event_type: 'actions', seq_event: 7, seq_time_value: 1, seq_time_interval: 'day' }), TEAM, NOW, actionById) as { times: TimesQuery }
  t.match(sequence.times.steps, [{ event: '$pageview', properties: [] }, { event: ['purchase', 'upgrade'], properties: [{ actionSteps: [{ event: 'purchase' }, { event: 'upgrade' }] }] }], 'a pageview, then the action')
})
