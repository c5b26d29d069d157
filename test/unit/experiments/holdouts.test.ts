/**
 * Experiment holdouts: PostHog's body checks and what a holdout writes into a flag (pure), then the services
 * over a real management.db: the `holdout-<id>` variant, experiments taking a holdout only while drafts, and
 * holdout changes and deletion reaching the flags of the experiments that use it.
 */
import t from 'tap'
import { holdoutFiltersForFlag, readHoldoutFilters, readHoldoutRef } from '../../../src/experiments/holdouts/index.js'
import { experimentWorld, thrown } from './fixture.js'
import { refusal } from '../../helpers/refusal.js'


t.test("filters are checked with PostHog's messages", async (t) => {
  const cases: Array<[unknown, string]> = [
    [[], 'Filters must not be empty.'],
    [[{ properties: [] }], 'Rollout percentage must be present.'],
    [[{ rollout_percentage: null }], 'Rollout percentage must be present.'],
    [[{ rollout_percentage: -1 }], 'Rollout percentage must be between 0 and 100.'],
    [[{ rollout_percentage: 10 }, { rollout_percentage: 100.5 }], 'Rollout percentage must be between 0 and 100.'],
    [[{ rollout_percentage: '5' }], 'A valid number is required.'],
    [[{ rollout_percentage: true }], 'A valid number is required.'],
    [{ rollout_percentage: 5 }, 'Expected a list of items but got type "dict".'],
    [['x'], 'Expected a dictionary of items but got type "str".'],
    [null, 'This field may not be null.'],
  ]
  for (const [value, detail] of cases) t.match(refusal(() => readHoldoutFilters(value)), { detail, attr: 'filters' }, JSON.stringify(value))
  t.same(readHoldoutFilters([{ properties: [], rollout_percentage: 0 }, { rollout_percentage: 100 }]).length, 2)
})

t.test("holdout_id is read as DRF's PrimaryKeyRelatedField reads it", async (t) => {
  t.equal(readHoldoutRef(undefined), undefined)
  t.equal(readHoldoutRef(null), null)
  t.equal(readHoldoutRef(7), 7)
  t.equal(readHoldoutRef(' 7 '), 7)
  t.match(refusal(() => readHoldoutRef(true)), { code: 'incorrect_type', detail: 'Incorrect type. Expected pk value, received bool.', attr: 'holdout_id' })
  t.match(refusal(() => readHoldoutRef('seven')), { detail: 'Incorrect type. Expected pk value, received str.' })
  t.match(refusal(() => readHoldoutRef([1])), { detail: 'Incorrect type. Expected pk value, received list.' })
})

t.test("the flag's holdout is the first group's percentage, as PostHog's holdout_filters_for_flag", async (t) => {
  t.same(holdoutFiltersForFlag(null), { holdout: null })
  t.same(holdoutFiltersForFlag({ id: 3, filters: [] }), { holdout: null })
  t.same(holdoutFiltersForFlag({ id: 3, filters: [{ rollout_percentage: 15, variant: 'holdout-3' }, { rollout_percentage: 90 }] }), {
    holdout: { id: 3, exclusion_percentage: 15 },
  })
})

