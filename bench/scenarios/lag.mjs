// Acknowledged → visible: a probe event (unique distinct_id, `$set: {probe: n}`) is captured and, from its
// 200, the events API, the persons API and /decide (a flag on that property) are polled until it shows
// (bench/lib/e2e.mjs runLagProbes).
// Probes start every `spacingMs` while a background /capture/ load runs at `backgroundRate` req/s
// (default: a quarter of the capture scenario's measured throughput on the same sink).
export default [
  {
    name: 'lag',
    title: 'ack → visible (events API, persons API, /decide)',
    groups: ['capture'],
    kind: 'lag',
    server: 'fresh',
    sinks: ['sqlite', 'clickhouse'],
    probes: 200,
    spacingMs: 50,
    timeoutMs: 10_000,
    pollMs: { sqlite: 10, clickhouse: 10 },
    backgroundRate: (done, sink) => Math.round((done[`capture@${sink}`]?.rps ?? 20_000) / 4),
  },
]
