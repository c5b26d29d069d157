// /batch/ with 100 and 1,000 events per body, plain JSON and gzip (Content-Encoding: gzip, as
// posthog-python sends it). End to end: the events stored in the sink are counted afterwards.
import { batchBodies, gzip } from './_payloads.mjs'

function scenario(size, compressed) {
  // 10,000 distinct ids in all: ≤100 events/s per id up to 1 M events/s.
  const bodyCount = Math.ceil(10_000 / size)
  return {
    name: `batch-${size}${compressed ? '-gzip' : ''}`,
    title: `/batch/ ${size.toLocaleString('en-US')} events${compressed ? ', gzip' : ''}`,
    groups: ['batch'],
    kind: 'load',
    server: 'fresh',
    // gzip is a front-end cost only: measured once, on the embedded store.
    sinks: compressed ? ['sqlite'] : ['sqlite', 'clickhouse'],
    loadgens: ['autocannon'],
    baseline: `batch-${size}${compressed ? '-gzip' : ''}`,
    eventsPerRequest: size,
    e2e: true,
    ceilingRows: !compressed && size === 100,
    requests: (ctx) =>
      batchBodies(ctx.token, size, bodyCount).map((text) => ({
        method: 'POST',
        path: '/batch/',
        headers: compressed ? { 'content-type': 'application/json', 'content-encoding': 'gzip' } : { 'content-type': 'application/json' },
        body: compressed ? gzip(text) : text,
      })),
    check: (res) => (res.status === 200 && res.json?.status === 1 ? null : `expected 200 {"status":1}, got ${res.status} ${res.text.slice(0, 200)}`),
  }
}

export default [scenario(100, false), scenario(100, true), scenario(1000, false), scenario(1000, true)]
