/**
 * The Experiments service over the stored $feature_flag_called events: which running experiments' flags
 * were never called, and the cohort of the persons exposed to an experiment (by those events, or by the
 * experiment's custom exposure filter).
 */
import t from 'tap'
import { DAY, T0, experimentWorld, rejected } from './fixture.js'

t.test('requiringFlagImplementation lists running experiments whose flag was never called', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const start = '2024-05-01T00:00:00Z'
  const called = w.create({ name: 'Called', feature_flag_key: 'called', start_date: start })
  const silent = w.create({ name: 'Silent', feature_flag_key: 'silent', start_date: start })
  w.create({ name: 'Draft', feature_flag_key: 'draft' })
  w.create({ name: 'Ended', feature_flag_key: 'ended', start_date: start, end_date: '2024-05-02T00:00:00Z' })
  w.create({ name: 'Archived', feature_flag_key: 'archived', start_date: start, archived: true })
  const elsewhere = w.create({ name: 'Called elsewhere', feature_flag_key: 'other-project', start_date: start })
  await w.events([
    { distinctId: 'u1', event: '$feature_flag_called', at: T0, properties: { $feature_flag: 'called', $feature_flag_response: 'test' } },
    { distinctId: 'u1', event: '$pageview', at: T0, properties: { $feature_flag: 'silent' } },
    { distinctId: 'u2', event: '$feature_flag_called', at: T0, properties: { $feature_flag: 'other-project' }, teamId: w.other.id },
  ])
  const result = await w.experiments.requiringFlagImplementation(w.project)
  t.same(result.map((e) => e.id), [elsewhere.id, silent.id])
  t.ok(called.id)
})

