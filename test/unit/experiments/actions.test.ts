/**
 * Experiments against the project's actions, over a real management.db: an ActionsNode must name a live
 * action of the project (PostHog's validate_metric_action_ids, ids already stored exempt on update), in
 * inline and shared metrics, and the `event` list filters find metrics through an action with a step on the
 * event (PostHog's filter_metric_group_ids_by_event), not through its name.
 */
import t from 'tap'
import { SavedMetrics } from '../../../src/experiments/saved-metrics/service.js'
import { experimentWorld, thrown } from './fixture.js'

const byAction = (id: number) => ({ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'ActionsNode', id } })
const missing = (ids: string) => `Action(s) with ID ${ids} not found or deleted. Each ActionsNode must reference an existing action belonging to this project.`

t.test('an ActionsNode metric is accepted once the action exists, and refused when deleted or elsewhere', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const signup = w.m.actions.create(w.project, { name: 'Signed up', steps: [{ event: 'signed_up' }] }, w.owner.id)
  const theirs = w.m.actions.create(w.other, { name: 'Theirs', steps: [{ event: 'x' }] }, w.owner.id)
  const e = w.create({ name: 'n', feature_flag_key: 'k', metrics: [byAction(signup.id)] })
  t.match(e.metrics, [{ source: { kind: 'ActionsNode', id: signup.id } }])

  t.match(thrown(() => w.create({ name: 'n2', feature_flag_key: 'k2', metrics_secondary: [byAction(theirs.id), byAction(999)] })), {
    status: 400,
    attr: null,
    detail: missing(`${theirs.id}, 999`),
  })
  w.m.actions.update(w.project, signup.id, { deleted: true })
  t.match(thrown(() => w.create({ name: 'n3', feature_flag_key: 'k3', metrics: [byAction(signup.id)] })), { detail: missing(String(signup.id)) })
  // The experiment already stores it: sending its metrics back, with a new one, is checked for the new one only.
  const renamed = w.update(e.id, { name: 'renamed', metrics: [...(e.metrics ?? []), { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'x' } }] })
  t.equal(renamed.name, 'renamed')
  t.match(thrown(() => w.update(e.id, { metrics: [...(e.metrics ?? []), byAction(998)] })), { detail: missing('998') })
})

t.test('the event filters find metrics through an action with a step on the event', async (t) => {
  const w = experimentWorld()
  t.teardown(() => w.close())
  const checkout = w.m.actions.create(w.project, { name: 'Checkout', steps: [{ event: 'purchase' }, { event: '$pageview', url: '/checkout' }] }, w.owner.id)
  const other = w.m.actions.create(w.project, { name: 'purchase', steps: [{ event: 'refund' }] }, w.owner.id)
  const viaAction = w.create({ name: 'via action', feature_flag_key: 'a', metrics: [byAction(checkout.id)] })
  w.create({ name: 'named like it', feature_flag_key: 'b', metrics_secondary: [byAction(other.id)] })
  const listed = (event: string) => w.experiments.list(w.project, new URLSearchParams({ event }), { limit: 100, offset: 0 }).results.map((e) => e.name)
  t.same(listed('purchase'), ['via action'], "by the action's step events, not its name")
  t.same(listed('$pageview'), ['via action'])
  t.same(listed('refund'), ['named like it'])
  w.m.actions.update(w.project, checkout.id, { steps: [{ event: 'order_completed' }] })
  t.same(listed('purchase'), [], 'read live: the action changed')
  t.same(listed('order_completed'), ['via action'])
  w.m.actions.update(w.project, checkout.id, { deleted: true })
  t.same(listed('order_completed'), [], 'a deleted action names nothing')
  t.ok(viaAction)

  const shared = new SavedMetrics({ db: w.db, clock: { now: w.now }, accounts: w.m.accounts, actions: w.m.actions })
  const refund = shared.create(w.project, { name: 'Refunds', query: byAction(other.id) }, w.owner.id)
  t.same(shared.list(w.project, new URLSearchParams({ event: 'refund' }), { limit: 10, offset: 0 }).results.map((m) => m.id), [refund.id])
  t.equal(shared.list(w.project, new URLSearchParams({ event: 'purchase' }), { limit: 10, offset: 0 }).count, 0)
  t.match(thrown(() => shared.create(w.project, { name: 'Gone', query: byAction(checkout.id) }, w.owner.id)), { detail: missing(String(checkout.id)) })
  w.m.actions.update(w.project, other.id, { deleted: true })
  t.ok(shared.update(w.project, refund.id, { name: 'Refunds, renamed', query: { ...refund.query } }), 'its stored action is not checked again')
})
