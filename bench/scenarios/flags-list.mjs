// The management list endpoint: GET /api/projects/:id/feature_flags/ (first page, 50 flags of the mix),
// authenticated with the personal key from `skylark bootstrap`.
import { ensureFlags } from './_decide-setup.mjs'

const FLAGS = 50

export default [
  {
    name: 'flags-list',
    title: `GET feature_flags/ (${FLAGS} flags)`,
    groups: ['decide'],
    kind: 'load',
    server: 'decide',
    sinks: ['sqlite'],
    loadgens: ['autocannon'],
    baseline: 'capture',
    eventsPerRequest: 0,
    e2e: false,
    setup: (ctx) => ensureFlags(ctx, FLAGS),
    requests: (ctx) => [
      { method: 'GET', path: `/api/projects/${ctx.projectId}/feature_flags/`, headers: { authorization: `Bearer ${ctx.personalKey}` } },
    ],
    check: (res) => (res.status === 200 && res.json?.count === FLAGS ? null : `expected 200 with count ${FLAGS}, got ${res.status} ${res.text.slice(0, 200)}`),
  },
]
