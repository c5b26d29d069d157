// A mixed profile: 9 of every 10 requests are /capture/, 1 is /decide?v=3 (50 flags), on the decide server.
import { captureBodies, decideBodies } from './_payloads.mjs'
import { checkDecide, ensureFlags, ensurePersons } from './_decide-setup.mjs'

const FLAGS = 50

export default [
  {
    name: 'mixed-90-10',
    title: 'mixed: 90 % /capture/, 10 % /decide (50 flags)',
    groups: ['decide'],
    kind: 'load',
    server: 'decide',
    sinks: ['sqlite'],
    loadgens: ['autocannon'],
    baseline: 'capture',
    eventsPerRequest: 0.9,
    e2e: true,
    async setup(ctx) {
      await ensurePersons(ctx)
      await ensureFlags(ctx, FLAGS)
    },
    requests(ctx) {
      const captures = captureBodies(ctx.token, 900)
      const decides = decideBodies(ctx.token)
      const out = []
      for (let i = 0; i < 900; i++) {
        out.push({ method: 'POST', path: '/capture/', headers: { 'content-type': 'application/json' }, body: captures[i] })
        if (i % 9 === 8) out.push({ method: 'POST', path: '/decide?v=3', headers: { 'content-type': 'application/json' }, body: decides[(i / 9) % decides.length | 0] })
      }
      return out
    },
    // Every kind of request in the mix is checked once.
    checkRequests: (requests) => [requests[0], requests.find((r) => r.path.startsWith('/decide'))],
    check: (res, req) =>
      req.path.startsWith('/decide') ? checkDecide(res, FLAGS) : res.status === 200 && res.json?.status === 1 ? null : `capture answered ${res.status}`,
  },
]
