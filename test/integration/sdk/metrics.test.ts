/** OTLP metrics from real clients (metrics-scenario.ts says which and what is checked), on each event store. */import t from 'tap'
import { eachStore } from './harness.js'
import { metricsScenario } from './metrics-scenario.js'

t.test('OTLP metrics from OpenTelemetry', (t) => {
  eachStore(t, metricsScenario)
  t.end()
})
