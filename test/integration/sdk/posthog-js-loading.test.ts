/**
 * posthog-js 1.449.2 in headless Chromium, loading what it loads from the API host (SQLite store: nothing here
 * depends on the event store). Two pages, each on another origin than skylark:
 *
 * - PostHog's HTML snippet with `api_host` = skylark: the stub loads `<api_host>/static/array.js`, which must come
 *   from skylark, start posthog-js and capture an event.
 * - the npm build (`dist/module.js`, what `import posthog from 'posthog-js'` bundles) with a default init: it
 *   loads its surveys extension from `/static/<version>/surveys.js`; `getSurveys` and `getEarlyAccessFeatures`
 *   call back with what skylark has (no surveys, the project's early access feature).
 *
 * On the npm page a person then opts in to a beta feature (`updateEarlyAccessFeatureEnrollment`): once the event
 * is stored, skylark's /flags and /decide serve the feature's flag to that person; opting out takes it away.
 *
 * Either page must leave no console error or warning, no failed request and no non-2xx answer from skylark.
 * The pages set `opt_out_useragent_filter: true`: Chromium runs with `navigator.webdriver`, a bot to posthog-js.
 */
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Browser, Page } from 'playwright-core'
import { chromium } from 'playwright-core'
import { serverFor, type TestServer } from '../../helpers/server.js'
import { CHROMIUM, CHROMIUM_ARGS, browserContext, chromiumSkip } from './chromium.js'
import { createFeature, storedEvents, until } from './harness.js'

const require = createRequire(import.meta.url)
const DIST = join(require.resolve('posthog-js/package.json'), '..', 'dist')
const VERSION: string = JSON.parse(readFileSync(join(DIST, '..', 'package.json'), 'utf8')).version

/** PostHog's HTML snippet as its docs give it (the stub queues calls until `/static/array.js` has loaded). */
const SNIPPET =
  '!function(t,e){var o,n,p,r;e.__SV||(window.posthog&&window.posthog.__loaded)||(window.posthog=e,e._i=[],e.init=function(i,s,a){function g(t,e){var o=e.split(".");2==o.length&&(t=t[o[0]],e=o[1]),t[e]=function(){t.push([e].concat(Array.prototype.slice.call(arguments,0)))}}(p=t.createElement("script")).type="text/javascript",p.crossOrigin="anonymous",p.async=!0,p.src=s.api_host.replace(".i.posthog.com","-assets.i.posthog.com")+"/static/array.js",(r=t.getElementsByTagName("script")[0]).parentNode.insertBefore(p,r);var u=e;for(void 0!==a?u=e[a]=[]:a="posthog",u.people=u.people||[],u.toString=function(t){var e="posthog";return"posthog"!==a&&(e+="."+a),t||(e+=" (stub)"),e},u.people.toString=function(){return u.toString(1)+".people (stub)"},o="init capture register register_once unregister getFeatureFlag getFeatureFlagPayload isFeatureEnabled reloadFeatureFlags updateEarlyAccessFeatureEnrollment getEarlyAccessFeatures on onFeatureFlags onSessionId getSurveys getActiveMatchingSurveys identify setPersonProperties group resetGroups reset get_distinct_id getGroups get_session_id alias set_config get_property opt_in_capturing opt_out_capturing has_opted_in_capturing has_opted_out_capturing".split(" "),n=0;n<o.length;n++)g(u,o[n]);e._i.push([i,s,a])},e.__SV=1)}(document,window.posthog||[]);'

function snippetPage(token: string, apiHost: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>snippet</title><link rel="icon" href="data:,">
<script>
  ${SNIPPET}
  posthog.init(${JSON.stringify(token)}, {
    api_host: ${JSON.stringify(apiHost)},
    opt_out_useragent_filter: true,
    loaded: function () { window.posthogLoaded = true },
  })
  posthog.capture('snippet event', { from: 'snippet' })
</script></head>
<body><h1>snippet</h1></body></html>`
}

function npmPage(token: string, apiHost: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>npm</title><link rel="icon" href="data:,"></head>
<body><h1>npm</h1>
<script type="module">
  import posthog from '/posthog-js/module.js'
  posthog.init(${JSON.stringify(token)}, { api_host: ${JSON.stringify(apiHost)}, opt_out_useragent_filter: true })
  window.posthog = posthog
</script>
</body></html>`
}

