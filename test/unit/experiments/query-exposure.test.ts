import t from 'tap'
import type { ActionStep } from '../../../src/management/actions/record.js'
import { exposureOf } from '../../../src/experiments/query/exposure.js'

const WINDOW = { teamId: 3, after: 1000, before: 2000 }
const VARIANTS = ['control', 'test']
const none = { selector: null, tag_name: null, text: null, text_matching: null, href: null, href_matching: null, url: null, url_matching: null }
const steps: ActionStep[] = [{ event: 'signed up', properties: [], ...none }]
const actionById = (id: number) => (id === 7 ? { steps } : null)
const plan = (criteria: Record<string, unknown> | null) => exposureOf(criteria, 'f', VARIANTS, WINDOW, actionById)
const variantIn = (key: string) => ({ key, operator: 'exact', value: VARIANTS })
const flagIs = { key: '$feature_flag', operator: 'exact', value: 'f' }
const pro = { key: 'plan', operator: 'exact', value: 'pro' }

t.test("the default exposure is the flag's $feature_flag_called, its variant in $feature_flag_response", async (t) => {
  for (const criteria of [null, {}, { filterTestAccounts: true }, { exposure_config: null }]) {
    t.same(plan(criteria), { filter: { ...WINDOW, event: '$feature_flag_called', properties: [variantIn('$feature_flag_response'), flagIs] }, variantProperty: '$feature_flag_response', activation: null }, JSON.stringify(criteria))
  }
})

t.test('a config naming $experiment_exposure reads it as PostHog does: the default exposure, on that event', async (t) => {
  const named = plan({ exposure_config: { kind: 'ExperimentEventExposureConfig', event: '$experiment_exposure', properties: [] } })
  t.same(named.filter, { ...WINDOW, event: '$experiment_exposure', properties: [variantIn('$feature_flag_response'), flagIs] })
  t.equal(named.variantProperty, '$feature_flag_response')
})

t.test("the config's property filters narrow the default event too, not only a custom one", async (t) => {
  const props = [{ key: 'plan', operator: 'exact', value: 'pro', type: 'event' }]
  const flag = plan({ exposure_config: { kind: 'ExperimentEventExposureConfig', event: '$feature_flag_called', properties: props } })
  t.same(flag.filter.properties, [variantIn('$feature_flag_response'), flagIs, pro])
  const custom = plan({ exposure_config: { event: 'viewed pricing', properties: props } })
  t.same(custom.filter, { ...WINDOW, event: 'viewed pricing', properties: [variantIn('$feature/f'), pro] })
  t.equal(custom.variantProperty, '$feature/f')
})

t.test("an ActionsNode exposes by its action's events, the variant in $feature/<key>; a missing action exposes nobody", async (t) => {
  const action = plan({ exposure_config: { kind: 'ActionsNode', id: 7 } })
  t.equal(action.filter.event, undefined, 'no event name: an action can match several')
  t.equal(action.variantProperty, '$feature/f')
  t.match(action.filter.properties, [variantIn('$feature/f'), { actionSteps: [{ event: 'signed up' }] }])
  t.same(plan({ exposure_config: { kind: 'ActionsNode', id: 8 } }).filter.properties, [variantIn('$feature/f'), { distinctIds: [] }])
})

t.test('activation_config adds activation events on the default exposure only, an event config or an action', async (t) => {
  const activated = { kind: 'ExperimentEventExposureConfig', event: 'activated', properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }] }
  t.same(plan({ activation_config: activated }).activation, { ...WINDOW, event: 'activated', properties: [pro] })
  t.same(plan({ activation_config: { event: 'activated' } }).activation, { ...WINDOW, event: 'activated', properties: [] }, 'kind defaults to an event config')
  t.match(plan({ activation_config: { kind: 'ActionsNode', id: 7 } }).activation, { ...WINDOW, properties: [{ actionSteps: [{ event: 'signed up' }] }] })
  const onDefault = plan({ exposure_config: { event: '$experiment_exposure' }, activation_config: activated })
  t.equal(onDefault.filter.event, '$experiment_exposure')
  t.equal(onDefault.activation?.event, 'activated')
  // `has_activation_config`: a custom exposure leaves activation off.
  t.equal(plan({ exposure_config: { event: 'viewed pricing' }, activation_config: activated }).activation, null)
  t.equal(plan({ exposure_config: { kind: 'ActionsNode', id: 7 }, activation_config: activated }).activation, null)
  t.equal(plan({ activation_config: null }).activation, null)
})

t.test("an activation config PostHog's runner can't read is its invalid-setup 400, not a crash", async (t) => {
  for (const bad of ['activated', [], { kind: 'EventsNode', event: 'x' }, { kind: 'ExperimentEventExposureConfig' }, { event: 3 }, { kind: 'ActionsNode' }, { kind: 'ActionsNode', id: 'x' }, { event: 'a', properties: 'p' }]) {
    t.throws(() => plan({ activation_config: bad }), { code: 'invalid', detail: 'Invalid experiment configuration detected. Please check your experiment setup.' }, JSON.stringify(bad))
  }
})
