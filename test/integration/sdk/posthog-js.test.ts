/**
 * posthog-js 1.449.2 (the browser SDK, its `array.full.js` bundle as shipped on npm) in headless
 * Chromium, against skylark on both event stores. The page comes from another port, so every request is
 * cross-origin and needs skylark's CORS answers. The page captures a pageview and a custom event,
 * identifies, joins a group, reads flags and a payload, writes a log (`captureLog`) and metrics (`posthog.metrics`), and leaves (a `$pageleave` over sendBeacon); the
 * test then checks what skylark stored, and that the browser saw no console error, no failed request,
 * no non-2xx answer and no retry.
 *
 * Chromium is Debian's (`/usr/bin/chromium`; `.ci/run` installs it), driven by playwright-core. The
 * machine's network is closed, so Chromium's own background connections are switched off. Chromium runs
 * with `navigator.webdriver` set, which posthog-js treats as a bot, so the page sets
 * `opt_out_useragent_filter: true`, as posthog-js's own warning advises for end-to-end tests.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer, type Server } from 'node:http'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Browser, ConsoleMessage } from 'playwright-core'
import { chromium } from 'playwright-core'
import { ROOT } from '../../helpers/server.js'
import { CHROMIUM, CHROMIUM_ARGS, browserContext, chromiumSkip } from './chromium.js'
import {
  PAYLOAD_TEST,
  assertClean,
  eachStore,
  groupOf,
  kindOf,
  personOf,
  publicAnswers,
  storedEventWhere,
  storedEvents,
  summarise,
  until,
  type Exchange,
  type StoreRun,
} from './harness.js'

const require = createRequire(import.meta.url)
const BUNDLE = join(require.resolve('posthog-js/package.json'), '..', 'dist', 'array.full.js')
const VERSION: string = JSON.parse(readFileSync(require.resolve('posthog-js/package.json'), 'utf8')).version

function page(token: string, apiHost: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>skylark test page</title><link rel="icon" href="data:,"></head>
<body><h1>skylark</h1>
<script src="/posthog.js"></script>
<script>
  window.flagLoads = 0
  posthog.init(${JSON.stringify(token)}, {
    api_host: ${JSON.stringify(apiHost)},
    opt_out_useragent_filter: true,
    loaded: function () { window.posthogLoaded = true },
  })
  posthog.onFeatureFlags(function () { window.flagLoads++ })
</script>
</body></html>`
}

/** The test site: the page and the SDK bundle, on its own port (another origin than skylark). */
async function startSite(html: () => string): Promise<{ url: string; server: Server }> {
  const bundle = readFileSync(BUNDLE)
  const server = createServer((req, res) => {
    if (req.url === '/posthog.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' })
      res.end(bundle)
    } else if (req.url === '/' || req.url?.startsWith('/?')) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(html())
    } else {
      res.writeHead(404)
      res.end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`, server }
}

async function scenario(t: Test, { store, server }: StoreRun, browser: Browser): Promise<void> {
  const token = server.boot.project_api_key
  const site = await startSite(() => page(token, server.baseUrl))
  t.teardown(() => new Promise<void>((resolve) => site.server.close(() => resolve())))
  const context = await browserContext(t, browser)
  const tab = await context.newPage()

  const log: Exchange[] = []
  const problems: string[] = []
  const console: string[] = []
  tab.on('console', (m: ConsoleMessage) => {
    console.push(`${m.type()}: ${m.text()}`)
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`)
  })
  tab.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  tab.on('requestfailed', (r) => problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`))
  tab.on('requestfinished', async (r) => {
    if (!r.url().startsWith(server.baseUrl)) return
    const u = new URL(r.url())
    const body = r.postDataBuffer()
    const headers = await r.allHeaders()
    const response = await r.response()
    log.push({
      method: r.method(),
      path: u.pathname,
      query: u.search,
      status: response?.status() ?? null,
      contentType: headers['content-type'],
      contentEncoding: headers['content-encoding'],
      bodyKind: kindOf(body, headers['content-type']),
      digest: body ? createHash('sha1').update(body).digest('hex') : undefined,
      bytes: body?.length,
    })
  })

  await tab.goto(site.url)
  await tab.waitForFunction(() => (globalThis as any).posthogLoaded && (globalThis as any).flagLoads > 0, undefined, { timeout: 15_000 })
  const anonymous: string = await tab.evaluate(() => (globalThis as any).posthog.get_distinct_id())
  const user = `${store}-web-user`
  const company = `${store}-web-co`

  t.test('flags and payloads in the browser', async (t) => {
    const before = await tab.evaluate(() => {
      const ph = (globalThis as any).posthog
      return { on: ph.isFeatureEnabled('sdk-on'), variant: ph.getFeatureFlag('sdk-variant'), payload: ph.getFeatureFlagPayload('sdk-variant') }
    })
    t.same(before, { on: true, variant: 'test', payload: PAYLOAD_TEST }, 'the anonymous visitor gets flags and a payload')
  })

  t.test('capture, identify, group', async (t) => {
    await tab.evaluate(
      ({ user, company }) => {
        const ph = (globalThis as any).posthog
        ph.capture('custom event', { a: 1, nested: { b: [1, 2] } })
        ph.identify(user, { email: 'web@example.com', plan: 'pro' }, { first_lib: 'web' })
        ph.group('company', company, { name: 'Web Co', tier: 'gold' })
      },
      { user, company },
    )
    const person = await personOf(server, user, (p) => p.properties.plan === 'pro' && p.distinct_ids.includes(anonymous))
    t.match(person.properties, { email: 'web@example.com', plan: 'pro', first_lib: 'web' })
    t.match((await groupOf(server, company, (g) => g.group_properties.tier === 'gold')).group_properties, { name: 'Web Co' })
    // After identify and group() the SDK reloads flags for the user; the group flag follows the stored group.
    const flags = await until(
      'the identified user’s flags',
      async () => {
        // One reload at a time: wait for its answer before reading (a second reload would abort the first).
        const f = await tab.evaluate(
          () =>
            new Promise<{ pro: unknown; company: unknown; variant: unknown }>((resolve) => {
              const ph = (globalThis as any).posthog
              const loads = (globalThis as any).flagLoads
              ph.reloadFeatureFlags()
              const check = () =>
                (globalThis as any).flagLoads > loads
                  ? resolve({ pro: ph.getFeatureFlag('sdk-pro'), company: ph.getFeatureFlag('sdk-company'), variant: ph.getFeatureFlag('sdk-variant') })
                  : setTimeout(check, 20)
              check()
            }),
        )
        return f.pro === true && f.company === true ? f : undefined
      },
      10_000,
    )
    t.same(flags, { pro: true, company: true, variant: 'test' })
  })

  t.test('captureLog: the log reaches the logs API with the page and the person', async (t) => {
    await tab.evaluate(() => (globalThis as any).posthog.captureLog({ body: 'checkout clicked', level: 'warn', attributes: { button: 'buy' } }))
    const logs = `/api/projects/${server.boot.project_id}/logs/query/`
    const found = await until('the browser log', async () => {
      const r = await server.api('POST', logs, { query: { dateRange: { date_from: '-1h' }, searchTerm: 'checkout clicked' } })
      return r.body.results?.[0]
    })
    t.match(found, { body: 'checkout clicked', severity_text: 'warn', attributes: { button: 'buy', posthogDistinctId: user, 'url.full': site.url } })
  })

  t.test('posthog.metrics: a counter and a histogram reach the metrics API', async (t) => {
    await tab.evaluate(async () => {
      const metrics = (globalThis as any).posthog.metrics
      metrics.count('orders_created', 2, { attributes: { plan: 'pro' } })
      metrics.count('orders_created', 1, { attributes: { plan: 'pro' } })
      metrics.histogram('api_latency', 187, { unit: 'ms' })
      await metrics.flush()
    })
    const metrics = `/api/projects/${server.boot.project_id}/metrics`
    const names = await until('the browser metrics', async () => {
      const r = await server.api('GET', `${metrics}/values/`)
      return r.body.results?.length === 2 ? r.body.results : undefined
    })
    t.same(new Set(names.map((n: any) => `${n.name}:${n.metric_type}`)), new Set(['orders_created:sum', 'api_latency:histogram']))
    const r = await server.api('POST', `${metrics}/query/`, {
      query: { metricName: 'orders_created', aggregation: 'increase', groupBy: [{ key: 'plan' }], dateFrom: new Date(Date.now() - 3_600_000).toISOString(), interval: 'hour' },
    })
    t.equal(r.status, 200)
    t.equal(r.body.results[0].labels.plan, 'pro')
    t.equal(r.body.results[0].points.reduce((n: number, p: any) => n + p.value, 0), 3, 'a delta counter: its window is its own increase')
  })

  t.test('leaving the page sends $pageleave', async (t) => {
    await tab.goto('about:blank')
    const [leave] = await storedEvents(server, { distinct_id: user, event: '$pageleave' }, 1)
    t.equal(leave.properties.$lib, 'web')
  })

  t.test('what skylark stored', async (t) => {
    const person = await personOf(server, user)
    const [pageview] = await storedEvents(server, { distinct_id: anonymous, event: '$pageview' }, 1)
    t.match(pageview.properties, { $current_url: site.url, $lib: 'web', $lib_version: VERSION })
    t.equal(pageview.person_id, person.uuid, 'the anonymous pageview belongs to the identified person')
    const [custom] = await storedEvents(server, { distinct_id: anonymous, event: 'custom event' }, 1)
    t.match(custom.properties, { a: 1, nested: { b: [1, 2] } })
    const [identify] = await storedEvents(server, { distinct_id: user, event: '$identify' }, 1)
    t.equal(identify.properties.$anon_distinct_id, anonymous)
    t.match(identify.properties.$set, { email: 'web@example.com' })
    await storedEvents(server, { distinct_id: user, event: '$groupidentify' }, 1)
    t.ok(await storedEventWhere(server, { event: '$feature_flag_called' }, (e) => e.properties.$feature_flag === 'sdk-variant'), '$feature_flag_called for sdk-variant')
  })

  t.test('the browser saw no error, no failed request, no retry', async (t) => {
    assertClean(t, log, `posthog-js on ${store}`)
    t.same(problems, [], 'no console error or warning, no failed request')
    t.ok(log.some((e) => /^\/array\/[^/]+\/config\.js$/.test(e.path)), 'remote config came from config.js')
    t.ok(log.some((e) => e.path === '/i/v0/e/'), 'capture follows analytics.endpoint')
    const answers = await publicAnswers(server)
    t.same(Object.keys(answers).filter((k) => !/ 2\d\d$/.test(k)), [], 'skylark answered every public request 2xx, the unload beacon included')
    t.comment(`posthog-js ${VERSION} on ${store}:\n  ${summarise(log).join('\n  ')}\n  skylark's count: ${JSON.stringify(answers)}`)
  })
}

const skip = chromiumSkip()

t.test('posthog-js in Chromium against skylark', { skip }, async (t) => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())
  eachStore(t, (t, run) => scenario(t, run, browser))
})
