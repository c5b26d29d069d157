// /decide?v=3 for one of 100 stored persons (20 properties each) with 1, 50, 350 and 500 active flags of
// the realistic mix (_payloads.mjs flagBody): plain, with groups, and with person_properties in the body.
// 50 flags is the target's case (also run at half its measured maximum rate for the p99 target, and while
// the service ingests events); 350 is the per-core target; 500 shows how evaluation scales past it (both
// still evaluate inline: FLAGS_INLINE_MAX is 1000).
import { batchBodies, decideBodies } from './_payloads.mjs'
import { checkDecide, ensureFlags, ensurePersons } from './_decide-setup.mjs'

function scenario(flags, variant = 'plain', extra = {}) {
  const suffix = variant === 'plain' ? '' : `-${variant}`
  return {
    name: `decide-${flags}${suffix}`,
    title: `/decide?v=3 ${flags} flag${flags === 1 ? '' : 's'}${variant === 'plain' ? '' : `, ${variant.replace('-', ' ')}`}`,
    groups: ['decide'],
    kind: 'load',
    server: 'decide',
    sinks: ['sqlite'],
    loadgens: ['autocannon'],
    baseline: 'capture',
    eventsPerRequest: 0,
    e2e: false,
    flags,
    async setup(ctx) {
      await ensurePersons(ctx)
      await ensureFlags(ctx, flags)
    },
    requests: (ctx) =>
      decideBodies(ctx.token, { groups: variant === 'groups', personProperties: variant === 'person-properties' }).map((body) => ({
        method: 'POST',
        path: '/decide?v=3',
        headers: { 'content-type': 'application/json' },
        body,
      })),
    check: (res) => checkDecide(res, flags),
    ...extra,
  }
}

export default [
  scenario(1),
  // with wrk too: the target compares it to raw uWS, and autocannon saturates its core first
  scenario(50, 'plain', { loadgens: ['autocannon', 'wrk'] }),
  scenario(50, 'groups'),
  scenario(50, 'person-properties'),
  // p99 at half of the maximum measured just before (decide-50), offered at a steady rate by bench/lib/steady.mjs
  // (autocannon's rate limit sends each second's share back to back, i.e. full speed half of the time).
  scenario(50, 'half-rate', {
    loadgens: ['steady'],
    load: { overallRate: (done, sink) => (done[`decide-50@${sink}`] ? Math.max(1, Math.round(done[`decide-50@${sink}`].rps / 2)) : null) },
  }),
  // While the service ingests 2,000 browser events a second (/batch/ of 20, other distinct ids): every
  // consumer commit to persons.db is seen by /decide's person cache, as on any live site.
  scenario(50, 'ingesting', {
    title: '/decide?v=3 50 flags, while ingesting 2,000 events/s',
    loadgens: ['autocannon', 'wrk'],
    background: {
      rate: 100,
      connections: 2,
      requests: (ctx) => batchBodies(ctx.token, 20, 50).map((body) => ({ method: 'POST', path: '/batch/', headers: { 'content-type': 'application/json' }, body })),
    },
  }),
  scenario(350),
  scenario(500),
]
