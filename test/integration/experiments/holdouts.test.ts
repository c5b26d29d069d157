/**
 * Experiment holdouts over HTTP against the real server: CRUD and refusals in the contract's envelope, the
 * `experiment_holdout` scope, and an experiment with a holdout: its flag carries it, and /decide gives
 * `holdout-<id>` to exactly the people PostHog's hash holds out (expected values computed here from PostHog's
 * documented algorithm and the Rust service's vectors, not from skylark) and the variants to the rest.
 */
import { createHash } from 'node:crypto'
import t from 'tap'
import { experimentServer, type ExperimentServer } from './fixture.js'

/** PostHog's calculate_hash: the first 15 hex digits of SHA-1(prefix + id + salt) over 0xFFFFFFFFFFFFFFF. */
const hash = (input: string) => parseInt(createHash('sha1').update(input, 'utf8').digest('hex').slice(0, 15), 16) / 0xfffffffffffffff

/** What PostHog serves an experiment flag at 100% rollout with a holdout: the holdout first, then the variant. */
function expected(flagKey: string, holdoutId: number, exclusion: number, variants: Array<[string, number]>, distinctId: string): string {
  if (hash(`holdout-${distinctId}`) <= exclusion / 100) return `holdout-${holdoutId}`
  const v = hash(`${flagKey}.${distinctId}variant`)
  let upper = 0
  for (const [key, pct] of variants) {
    upper += pct / 100
    if (v < upper) return key
  }
  return 'true'
}

