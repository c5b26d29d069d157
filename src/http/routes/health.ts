/** Liveness, readiness and Prometheus metrics. None of them needs a key; none reveals project data. */
import type { Registry } from 'prom-client'
import { json } from '../reply.js'
import type { Router } from '../router.js'

export interface ReadinessCheck {
  name: string
  /** Resolves ok=false (with a reason) rather than throwing. */
  check: () => Promise<{ ok: boolean; detail?: string }>
}

export function registerHealthRoutes(router: Router, checks: ReadinessCheck[], registry: Registry, beforeMetrics?: () => void): void {
  const live = () => json(200, { status: 'ok' })
  router.add('get', '/_health', live, { maxBodyBytes: 0, label: '/_health', probe: true })
  router.add('get', '/_liveness', live, { maxBodyBytes: 0, label: '/_health', probe: true })
  router.add(
    'get',
    '/_readiness',
    async () => {
      const results: Record<string, { ok: boolean; detail?: string }> = {}
      await Promise.all(
        checks.map(async (c) => {
          try {
            results[c.name] = await c.check()
          } catch (error) {
            results[c.name] = { ok: false, detail: error instanceof Error ? error.message : String(error) }
          }
        }),
      )
      const ready = Object.values(results).every((r) => r.ok)
      return json(ready ? 200 : 503, { status: ready ? 'ok' : 'unavailable', checks: results })
    },
    { maxBodyBytes: 0, probe: true },
  )
  router.add(
    'get',
    '/metrics',
    async () => {
      beforeMetrics?.()
      return { status: 200, headers: { 'Content-Type': registry.contentType }, body: await registry.metrics() }
    },
    { maxBodyBytes: 0, probe: true },
  )
}
