/**
 * posthog-js's `cookieless_mode: 'always'` in Chromium against a project with stateful cookieless mode: the
 * browser keeps no id and sends `$posthog_cookieless`; its events are stored under the id skylark derives from
 * its IP, site and user agent, without those, and /flags evaluates that same id, so a person property one of its
 * events set turns a flag on for the browser.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:http'
import { join } from 'node:path'
import t from 'tap'
import { chromium } from 'playwright-core'
import { serverFor } from '../../helpers/server.js'
import { CHROMIUM, CHROMIUM_ARGS, browserContext, chromiumSkip } from './chromium.js'
import { storedEvents, until } from './harness.js'

const require = createRequire(import.meta.url)
const BUNDLE = readFileSync(join(require.resolve('posthog-js/package.json'), '..', 'dist', 'array.full.js'))

t.test('posthog-js in cookieless mode', { skip: chromiumSkip() }, async (t) => {
  const server = await serverFor(t, { env: { SINK_FLUSH_INTERVAL_MS: '50' } })
  const base = `/api/projects/${server.boot.project_id}`
  t.equal((await server.api('PATCH', `${base}/`, { cookieless_server_hash_mode: 2 })).status, 200)
  const flag = { key: 'pro-plan', filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }], rollout_percentage: 100 }] } }
  t.equal((await server.api('POST', `${base}/feature_flags/`, flag)).status, 201)

  const html = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>
<script src="/posthog.js"></script>
<script>
  window.flagLoads = 0
  posthog.init(${JSON.stringify(server.boot.project_api_key)}, {
    api_host: ${JSON.stringify(server.baseUrl)},
    cookieless_mode: 'always',
    opt_out_useragent_filter: true,
    loaded: function () { window.posthogLoaded = true },
  })
  posthog.onFeatureFlags(function () { window.flagLoads++ })
</script></body></html>`
  const site = createServer((req, res) => {
    res.writeHead(req.url === '/posthog.js' ? 200 : req.url === '/' ? 200 : 404, { 'content-type': req.url === '/posthog.js' ? 'application/javascript' : 'text/html' })
    res.end(req.url === '/posthog.js' ? BUNDLE : req.url === '/' ? html : '')
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => site.close(() => resolve())))
  const address = site.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())
  const tab = await (await browserContext(t, browser)).newPage()
  const problems: string[] = []
  tab.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  tab.on('requestfailed', (r) => problems.push(`request failed: ${r.method()} ${r.url()}`))
  tab.on('response', (r) => {
    if (r.url().startsWith(server.baseUrl) && r.status() >= 300) problems.push(`${r.status()} for ${r.url()}`)
  })
  tab.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`)
  })

  await tab.goto(url)
  await tab.waitForFunction(() => (globalThis as any).posthogLoaded && (globalThis as any).flagLoads > 0, undefined, { timeout: 15_000 })
  t.equal(await tab.evaluate(() => (globalThis as any).posthog.get_distinct_id()), '$posthog_cookieless', 'the browser keeps no id of its own')
  t.equal(await tab.evaluate(() => (globalThis as any).posthog.isFeatureEnabled('pro-plan')), false)
  await tab.evaluate(() => (globalThis as any).posthog.capture('cookieless-visit', { $set: { plan: 'pro' } }))

  const [visit] = await storedEvents(server, { event: 'cookieless-visit' }, 1)
  t.match(visit.distinct_id, /^cookieless_[A-Za-z0-9+/]{22}$/)
  t.match(visit.properties, { $cookieless_mode: true, $device_id: /^cookielessd_/, $session_id: /^[0-9a-f-]{36}$/, $host: /^127\.0\.0\.1:\d+$/ })
  for (const key of ['$ip', '$raw_user_agent']) t.notOk(key in visit.properties, `${key} is not stored`)
  const [pageview] = await storedEvents(server, { event: '$pageview' }, 1)
  t.equal(pageview.distinct_id, visit.distinct_id, 'the pageview is the same visitor')
  t.equal(pageview.properties.$session_id, visit.properties.$session_id, 'in the same session')

  // The flag reads the person the visit's $set made: /flags hashed the browser's request to the same id.
  const enabled = await until('the flag to turn on for the browser', async () => {
    await tab.evaluate(() => (globalThis as any).posthog.reloadFeatureFlags())
    await new Promise((r) => setTimeout(r, 300))
    return (await tab.evaluate(() => (globalThis as any).posthog.isFeatureEnabled('pro-plan'))) === true ? true : undefined
  })
  t.equal(enabled, true)
  t.same(problems, [], 'no error, failed request or non-2xx answer')
})
