/** OTLP logs from real clients (logs-scenario.ts says which and what is checked), on each event store. */import t from 'tap'
import { eachStore } from './harness.js'
import { logsScenario } from './logs-scenario.js'

t.test('OTLP logs from posthog-node and OpenTelemetry', (t) => {
  eachStore(t, logsScenario)
  t.end()
})
