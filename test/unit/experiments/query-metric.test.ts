import t from 'tap'
import { planMetric } from '../../../src/experiments/query/metric.js'

const noActions = () => null
const mean = (over: Record<string, unknown>) =>
  planMetric({ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'amount' }, ...over }, noActions)

t.test("winsorisation bounds are read as PostHog's mean query builder reads them: any number from 0 to 1, 0 included", async (t) => {
  t.match(mean({}), { lowerPercentile: null, upperPercentile: null, ignoreZeros: false, sources: [{ kind: 'sum', property: 'amount' }] })
  t.match(mean({ lower_bound_percentile: 0.05, upper_bound_percentile: 0.95, ignore_zeros: true }), { lowerPercentile: 0.05, upperPercentile: 0.95, ignoreZeros: true })
  t.match(mean({ upper_bound_percentile: 0 }), { upperPercentile: 0 }, 'a bound of 0 is quantileExact(0), not "no bound"')
  for (const bad of [-0.1, 1.5, '0.9']) {
    t.throws(() => mean({ upper_bound_percentile: bad }), { code: 'invalid', detail: 'upper_bound_percentile must be a number between 0 and 1.' }, JSON.stringify(bad))
  }
})