/** The test site: the two pages and posthog-js's ES module, on its own port (another origin than skylark). */
async function startSite(token: string, apiHost: string): Promise<{ url: string; server: Server }> {
  const moduleJs = readFileSync(join(DIST, 'module.js'))
  const server = createServer((req, res) => {
    const html = req.url === '/snippet' ? snippetPage(token, apiHost) : req.url === '/npm' ? npmPage(token, apiHost) : null
    if (html !== null) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(html)
    } else if (req.url === '/posthog-js/module.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' })
      res.end(moduleJs)
    } else {
      res.writeHead(404)
      res.end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, server }
}

interface Watched {
  /** `GET /static/array.js → 200` lines, for every request the page made to skylark. */
  answers: string[]
  problems: string[]
}

/** A new tab that records skylark's answers and every console error or warning, failed request, page error. */
async function watchedTab(t: Test, browser: Browser, server: TestServer): Promise<{ tab: Page; seen: Watched }> {
  const context = await browserContext(t, browser)
  const tab = await context.newPage()
  const seen: Watched = { answers: [], problems: [] }
  tab.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') seen.problems.push(`console ${m.type()}: ${m.text()}`)
  })
  tab.on('pageerror', (e) => seen.problems.push(`page error: ${e.message}`))
  tab.on('requestfailed', (r) => seen.problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`))
  tab.on('response', (r) => {
    if (!r.url().startsWith(server.baseUrl)) return
    const u = new URL(r.url())
    seen.answers.push(`${r.request().method()} ${u.pathname}${u.search.replace(/([?&])(token|_)=[^&]*/g, '$1$2=…')} → ${r.status()}`)
  })
  return { tab, seen }
}

function assertClean(t: Test, seen: Watched): void {
  t.same(seen.problems, [], 'no console error or warning, no failed request')
  t.same(seen.answers.filter((a) => !/ → 2\d\d$/.test(a)), [], 'skylark answered every request 2xx')
  t.comment(seen.answers.join('\n'))
}

t.test('posthog-js loaded from skylark, in Chromium', { skip: chromiumSkip() }, async (t) => {
  const server = await serverFor(t, { env: { SINK_FLUSH_INTERVAL_MS: '50' } })
  await createFeature(server, { name: 'The new editor', stage: 'beta' })
  await createFeature(server, { name: 'Mind reading', description: 'Coming soon.', stage: 'concept' })
  const site = await startSite(server.boot.project_api_key, server.baseUrl)
  t.teardown(() => new Promise<void>((resolve) => site.server.close(() => resolve())))
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())

  t.test("PostHog's HTML snippet loads posthog-js from skylark and captures", async (t) => {
    const { tab, seen } = await watchedTab(t, browser, server)
    await tab.goto(`${site.url}/snippet`)
    await tab.waitForFunction(() => (globalThis as any).posthogLoaded === true, undefined, { timeout: 15_000 })
    t.ok(seen.answers.includes('GET /static/array.js → 200'), 'array.js came from skylark')
    t.equal(await tab.evaluate(() => (globalThis as any).posthog.version), VERSION, 'the stub was replaced by posthog-js')
    const [event] = await storedEvents(server, { event: 'snippet event' }, 1)
    t.match(event.properties, { from: 'snippet', $lib: 'web', $lib_version: VERSION, $current_url: `${site.url}/snippet` })
    assertClean(t, seen)
  })

  t.test('the npm build loads its surveys extension from skylark; surveys and early-access features call back', async (t) => {
    const { tab, seen } = await watchedTab(t, browser, server)
    await tab.goto(`${site.url}/npm`)
    await tab.waitForFunction(() => (globalThis as any).posthog?.__loaded === true, undefined, { timeout: 15_000 })
    const lists = await tab.evaluate(() => {
      const ph = (globalThis as any).posthog
      const surveys = new Promise((resolve) => ph.getSurveys((surveys: unknown, context: unknown) => resolve({ surveys, context }), true))
      const features = new Promise((resolve) => ph.getEarlyAccessFeatures((features: unknown) => resolve(features), true))
      const late = new Promise((resolve) => setTimeout(() => resolve('no callback within 10 s'), 10_000))
      return Promise.all([Promise.race([surveys, late]), Promise.race([features, late])])
    })
    const [surveys, features] = lists as [any, any]
    t.same(surveys.surveys, [], 'getSurveys calls back with no surveys')
    t.notOk(surveys.context?.error, 'and no load error')
    t.match(features, [{ name: 'The new editor', description: '', stage: 'beta', documentationUrl: '', flagKey: 'the-new-editor', id: /^[0-9a-f-]{36}$/ }])
    t.equal(features.length, 1, 'getEarlyAccessFeatures calls back with the early access feature')
    await tab.waitForFunction(() => (globalThis as any).__PosthogExtensions__?.generateSurveys !== undefined, undefined, { timeout: 10_000 })
    t.ok(seen.answers.includes(`GET /static/${VERSION}/surveys.js → 200`), 'the surveys extension came from skylark at its version path')
    t.ok(seen.answers.includes('GET /api/surveys/?token=…&_=… → 200'), 'getSurveys asked skylark')
    t.ok(seen.answers.includes('GET /api/early_access_features/?token=…&_=… → 200'), 'getEarlyAccessFeatures asked skylark')
    assertClean(t, seen)
  })

  t.test('a person who opts in to a beta with posthog-js gets its flag from /flags and /decide; opting out takes it away', async (t) => {
    const { tab, seen } = await watchedTab(t, browser, server)
    await tab.goto(`${site.url}/npm`)
    await tab.waitForFunction(() => (globalThis as any).posthog?.__loaded === true, undefined, { timeout: 15_000 })
    const listed = (await tab.evaluate(
      () =>
        new Promise<unknown>((resolve) => {
          const ph = (globalThis as any).posthog
          ph.onFeatureFlags(() => ph.getEarlyAccessFeatures((features: unknown) => resolve(features), true, ['concept', 'beta']))
        }),
    )) as Array<{ name: string; stage: string; flagKey: string }>
    t.same(listed.map((f) => [f.name, f.stage, f.flagKey]), [['The new editor', 'beta', 'the-new-editor'], ['Mind reading', 'concept', 'mind-reading']], 'both stages asked for, in creation order')
    // posthog-js processes persons only once they are identified (`person_profiles: 'identified_only'`), so an
    // anonymous visitor's enrollment would live in the browser alone.
    const distinctId = 'early-adopter'
    // identify reloads the flags; enrolling while that answer is in flight let it overwrite the enrollment's
    // local value on a loaded machine, so the test waits for it (onFeatureFlags answers once at once, then per load).
    await tab.evaluate(
      (id) =>
        new Promise<void>((resolve, reject) => {
          const ph = (globalThis as any).posthog
          let calls = 0
          const off = ph.onFeatureFlags(() => {
            if (++calls < 2) return
            off()
            resolve()
          })
          setTimeout(() => reject(new Error('identify did not reload the flags within 10 s')), 10_000)
          ph.identify(id)
        }),
      distinctId,
    )
    const token = server.boot.project_api_key
    /** The flag as skylark evaluates it for the person from what it stored, without the browser's overrides. */
    const served = async () => {
      const flags = (await server.request('POST', '/flags/?v=2', { body: { token, distinct_id: distinctId } })).body.flags['the-new-editor']
      const decide = (await server.request('POST', '/decide/?v=3', { body: { token, distinct_id: distinctId } })).body.featureFlags['the-new-editor']
      return { flags: flags.enabled, reason: flags.reason.code, decide }
    }
    t.same(await served(), { flags: false, reason: 'out_of_rollout_bound', decide: false }, 'off before opting in (the flag rolls out to nobody)')

    await tab.evaluate(() => (globalThis as any).posthog.updateEarlyAccessFeatureEnrollment('the-new-editor', true, 'beta'))
    t.equal(await tab.evaluate(() => (globalThis as any).posthog.isFeatureEnabled('the-new-editor')), true, 'posthog-js switches it on at once')
    const [event] = await storedEvents(server, { event: '$feature_enrollment_update' }, 1)
    t.match(event.properties, { $feature_flag: 'the-new-editor', $feature_enrollment: true, $feature_enrollment_stage: 'beta', $early_access_feature_name: 'The new editor' })
    t.same(
      await until('the enrollment reaches the person', async () => ((await served()).flags ? served() : undefined)),
      { flags: true, reason: 'super_condition_value', decide: true },
      'skylark serves it to the enrolled person',
    )

    await tab.evaluate(() => (globalThis as any).posthog.updateEarlyAccessFeatureEnrollment('the-new-editor', false))
    await until('the opt-out reaches the person', async () => ((await served()).flags ? undefined : true))
    t.same(await served(), { flags: false, reason: 'super_condition_value', decide: false }, 'and takes it away again')
    assertClean(t, seen)
  })
})