t.test('createExposureCohort', async (t) => {
  t.test('makes a static cohort of the persons who called the flag since launch and stores it', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const start = T0 + DAY
    const e = w.create({ name: 'Exp', feature_flag_key: 'k', start_date: new Date(start).toISOString() })
    const called = (distinctId: string, at: number, properties: Record<string, unknown>) => ({ distinctId, event: '$feature_flag_called', at, properties })
    await w.events([
      called('in-1', start + 1, { $feature_flag: 'k', $feature_flag_response: 'control' }),
      called('in-2', start + 2, { $feature_flag: 'k', $feature_flag_response: 'test' }),
      called('in-2', start + 3, { $feature_flag: 'k', $feature_flag_response: 'test' }),
      called('before', start - 1, { $feature_flag: 'k', $feature_flag_response: 'test' }),
      called('no-variant', start + 1, { $feature_flag: 'k', $feature_flag_response: false }),
      called('other-flag', start + 1, { $feature_flag: 'x', $feature_flag_response: 'test' }),
      { distinctId: 'wrong-event', event: '$pageview', at: start + 1, properties: { $feature_flag: 'k', $feature_flag_response: 'test' } },
    ])
    const { experiment, cohort } = await w.experiments.createExposureCohort(w.project, e.id, w.owner.id)
    t.match(cohort, { name: 'Users exposed to experiment "Exp"', is_static: true, deleted: false, created_by: { email: 'owner@example.com' } })
    t.equal(experiment.exposure_cohort, cohort.id)
    t.equal(w.experiments.get(w.project, e.id).exposure_cohort, cohort.id)
    // Whatever the flag answered, as PostHog's cohort filters on $feature_flag alone.
    t.same(w.members, [{ teamId: w.project.id, cohortId: cohort.id, distinctIds: ['in-1', 'in-2', 'no-variant'] }])
    t.equal(w.activity('Experiment').length, 1, 'exposure_cohort is excluded from the activity log')
    t.match(await rejected(w.experiments.createExposureCohort(w.project, e.id, w.owner.id)), {
      status: 400,
      code: 'invalid',
      detail: 'Experiment already has an exposure cohort',
    })
  })

  t.test("with a custom exposure filter, holds who performed its event since launch, by its event filters alone, as PostHog's cohort", async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const start = T0 + DAY
    const custom_exposure_filter = {
      events: [
        {
          id: 'custom_exposure_event',
          order: 0,
          // PostHog's cohort keeps the event filters, ANDed, and drops person and cohort ones.
          properties: {
            type: 'OR',
            values: [
              { key: 'bonk', value: 'bonk' },
              { key: '$current_url', value: ['x', 'y'], type: 'feature' },
              { key: 'bonk-person', value: 'bonk', type: 'person' },
              { key: 'id', value: 7, type: 'cohort' },
            ],
          },
        },
        { id: 'second entity', order: 1 },
      ],
      filter_test_accounts: false,
    }
    const e = w.create({ name: 'Exp', feature_flag_key: 'k', start_date: new Date(start).toISOString(), parameters: { custom_exposure_filter } })
    const exposed = (distinctId: string, at: number, properties: Record<string, unknown>) => ({ distinctId, event: 'custom_exposure_event', at, properties })
    await w.events([
      exposed('person1', start + 1, { $current_url: 'x', bonk: 'bonk' }),
      exposed('person2', start + 2, { $current_url: 'y', bonk: 'bonk' }),
      exposed('no-bonk', start + 3, { $current_url: 'y' }),
      exposed('not-in-prop', start + 4, { $current_url: 'yxxxx', bonk: 'bonk' }),
      exposed('before', start - 1, { $current_url: 'x', bonk: 'bonk' }),
      { distinctId: 'flag-caller', event: '$feature_flag_called', at: start + 1, properties: { $feature_flag: 'k', $feature_flag_response: 'test' } },
      { distinctId: 'second', event: 'second entity', at: start + 1, properties: { $current_url: 'x', bonk: 'bonk' } },
    ])
    const { cohort } = await w.experiments.createExposureCohort(w.project, e.id, w.owner.id)
    t.same(w.members, [{ teamId: w.project.id, cohortId: cohort.id, distinctIds: ['person1', 'person2'] }])
  })

  t.test('with a custom exposure action, holds who performed it, and with a HogQL filter who passed it; an action id that is no number is refused', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const start = T0 + DAY
    const signup = w.m.actions.create(w.project, { name: 'Signed up', steps: [{ event: 'signed_up' }, { event: 'joined' }] }, w.owner.id)
    const launch = (name: string, id: unknown) =>
      w.create({ name, feature_flag_key: name, start_date: new Date(start).toISOString(), parameters: { custom_exposure_filter: { actions: [{ id, order: 0 }] } } })
    const e = launch('by-action', String(signup.id))
    await w.events([
      { distinctId: 'a', event: 'signed_up', at: start + 1 },
      { distinctId: 'b', event: 'joined', at: start + 2 },
      { distinctId: 'c', event: '$pageview', at: start + 3 },
    ])
    const { cohort } = await w.experiments.createExposureCohort(w.project, e.id, w.owner.id)
    t.same(w.members, [{ teamId: w.project.id, cohortId: cohort.id, distinctIds: ['a', 'b'] }])
    t.match(await rejected(w.experiments.createExposureCohort(w.project, launch('bad-action', 'oogabooga').id, w.owner.id)), { status: 400, detail: 'Invalid action ID' })
    // A HogQL filter is kept, as PostHog's cohort keeps it; one skylark can't read is a 400 and makes no cohort.
    const byHogql = (key: string) =>
      w.create({
        name: `HogQL ${key}`,
        feature_flag_key: `hogql-${key.length}`,
        start_date: new Date(start).toISOString(),
        parameters: { custom_exposure_filter: { events: [{ id: 'x', properties: [{ key, type: 'hogql' }] }] } },
      })
    await w.events([
      { distinctId: 'x1', event: 'x', at: start + 1, properties: { $current_url: 'x' } },
      { distinctId: 'x2', event: 'x', at: start + 2, properties: { $current_url: 'z' } },
    ])
    const members = await w.experiments.createExposureCohort(w.project, byHogql("properties.$current_url in ('x', 'y')").id, w.owner.id)
    t.same(w.members.at(-1), { teamId: w.project.id, cohortId: members.cohort.id, distinctIds: ['x1'] })
    t.match(await rejected(w.experiments.createExposureCohort(w.project, byHogql("regexpExtract(properties.$current_url, 'x') = ''").id, w.owner.id)), { status: 400, detail: /^HogQL filter "regexpExtract\(properties.\$current_url, 'x'\) = ''": Unknown function regexpExtract\(\)/ })
    t.equal(w.scalar('SELECT COUNT(*) AS n FROM cohorts'), 2, 'a refused filter makes no cohort')
  })

  t.test('refuses a draft, and 404s an unknown experiment', async (t) => {
    const w = experimentWorld()
    t.teardown(() => w.close())
    const e = w.create({ name: 'Draft', feature_flag_key: 'k' })
    t.match(await rejected(w.experiments.createExposureCohort(w.project, e.id, w.owner.id)), {
      status: 400,
      detail: 'Experiment does not have a start date',
    })
    t.match(await rejected(w.experiments.createExposureCohort(w.project, 12345, w.owner.id)), { status: 404 })
    t.equal(w.scalar('SELECT COUNT(*) AS n FROM cohorts'), 0)
  })

  t.test('without an event store the service says so (503)', async (t) => {
    const w = experimentWorld({ noEvents: true })
    t.teardown(() => w.close())
    const e = w.create({ name: 'E', feature_flag_key: 'k', start_date: '2024-05-01T00:00:00Z' })
    t.match(await rejected(w.experiments.createExposureCohort(w.project, e.id, w.owner.id)), { status: 503 })
    t.match(await rejected(w.experiments.results(w.project, e.id)), { status: 503 })
  })
})