t.test('holdouts with experiments', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const holdouts = w.experiments.holdouts
  const make = (body: Record<string, unknown>) => holdouts.create(w.project, body, w.owner.id)

  t.test('a new holdout gets its own variant on every group, whatever was sent', async (t) => {
    const h = make({ name: 'H', filters: [{ properties: [], rollout_percentage: 20, variant: 'holdout' }, { rollout_percentage: 5 }] })
    t.match(h, { id: Number, name: 'H', description: null, created_by: { email: 'owner@example.com' }, user_access_level: 'editor' })
    t.same(h.filters, [
      { properties: [], rollout_percentage: 20, variant: `holdout-${h.id}` },
      { rollout_percentage: 5, variant: `holdout-${h.id}` },
    ])
    t.match(refusal(() => make({ name: 'No filters' })), { detail: 'Filters are required to create an holdout group', attr: null })
    t.match(refusal(() => make({ filters: [{ rollout_percentage: 1 }] })), { detail: 'This field is required.', attr: 'name' })
  })

  t.test('a draft takes a holdout into its new flag, changes it, and keeps it once launched', async (t) => {
    const a = make({ name: 'A', filters: [{ properties: [], rollout_percentage: 20 }] })
    const b = make({ name: 'B', filters: [{ properties: [], rollout_percentage: 5 }] })
    const e = w.create({ name: 'With holdout', feature_flag_key: 'with-holdout', holdout_id: a.id })
    t.equal(e.holdout_id, a.id)
    t.same(e.holdout, a)
    t.same(w.flag('with-holdout')!.filters.holdout, { id: a.id, exclusion_percentage: 20 })

    t.same(w.update(e.id, { holdout_id: b.id }).holdout_id, b.id)
    t.same(w.flag('with-holdout')!.filters.holdout, { id: b.id, exclusion_percentage: 5 })
    t.equal(w.update(e.id, { holdout_id: null }).holdout, null)
    t.same(w.flag('with-holdout')!.filters.holdout, null)
    t.match(refusal(() => w.update(e.id, { holdout_id: 123456 })), { code: 'does_not_exist', detail: 'Invalid pk "123456" - object does not exist.', attr: 'holdout_id' })

    w.update(e.id, { holdout_id: b.id })
    w.update(e.id, { start_date: '2024-05-01T00:00:00Z' })
    t.match(refusal(() => w.update(e.id, { holdout_id: a.id })), { detail: "Can't update holdout on running Experiment", attr: null })
    t.match(refusal(() => w.update(e.id, { holdout_id: null })), { detail: "Can't update holdout on running Experiment" })
    t.equal(w.update(e.id, { holdout_id: b.id, name: 'Same holdout' }).holdout_id, b.id, 'sending the same holdout is no change')
    t.same(w.flag('with-holdout')!.filters.holdout, { id: b.id, exclusion_percentage: 5 })
  })

  t.test("another project's holdout does not exist", async (t) => {
    const theirs = holdouts.create(w.other, { name: 'Theirs', filters: [{ rollout_percentage: 50 }] }, w.owner.id)
    t.match(refusal(() => w.create({ name: 'X', feature_flag_key: 'x-flag', holdout_id: theirs.id })), { detail: `Invalid pk "${theirs.id}" - object does not exist.` })
    t.equal(w.flag('x-flag'), null, 'nothing was created')
  })

  t.test("new filters reach every experiment's flag, running ones too; deleting takes the holdout out", async (t) => {
    const h = make({ name: 'Shared', filters: [{ properties: [], rollout_percentage: 10 }] })
    const draft = w.create({ name: 'Draft', feature_flag_key: 'shared-draft', holdout_id: h.id })
    w.create({ name: 'Running', feature_flag_key: 'shared-running', holdout_id: h.id, start_date: '2024-05-01T00:00:00Z' })
    const changed = holdouts.update(w.project, h.id, { filters: [{ properties: [], rollout_percentage: 30 }], description: 'more' }, w.owner.id)
    t.same(changed.filters, [{ properties: [], rollout_percentage: 30, variant: `holdout-${h.id}` }])
    t.equal(changed.description, 'more')
    for (const key of ['shared-draft', 'shared-running']) t.same(w.flag(key)!.filters.holdout, { id: h.id, exclusion_percentage: 30 }, key)
    const version = w.flag('shared-draft')!.version
    holdouts.update(w.project, h.id, { filters: changed.filters }, w.owner.id)
    t.equal(w.flag('shared-draft')!.version, version, 'the stored filters sent back change no flag')

    holdouts.delete(w.project, h.id, w.owner.id)
    for (const key of ['shared-draft', 'shared-running']) t.same(w.flag(key)!.filters.holdout, null, key)
    t.match(w.experiments.get(w.project, draft.id), { holdout: null, holdout_id: null })
    t.match(thrown(() => holdouts.get(w.project, h.id)), { code: 'not_found' })
  })

  t.test('a duplicate has no holdout, as PostHog', async (t) => {
    const h = make({ name: 'D', filters: [{ rollout_percentage: 10 }] })
    const e = w.create({ name: 'Original', feature_flag_key: 'dup-original', holdout_id: h.id })
    const copy = w.experiments.actions.duplicate(w.project, e.id, { feature_flag_key: 'dup-copy' }, w.owner.id)
    t.match(copy, { holdout: null, holdout_id: null })
    t.same(w.flag('dup-copy')!.filters.holdout, null)
  })
})
