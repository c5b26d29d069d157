// /capture/ with one ~500-byte $pageview per request: the durable-acknowledgement path (200 only after the
// spool's fdatasync). Measured with autocannon and with wrk (autocannon saturates before uWS does).
import { captureBodies } from './_payloads.mjs'

const requests = (ctx) =>
  captureBodies(ctx.token).map((body) => ({ method: 'POST', path: '/capture/', headers: { 'content-type': 'application/json' }, body }))

const check = (res) => (res.status === 200 && res.json?.status === 1 ? null : `expected 200 {"status":1}, got ${res.status} ${res.text.slice(0, 200)}`)

export default [
  {
    name: 'capture',
    title: '/capture/ one event (~525 B)',
    groups: ['capture'],
    kind: 'load',
    server: 'fresh',
    sinks: ['sqlite', 'clickhouse'],
    loadgens: ['autocannon', 'wrk'],
    baseline: 'capture',
    eventsPerRequest: 1,
    e2e: true,
    requests,
    check,
  },
]
