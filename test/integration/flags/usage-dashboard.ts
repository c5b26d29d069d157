/** Flag usage dashboards computed from stored `$feature_flag_called` events, on a given event store. */
import type { Test } from 'tap'
import { serverFor } from '../../helpers/server.js'
import { waitForEvents } from '../ingestion/suite.js'

export function usageDashboardSuite(t: Test, env: () => Record<string, string>): void {
  t.test('a flag usage dashboard counts calls and unique users per variant per day', async (t) => {
    const server = await serverFor(t, { env: env() })
    const pid = server.boot.project_id
    const flag = (
      await server.api('POST', `/api/projects/${pid}/feature_flags/`, {
        key: 'checkout',
        has_enriched_analytics: true,
        filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] } },
      })
    ).body
    const today = new Date()
    const yesterday = new Date(Date.now() - 86_400_000)
    const call = (user: string, variant: string, at: Date) => ({
      event: '$feature_flag_called',
      timestamp: at.toISOString(),
      properties: { distinct_id: user, $feature_flag: 'checkout', $feature_flag_response: variant },
    })
    const batch = [
      call('u1', 'control', yesterday),
      call('u1', 'control', yesterday),
      call('u2', 'test', yesterday),
      call('u1', 'control', today),
      call('u3', 'test', today),
      call('u4', 'test', today),
      { event: '$feature_flag_called', properties: { distinct_id: 'u9', $feature_flag: 'other', $feature_flag_response: 'test' } },
    ]
    await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
    await waitForEvents(server, 'event=%24feature_flag_called', batch.length)

    const created = await server.api('POST', `/api/projects/${pid}/feature_flags/${flag.id}/dashboard/`, {})
    t.same(created.body, { success: true })
    const dashboardId = (await server.api('GET', `/api/projects/${pid}/feature_flags/${flag.id}/`)).body.usage_dashboard
    t.ok(Number.isInteger(dashboardId), 'the flag points at its usage dashboard')
    const again = await server.api('POST', `/api/projects/${pid}/feature_flags/${flag.id}/dashboard/`, {})
    t.equal(again.status, 200)
    t.equal((await server.api('GET', `/api/projects/${pid}/feature_flags/${flag.id}/`)).body.usage_dashboard, dashboardId, 'created once')

    const dashboard = await server.api('GET', `/api/projects/${pid}/dashboards/${dashboardId}/`)
    t.equal(dashboard.status, 200)
    t.equal(dashboard.body.name, 'Generated Dashboard: checkout Usage')
    const [volume, users] = dashboard.body.tiles
    const series = (tile: any, variant: string) => tile.result.find((r: any) => r.breakdown_value === variant)
    t.equal(volume.result[0].days.length, 30)
    t.same(series(volume, 'control').data.slice(-2), [2, 1], 'calls per day: control')
    t.same(series(volume, 'test').data.slice(-2), [1, 2], 'calls per day: test')
    t.equal(series(volume, 'control').count, 3)
    t.same(series(users, 'control').data.slice(-2), [1, 1], 'unique users per day: control')
    t.same(series(users, 'test').data.slice(-2), [1, 2], 'unique users per day: test')
    t.equal(dashboard.body.tiles.length, 4, 'enriched tiles were added for a flag with enriched analytics')

    const enrich = await server.api('POST', `/api/projects/${pid}/feature_flags/${flag.id}/enrich_usage_dashboard/`, {})
    t.equal(enrich.status, 400)
    t.equal(enrich.body.detail, 'Usage dashboard already has enriched data')
    t.equal((await server.api('GET', `/api/projects/${pid}/dashboards/99999/`)).status, 404)
  })

  t.test("its days are the project's: a call a minute either side of midnight in Kolkata lands on two days", async (t) => {
    const server = await serverFor(t, { env: env() })
    const pid = server.boot.project_id
    t.equal((await server.api('PATCH', `/api/projects/${pid}/`, { timezone: 'Asia/Kolkata' })).status, 200)
    const flag = (await server.api('POST', `/api/projects/${pid}/feature_flags/`, { key: 'midnight', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })).body
    // Kolkata keeps +05:30 all year: its midnight today, in UTC.
    const offset = 5.5 * 3_600_000
    const midnight = Math.floor((Date.now() + offset) / 86_400_000) * 86_400_000 - offset
    const call = (at: number) => ({ event: '$feature_flag_called', timestamp: new Date(at).toISOString(), properties: { distinct_id: 'night-owl', $feature_flag: 'midnight', $feature_flag_response: true } })
    const batch = [call(midnight - 60_000), call(midnight + 60_000)]
    await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
    // The list leaves out events more than 5 s ahead: the second call may be, just after Kolkata's midnight.
    await waitForEvents(server, 'event=%24feature_flag_called&distinct_id=night-owl&before=2100-01-01T00:00:00Z', batch.length)
    t.same((await server.api('POST', `/api/projects/${pid}/feature_flags/${flag.id}/dashboard/`, {})).body, { success: true })
    const dashboardId = (await server.api('GET', `/api/projects/${pid}/feature_flags/${flag.id}/`)).body.usage_dashboard
    const [volume] = (await server.api('GET', `/api/projects/${pid}/dashboards/${dashboardId}/`)).body.tiles
    const series = volume.result.find((r: any) => r.breakdown_value === 'true')
    t.equal(series.days.at(-1), new Date(midnight + offset).toISOString().slice(0, 10), "the last day is today in Kolkata")
    t.same(series.data.slice(-2), [1, 1], 'one call before its midnight, one after (the same UTC day)')
  })
}
