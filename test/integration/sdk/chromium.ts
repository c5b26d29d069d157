/**
 * Debian's Chromium (`/usr/bin/chromium`; `.ci/run` installs it), driven by playwright-core, for the posthog-js
 * tests. The machine's network is closed, so Chromium's own background connections are switched off.
 */
import { existsSync } from 'node:fs'
import type { Browser, BrowserContext } from 'playwright-core'
import type { Test } from 'tap'

export const CHROMIUM = '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** Why a browser test is skipped (false: it runs); CI must run it, so a missing Chromium throws there. */
export function chromiumSkip(): string | false {
  const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium)`
  if (skip && process.env.CI) throw new Error(`${CHROMIUM} is not installed, and CI must run the browser test`)
  return skip
}

/**
 * A new browser context, closed after `t`. tsx, which runs the tests, compiles them with esbuild's `keepNames`: a
 * function a test hands to `page.evaluate` can call esbuild's `__name` helper, which a page lacks, so each page
 * gets one that does nothing.
 */
export async function browserContext(t: Test, browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext()
  t.teardown(() => context.close())
  await context.addInitScript('globalThis.__name = (target) => target')
  return context
}
