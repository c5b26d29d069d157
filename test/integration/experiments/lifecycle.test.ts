/**
 * PostHog's experiment lifecycle actions over HTTP against the real server: launch, pause, resume, end,
 * archive, unarchive, reset, ship_variant and duplicate, with their refusals and what each does to the
 * flag, checked through the flag API and through /decide as an SDK sees it.
 */
import t from 'tap'
import { experimentServer, type ExperimentServer } from './fixture.js'

t.test('experiment lifecycle actions', async (t) => {
  let f: ExperimentServer
  t.before(async () => {
    f = await experimentServer()
  })
  t.teardown(() => f?.close())
  const act = (id: number, action: string, body?: unknown, key?: string) => f.api('POST', `${f.experiments}${id}/${action}/`, body, key)
  const flag = async (id: number) => (await f.api('GET', `${f.base}/feature_flags/${id}/`)).body
  /** The flag's value for a user as /decide answers it (undefined: not served). */
  const decide = async (key: string, distinctId: string) => {
    const res = await f.server.request('POST', '/decide/?v=3', { body: { api_key: f.server.boot.project_api_key, distinct_id: distinctId } })
    return res.body.featureFlags[key]
  }
  const refused = (detail: string) => ({ status: 400, body: { type: 'validation_error', code: 'invalid', detail, attr: null } })

  t.test('launch, pause, resume, end: each refused in the wrong state, each moving the flag as PostHog does', async (t) => {
    const e = (await f.api('POST', f.experiments, { name: 'Cycle', feature_flag_key: 'cycle' })).body
    for (const action of ['end', 'pause', 'resume', 'ship_variant']) {
      t.match(await act(e.id, action, { variant_key: 'test' }), refused('Experiment has not been launched yet.'), `${action} on a draft`)
    }
    t.match(await act(e.id, 'reset'), refused('Experiment is already in draft state.'))
    t.equal(await decide('cycle', 'u1'), undefined, 'a draft flag is not served')

    const launched = await act(e.id, 'launch')
    t.equal(launched.status, 200)
    t.match(launched.body, { status: 'running', start_date: String, feature_flag: { active: true } })
    t.ok(Math.abs(Date.parse(launched.body.start_date) - Date.now()) < 60_000, 'started now')
    t.ok(['control', 'test'].includes(await decide('cycle', 'u1')), 'launched: /decide serves a variant')
    t.match(await act(e.id, 'launch'), refused('Experiment has already been launched.'))

    t.match((await act(e.id, 'pause')).body, { status: 'paused', feature_flag: { active: false } })
    t.equal(await decide('cycle', 'u1'), undefined, 'paused: not served')
    t.match(await act(e.id, 'pause'), refused('Experiment is already paused.'))
    t.match((await act(e.id, 'resume')).body, { status: 'running', feature_flag: { active: true } })
    t.match(await act(e.id, 'resume'), refused('Experiment is not paused.'))

    const ended = await act(e.id, 'end', { conclusion: 'won', conclusion_comment: 'clear win' })
    t.match(ended.body, { status: 'stopped', end_date: String, feature_flag: { active: true }, conclusion: 'won', conclusion_comment: 'clear win' })
    t.ok(['control', 'test'].includes(await decide('cycle', 'u1')), 'ended: the flag keeps serving')
    t.match(await act(e.id, 'end'), refused('Experiment has already ended.'))
    t.match(await act(e.id, 'pause'), refused('Experiment has already ended.'))
    t.match(await act(e.id, 'end', { conclusion: 'meh' }), { status: 400, body: { code: 'invalid_choice', attr: 'conclusion', detail: '"meh" is not a valid choice.' } })

    const activity = f.db.prepare("SELECT detail FROM activity_log WHERE scope = 'Experiment' AND item_id = ? ORDER BY id").all(String(e.id)) as Array<{ detail: string }>
    t.same(
      activity.map((a) => JSON.parse(a.detail).changes.map((c: { field: string }) => c.field)),
      [[], ['start_date'], ['end_date', 'conclusion', 'conclusion_comment']],
      'launch and end (with its conclusion) are logged; pause and resume change only the flag',
    )
  })

  t.test('archive needs an ended experiment; disable_feature_flag switches the flag off and needs feature_flag:write', async (t) => {
    const e = (await f.api('POST', f.experiments, { name: 'Old', feature_flag_key: 'old', start_date: new Date(Date.now() - 60_000).toISOString() })).body
    t.match(await act(e.id, 'archive'), refused('Experiment must be ended before it can be archived.'))
    await act(e.id, 'end')
    const experimentsOnly = f.keyWith(['experiment:write'])
    t.match(await act(e.id, 'archive', { disable_feature_flag: true }, experimentsOnly.key), {
      status: 403,
      body: { code: 'permission_denied', detail: "API key missing required scope 'feature_flag:write'" },
    })
    const archived = await act(e.id, 'archive', { disable_feature_flag: 'true' })
    t.match(archived.body, { archived: true, feature_flag: { active: false } })
    t.equal(await decide('old', 'u1'), undefined)
    t.match(await act(e.id, 'archive'), refused('Experiment is already archived.'))
    const listed = (await f.api('GET', `${f.experiments}?archived=true`)).body.results.map((x: { id: number }) => x.id)
    t.ok(listed.includes(e.id))

    t.match((await act(e.id, 'unarchive')).body, { archived: false, feature_flag: { active: false } }, 'unarchiving leaves the flag off')
    t.match(await act(e.id, 'unarchive'), refused('Experiment is not archived.'))
    t.match(await act(e.id, 'archive', { disable_feature_flag: 'maybe' }), { status: 400, body: { attr: 'disable_feature_flag', detail: 'Must be a valid boolean.' } })

    const shared = (await f.api('POST', f.experiments, { name: 'Shares', feature_flag_key: 'shared', start_date: new Date(Date.now() - 60_000).toISOString() })).body
    await f.api('POST', f.experiments, { name: 'Also shares', feature_flag_key: 'shared' })
    await act(shared.id, 'end')
    t.match((await act(shared.id, 'archive', { disable_feature_flag: true })).body, { archived: true, feature_flag: { active: true } }, 'another live experiment still uses the flag')
  })

  t.test('reset puts an experiment back to draft and leaves its flag', async (t) => {
    const e = (await f.api('POST', f.experiments, { name: 'Again', feature_flag_key: 'again', start_date: new Date(Date.now() - 60_000).toISOString() })).body
    await act(e.id, 'end')
    await f.api('PATCH', `${f.experiments}${e.id}/`, { archived: true })
    t.match((await act(e.id, 'reset')).body, { status: 'draft', start_date: null, end_date: null, archived: false, feature_flag: { active: true } })
  })

  t.test('ship_variant rolls the winner out and ends a running experiment', async (t) => {
    const e = (await f.api('POST', f.experiments, { name: 'Ship', feature_flag_key: 'ship', start_date: new Date(Date.now() - 60_000).toISOString() })).body
    await f.api('PATCH', `${f.base}/feature_flags/${e.feature_flag.id}/`, {
      filters: { ...e.feature_flag.filters, groups: [{ properties: [{ key: 'plan', type: 'person', value: ['pro'], operator: 'exact' }], rollout_percentage: 100 }] },
    })
    t.match(await act(e.id, 'ship_variant', {}), { status: 400, body: { code: 'required', attr: 'variant_key' } })
    t.match(await act(e.id, 'ship_variant', { variant_key: 'nope' }), refused("Variant 'nope' not found on feature flag."))

    const shipped = await act(e.id, 'ship_variant', { variant_key: 'test' })
    t.match(shipped.body, { status: 'stopped', end_date: String })
    const filters = (await flag(e.feature_flag.id)).filters
    t.same(filters.multivariate.variants, [
      { key: 'control', rollout_percentage: 0, name: 'Control Group' },
      { key: 'test', rollout_percentage: 100, name: 'Test Variant' },
    ])
    t.equal(filters.groups.length, 1, 'the release conditions are kept')
    t.equal(await decide('ship', 'free-user'), false, 'users outside the conditions still get nothing')

    const everyone = await act(e.id, 'ship_variant', { variant_key: 'test', release_to_everyone: true })
    t.equal(everyone.status, 200, 'an ended experiment can still ship')
    t.equal(everyone.body.end_date, shipped.body.end_date, 'and stays ended when it was')
    const groups = (await flag(e.feature_flag.id)).filters.groups
    t.match(groups[0], { properties: [], rollout_percentage: 100, description: 'Added automatically when the experiment was ended to keep only one variant.' })
    for (const user of ['a', 'b', 'c']) t.equal(await decide('ship', user), 'test', `${user} gets the shipped variant`)
  })

  t.test('duplicate makes a draft copy, sharing the flag unless given another key', async (t) => {
    const e = (
      await f.api('POST', f.experiments, {
        name: 'Original',
        feature_flag_key: 'original',
        description: 'd',
        start_date: new Date(Date.now() - 60_000).toISOString(),
        parameters: { feature_flag_variants: [{ key: 'control', rollout_percentage: 34 }, { key: 'a', rollout_percentage: 33 }, { key: 'b', rollout_percentage: 33 }], note: 'kept' },
        filters: { insight: 'TRENDS', events: [{ id: '$pageview', order: 0 }] },
        secondary_metrics: [{ name: 'm', filters: { insight: 'TRENDS', events: [{ id: 'x' }] } }],
      })
    ).body
    const copy = await act(e.id, 'duplicate')
    t.equal(copy.status, 201)
    t.match(copy.body, { name: 'Original (Copy)', description: 'd', status: 'draft', start_date: null, filters: e.filters, secondary_metrics: [], feature_flag: { id: e.feature_flag.id } })
    t.equal(copy.body.parameters.note, 'kept')
    t.equal((await act(e.id, 'duplicate')).body.name, 'Original (Copy) 1', 'a taken name is numbered')

    const own = await act(e.id, 'duplicate', { name: 'Own flag', feature_flag_key: 'original-2' })
    t.match(own.body, { name: 'Own flag', feature_flag: { key: 'original-2', active: false } })
    t.same(
      own.body.feature_flag.filters.multivariate.variants.map((v: { key: string }) => v.key),
      ['control', 'a', 'b'],
      "the new flag takes the source flag's variants",
    )
    await f.api('POST', `${f.base}/feature_flags/`, { key: 'plain-bool' })
    t.match(await act(e.id, 'duplicate', { feature_flag_key: 'plain-bool' }), refused('Feature flag must have at least 2 variants (control and at least one test variant)'))
  })

  t.test('a flag reports has_experiment while a live experiment uses it: /flags (v2 and v4) and local evaluation', async (t) => {
    const token = f.server.boot.project_api_key
    const plain = (await f.api('POST', `${f.base}/feature_flags/`, { key: 'no-experiment', filters: { groups: [{ rollout_percentage: 100 }] } })).body
    const e = (await f.api('POST', f.experiments, { name: 'Has experiment', feature_flag_key: 'has-experiment' })).body
    await act(e.id, 'launch')
    const metadata = async (version: number) => {
      const res = await f.server.request('POST', `/flags/?v=${version}`, { body: { token, distinct_id: 'has-exp-user' } })
      return { used: res.body.flags['has-experiment'].metadata.has_experiment, plain: res.body.flags['no-experiment'].metadata.has_experiment }
    }
    t.same(await metadata(2), { used: true, plain: false })
    t.same(await metadata(4), { used: true, plain: false })
    const definitions = async () => {
      const res = await f.server.request('GET', `/flags/definitions?token=${token}`, { headers: { authorization: `Bearer ${f.server.boot.project_secret_api_key}` } })
      return Object.fromEntries(JSON.parse(res.text).flags.map((flag: { key: string; has_experiment: boolean }) => [flag.key, flag.has_experiment]))
    }
    t.match(await definitions(), { 'has-experiment': true, 'no-experiment': false })
    t.equal((await f.api('DELETE', `${f.experiments}${e.id}/`)).status, 204)
    t.same(await metadata(2), { used: false, plain: false }, 'a deleted experiment no longer counts')
    t.match(await definitions(), { 'has-experiment': false })
    await f.api('PATCH', `${f.base}/feature_flags/${plain.id}/`, { deleted: true })
  })

  t.test('actions 404 on unknown and deleted experiments', async (t) => {
    const e = (await f.api('POST', f.experiments, { name: 'Gone', feature_flag_key: 'gone' })).body
    await f.api('DELETE', `${f.experiments}${e.id}/`)
    for (const action of ['launch', 'duplicate']) {
      t.equal((await act(e.id, action)).status, 404)
      t.equal((await act(987654, action)).status, 404)
    }
  })
})
