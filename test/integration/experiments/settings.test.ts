/**
 * The fields of PostHog's new metrics engine and the `feature_flag` write object over HTTP against the
 * real server, as an API client or PostHog's MCP tools send them: what they write reads back, what the
 * flag becomes (through the flag API and /decide), and PostHog's refusals in the contract's envelope.
 */
import t from 'tap'
import { experimentServer, type ExperimentServer } from './fixture.js'

const pageviews = { kind: 'ExperimentMetric', metric_type: 'mean', goal: 'increase', source: { kind: 'EventsNode', event: '$pageview' } }

t.test('experiment settings over HTTP', async (t) => {
  let f: ExperimentServer
  t.before(async () => {
    f = await experimentServer()
    // The metrics below name these: PostHog refuses metric events a project never ingested.
    const at = Date.now()
    await f.send([{ event: '$pageview', distinct_id: 'seed', at }, { event: 'paid', distinct_id: 'seed', at }])
    await f.waitFor('distinct_id=seed', 2)
  })
  t.teardown(() => f?.close())
  const url = (id: number, action = '') => `${f.experiments}${id}/${action ? `${action}/` : ''}`

  t.test('an MCP-style create: flag config in feature_flag, metrics and settings, all read back', async (t) => {
    const created = await f.api('POST', f.experiments, {
      name: 'Pricing page',
      feature_flag_key: 'pricing-page',
      feature_flag: {
        filters: {
          multivariate: { variants: [{ key: 'control', split_percent: 50 }, { key: 'cheaper', split_percent: 50 }] },
          groups: [{ properties: [], rollout_percentage: 100 }],
        },
        ensure_experience_continuity: true,
      },
      metrics: [pageviews],
      stats_config: { method: 'frequentist' },
      running_time_calculation: { minimum_detectable_effect: 30 },
      allow_unknown_events: true,
    })
    t.equal(created.status, 201, created.text)
    const metric = created.body.metrics[0]
    t.match(created.body, {
      feature_flag: { key: 'pricing-page', ensure_experience_continuity: true, filters: { multivariate: { variants: [{ key: 'control' }, { key: 'cheaper' }] } } },
      parameters: { feature_flag_variants: [{ key: 'control', split_percent: 50 }, { key: 'cheaper', split_percent: 50 }], ensure_experience_continuity: true },
      metrics: [{ ...pageviews, uuid: String, fingerprint: String }],
      primary_metrics_ordered_uuids: [metric.uuid],
      metrics_secondary: [],
      stats_config: { method: 'frequentist' },
      exposure_criteria: { filterTestAccounts: true },
      running_time_calculation: { minimum_detectable_effect: 30 },
      excluded_variants: null,
      only_count_matured_users: false,
      conclusion: null,
      is_legacy: false,
    })
    const got = await f.api('GET', url(created.body.id))
    t.same(got.body, created.body, 'GET answers what was stored')
    const listed = await f.api('GET', `${f.experiments}?search=Pricing`)
    t.same(listed.body.results[0].metrics, created.body.metrics, 'list items carry the metrics too')

    const flag = await f.api('GET', `${f.base}/feature_flags/${created.body.feature_flag.id}/`)
    t.match(flag.body, { ensure_experience_continuity: true, filters: { multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'cheaper', rollout_percentage: 50 }] } } })
  })

  t.test("metrics naming events the project never ingested are refused unless allow_unknown_events is set, as PostHog's", async (t) => {
    const typo = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'paid' }, { kind: 'EventsNode', event: 'signed_up' }] }
    const ratio = { kind: 'ExperimentMetric', metric_type: 'ratio', numerator: { kind: 'EventsNode', event: 'zz' }, denominator: { kind: 'EventsNode', event: '$pageview' } }
    const refused = await f.api('POST', f.experiments, { name: 'Typo', feature_flag_key: 'typo', metrics: [typo], metrics_secondary: [ratio] })
    t.equal(refused.status, 400)
    t.match(refused.body, { type: 'validation_error', code: 'invalid', attr: null, detail: /^Event\(s\) 'signed_up' not found\. No events with these names have been ingested by this project\./ })
    t.equal(f.m.featureFlags.repository.liveByKey(f.server.boot.project_id, 'typo'), null, 'nothing was created')
    const secondary = await f.api('POST', f.experiments, { name: 'Typo', feature_flag_key: 'typo', metrics_secondary: [ratio] })
    t.match(secondary.body, { detail: /^Event\(s\) 'zz' not found\./ }, 'the secondary list is checked too')
    const blankIsAllEvents = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: ' ' } }
    const known = await f.api('POST', f.experiments, { name: 'Known', feature_flag_key: 'known', metrics: [pageviews, blankIsAllEvents] })
    t.equal(known.status, 201, known.text)

    const allowed = await f.api('POST', f.experiments, { name: 'Ahead', feature_flag_key: 'ahead', metrics: [typo], allow_unknown_events: true })
    t.equal(allowed.status, 201, allowed.text)
    t.notOk('allow_unknown_events' in allowed.body, 'write-only')
    const url = `${f.experiments}${allowed.body.id}/`
    const patched = await f.api('PATCH', url, { metrics_secondary: [ratio] })
    t.match(patched, { status: 400, body: { detail: /^Event\(s\) 'zz' not found\./ } }, 'an update is checked for the lists it sends')
    const renamed = await f.api('PATCH', url, { name: 'Ahead of instrumentation' })
    t.equal(renamed.status, 200, 'lists an update leaves alone are not checked again')
    const copy = await f.api('POST', `${url}duplicate/`, { feature_flag_key: 'ahead-copy' })
    t.equal(copy.status, 201, `duplicate copies the metrics as they are: ${copy.text}`)

    const named = async (query: string) => {
      const res = await f.api('GET', `${f.experiments}?${query}`)
      t.equal(res.status, 200, res.text)
      return (res.body.results as Array<{ name: string }>).map((e) => e.name).sort()
    }
    t.same(await named('event=signed_up'), ['Ahead of instrumentation', 'Ahead of instrumentation (Copy)'], 'the list filter `event` finds metrics on it')
    t.ok((await named('event=%24pageview')).includes('Known'))
    t.notOk((await named('event=%24pageview')).includes('Ahead of instrumentation'))
    t.same(await named('event=zz'), [], 'the refused PATCH stored nothing')
    t.same(await named('event=EventsNode'), [], 'only an EventsNode event matches, not any value')
  })

  t.test('PATCH round-trips metrics, orderings and conclusions; a GET echoed back answers the same', async (t) => {
    const e = (await f.api('POST', f.experiments, { name: 'Echo', feature_flag_key: 'echo', metrics: [pageviews] })).body
    const added = await f.api('PATCH', url(e.id), {
      metrics: [...e.metrics, { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'paid' }] }],
      metrics_secondary: [{ ...pageviews, uuid: 'secondary-1' }],
      exposure_criteria: { filterTestAccounts: false },
      excluded_variants: [],
      conclusion: 'inconclusive',
      conclusion_comment: 'too few users',
      scheduling_config: { auto_end: false },
    })
    t.equal(added.status, 200, added.text)
    t.equal(added.body.metrics.length, 2)
    t.same(added.body.primary_metrics_ordered_uuids, added.body.metrics.map((m: { uuid: string }) => m.uuid))
    t.same(added.body.secondary_metrics_ordered_uuids, ['secondary-1'])
    t.match(added.body, { exposure_criteria: { filterTestAccounts: false }, conclusion: 'inconclusive', conclusion_comment: 'too few users', scheduling_config: { auto_end: false } })

    const { id: _id, type: _type, ...echo } = added.body
    const echoed = await f.api('PATCH', url(e.id), echo)
    t.equal(echoed.status, 200, echoed.text)
    // The echo stores `parameters.ensure_experience_continuity` (PostHog strips only variants, rollout and
    // aggregation from stored parameters), so updated_at moves; the answer is otherwise the same.
    t.same({ ...echoed.body, updated_at: null }, { ...added.body, updated_at: null })

    const reordered = await f.api('PATCH', url(e.id), { primary_metrics_ordered_uuids: [...added.body.primary_metrics_ordered_uuids].reverse() })
    t.same(reordered.body.primary_metrics_ordered_uuids, [...added.body.primary_metrics_ordered_uuids].reverse())
  })

  t.test('end and ship_variant store the conclusion; duplicate copies the metrics with new uuids', async (t) => {
    const e = (await f.api('POST', f.experiments, { name: 'Concluded', feature_flag_key: 'concluded', metrics: [pageviews] })).body
    await f.api('POST', url(e.id, 'launch'))
    const ended = await f.api('POST', url(e.id, 'end'), { conclusion: 'won', conclusion_comment: 'clear win' })
    t.match(ended.body, { status: 'stopped', conclusion: 'won', conclusion_comment: 'clear win' })
    const shipped = await f.api('POST', url(e.id, 'ship_variant'), { variant_key: 'test' })
    t.match(shipped.body, { conclusion: 'won', conclusion_comment: 'clear win' }, 'shipping without a conclusion keeps it')
    t.match((await f.api('GET', url(e.id))).body, { conclusion: 'won' })

    const copy = await f.api('POST', url(e.id, 'duplicate'), { feature_flag_key: 'concluded-again' })
    t.equal(copy.status, 201, copy.text)
    t.match(copy.body, { status: 'draft', conclusion: null, metrics: [{ metric_type: 'mean' }], stats_config: { method: 'bayesian' } })
    t.not(copy.body.metrics[0].uuid, e.metrics[0].uuid)
  })

  t.test('the running guard and the existing-flag refusal apply to the feature_flag object', async (t) => {
    const e = (await f.api('POST', f.experiments, { name: 'Live', feature_flag_key: 'live', start_date: new Date().toISOString() })).body
    const refused = await f.api('PATCH', url(e.id), { feature_flag: { filters: { groups: [{ rollout_percentage: 100 }] } } })
    t.match(refused, { status: 400, body: { type: 'validation_error', code: 'invalid', attr: 'feature_flag', detail: /^This experiment is running\./ } })
    const applied = await f.api('PATCH', url(e.id), { feature_flag: { filters: { groups: [{ rollout_percentage: 0 }] } }, update_feature_flag_params: true })
    t.equal(applied.status, 200, applied.text)
    const decide = await f.server.request('POST', '/decide/?v=3', { body: { api_key: f.server.boot.project_api_key, distinct_id: 'someone' } })
    t.equal(decide.body.featureFlags.live, false, 'a 0% rollout serves nobody')

    const linked = await f.api('POST', f.experiments, { name: 'Again', feature_flag_key: 'live', feature_flag: { ensure_experience_continuity: true } })
    t.match(linked, { status: 400, body: { attr: 'feature_flag', detail: /^A feature flag with key 'live' already exists/ } })
  })

  t.test('PostHog’s refusals arrive in the contract’s envelope', async (t) => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ feature_flag: { filters: { groups: [{ properties: [{ key: 'email' }] }] } } }, { code: 'max_length', attr: 'feature_flag.filters.groups.0.properties' }],
      [{ feature_flag: { filters: {}, extra: 1 } }, { code: 'invalid', attr: 'feature_flag.extra', detail: 'Unsupported key for the experiment feature_flag input.' }],
      [{ metrics: [{ kind: 'ExperimentFunnelsQuery' }] }, { attr: 'metrics', detail: /legacy metric kind 'ExperimentFunnelsQuery' is no longer supported/ }],
      [{ stats_config: { method: 'magic' } }, { attr: null, detail: "Invalid stats method: 'magic'. Must be one of: bayesian, frequentist" }],
      [{ conclusion: 'meh' }, { code: 'invalid_choice', attr: 'conclusion' }],
      [{ saved_metrics_ids: [{ id: 1 }] }, { attr: 'saved_metrics_ids', detail: 'Saved metric does not exist or does not belong to this project' }],
    ]
    for (const [body, error] of cases) {
      const res = await f.api('POST', f.experiments, { name: 'Bad', feature_flag_key: `bad-${Math.random().toString(36).slice(2)}`, ...body })
      t.match(res, { status: 400, body: { type: 'validation_error', ...error } }, JSON.stringify(body))
    }
  })
})