t.test('experiment holdouts', async (t) => {
  let f: ExperimentServer
  t.before(async () => {
    f = await experimentServer()
  })
  t.teardown(() => f?.close())
  const holdouts = () => `${f.base}/experiment_holdouts/`
  const decide = async (distinctId: string) => {
    const res = await f.server.request('POST', '/decide/?v=3', { body: { api_key: f.server.boot.project_api_key, distinct_id: distinctId } })
    return res.body.featureFlags as Record<string, string | boolean>
  }
  const flagOf = async (id: number) => (await f.api('GET', `${f.base}/feature_flags/${id}/`)).body

  t.test('create → list → retrieve → patch → delete, and refusals in the envelope', async (t) => {
    const created = await f.api('POST', holdouts(), { name: 'Ten percent', description: 'global', filters: [{ properties: [], rollout_percentage: 10, variant: 'holdout' }] })
    t.equal(created.status, 201)
    const id = created.body.id
    t.match(created.body, { id: Number, name: 'Ten percent', description: 'global', created_by: { email: 'admin@skylark.local' }, created_at: String, updated_at: String })
    t.same(created.body.filters, [{ properties: [], rollout_percentage: 10, variant: `holdout-${id}` }])
    t.match((await f.api('GET', holdouts())).body, { count: 1, results: [{ id }] })
    t.same((await f.api('GET', `${holdouts()}${id}/`)).body, created.body)
    const patched = await f.api('PATCH', `${holdouts()}${id}/`, { name: 'Renamed' })
    t.match(patched, { status: 200, body: { name: 'Renamed', filters: created.body.filters } })

    const refusals: Array<[unknown, string, string | null]> = [
      [{ name: 'No filters' }, 'Filters are required to create an holdout group', null],
      [{ name: 'Empty', filters: [] }, 'Filters must not be empty.', 'filters'],
      [{ name: 'Too much', filters: [{ rollout_percentage: 101 }] }, 'Rollout percentage must be between 0 and 100.', 'filters'],
      [{ name: 'Missing', filters: [{ properties: [] }] }, 'Rollout percentage must be present.', 'filters'],
      [{ filters: [{ rollout_percentage: 1 }] }, 'This field is required.', 'name'],
    ]
    for (const [body, detail, attr] of refusals) {
      const res = await f.api('POST', holdouts(), body)
      t.match(res, { status: 400, body: { type: 'validation_error', detail, attr } }, detail)
    }

    t.equal((await f.api('DELETE', `${holdouts()}${id}/`)).status, 204)
    t.match(await f.api('GET', `${holdouts()}${id}/`), { status: 404, body: { type: 'invalid_request', code: 'not_found' } })
  })

  t.test('need the experiment_holdout scope, as in PostHog', async (t) => {
    const { key } = f.keyWith(['experiment:write'])
    t.match(await f.api('GET', holdouts(), undefined, key), { status: 403, body: { type: 'authentication_error', code: 'permission_denied' } })
    const { key: writer } = f.keyWith(['experiment_holdout:write'])
    t.equal((await f.api('POST', holdouts(), { name: 'By scope', filters: [{ rollout_percentage: 1 }] }, writer)).status, 201)
  })

  t.test("an experiment's flag holds out the holdout's share under PostHog's hash", async (t) => {
    const h = (await f.api('POST', holdouts(), { name: 'Twenty', filters: [{ properties: [], rollout_percentage: 20 }] })).body
    const created = await f.api('POST', f.experiments, { name: 'Held out', feature_flag_key: 'held-out', holdout_id: h.id, start_date: '2024-01-01T00:00:00Z' })
    t.equal(created.status, 201)
    t.match(created.body, { holdout_id: h.id, holdout: { id: h.id, name: 'Twenty', filters: h.filters } })
    const flag = await flagOf(created.body.feature_flag.id)
    t.same(flag.filters.holdout, { id: h.id, exclusion_percentage: 20 })

    const variants: Array<[string, number]> = [['control', 50], ['test', 50]]
    const counts: Record<string, number> = {}
    let mismatches = 0
    const n = 1000
    for (let i = 0; i < n; i++) {
      const id = `holdout-user-${i}`
      const value = (await decide(id))['held-out']
      counts[String(value)] = (counts[String(value)] ?? 0) + 1
      if (value !== expected('held-out', h.id, 20, variants, id)) mismatches++
    }
    t.equal(mismatches, 0, 'every answer is the one PostHog computes')
    const held = counts[`holdout-${h.id}`] ?? 0
    t.ok(held > n * 0.16 && held < n * 0.24, `about 20% held out (${held} of ${n})`)
    t.ok((counts.control ?? 0) > n * 0.33 && (counts.test ?? 0) > n * 0.33, `the rest split between the variants (${JSON.stringify(counts)})`)

    const patched = await f.api('PATCH', `${f.experiments}${created.body.id}/`, { holdout_id: null })
    t.match(patched, { status: 400, body: { type: 'validation_error', code: 'invalid', detail: "Can't update holdout on running Experiment", attr: null } })
  })

  t.test("the Rust service's holdout vectors decide who is held out at 45%", async (t) => {
    // holdout hashes: test-identifier 0.4494, example_id2 0.6293, some_distinct_id 0.7270, example_id 0.9402
    const h = (await f.api('POST', holdouts(), { name: 'Forty-five', filters: [{ properties: [], rollout_percentage: 45 }] })).body
    const e = (await f.api('POST', f.experiments, { name: 'Vectors', feature_flag_key: 'vectors', holdout_id: h.id })).body
    t.match(await f.api('PATCH', `${f.experiments}${e.id}/`, { start_date: '2024-01-01T00:00:00Z' }), { status: 200 })
    t.equal((await decide('test-identifier')).vectors, `holdout-${h.id}`)
    for (const id of ['example_id2', 'some_distinct_id', 'example_id']) t.match((await decide(id)).vectors, /^(control|test)$/, id)

    // A holdout's new share moves into its experiments' flags, running ones too.
    t.match(await f.api('PATCH', `${holdouts()}${h.id}/`, { filters: [{ properties: [], rollout_percentage: 65 }] }), { status: 200 })
    t.same((await flagOf(e.feature_flag.id)).filters.holdout, { id: h.id, exclusion_percentage: 65 })
    t.equal((await decide('example_id2')).vectors, `holdout-${h.id}`)
    // Deleting it takes it out of the flag and the experiment.
    t.equal((await f.api('DELETE', `${holdouts()}${h.id}/`)).status, 204)
    t.match((await f.api('GET', `${f.experiments}${e.id}/`)).body, { holdout: null, holdout_id: null })
    t.match((await decide('test-identifier')).vectors, /^(control|test)$/)
  })
})
