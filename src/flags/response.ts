/**
 * The bodies of /decide and /flags, by version (posthog-semantics §1.3): v1 a list of enabled keys, v2 a
 * map of enabled flags, v3 every evaluated flag with payloads (the contract's shape), v4 (and /flags v2)
 * per-flag details. Config fields are what posthog-js reads at start-up, set so it starts cleanly and
 * does not try features skylark doesn't serve (recordings, site apps, surveys).
 */
import type { EvaluationResponse, FlagResult } from './types.js'

export type ResponseShape = 'v1' | 'v2' | 'v3' | 'v4'

export interface ResponseOptions {
  shape: ResponseShape
  withConfig: boolean
  /** `["gzip", "lz64"]` on /decide (the contract's values); `["gzip", "gzip-js"]` on /flags (what posthog-js looks for). */
  supportedCompression: string[]
  requestId: string
}

function value(result: FlagResult): boolean | string {
  return result.variant ?? result.enabled
}

export function configFields(supportedCompression: string[]): Record<string, unknown> {
  return {
    config: { enable_collect_everything: true },
    editorParams: {},
    toolbarParams: {},
    isAuthenticated: false,
    supportedCompression,
    sessionRecording: false,
    capturePerformance: false,
    autocapture_opt_out: false,
    autocaptureExceptions: false,
    heatmaps: false,
    surveys: false,
    captureDeadClicks: false,
    elementsChainAsString: true,
    defaultIdentifiedOnly: true,
    flagsPersistenceDefault: false,
    siteApps: [],
  }
}

/**
 * What every browser needs to know before it captures: posthog-js ≥ 1.26x loads this from
 * `/array/<token>/config.js` (or `/config`) instead of reading it from /flags. PostHog's `build_config`
 * fields, with skylark's answers: nothing it doesn't serve is switched on (recordings, surveys, heatmaps,
 * site apps, dead clicks, web vitals), so the SDK requests nothing that would 404. posthog-js takes
 * `gzip-js` (else `base64`) from `supportedCompression`; `gzip` is kept for PostHog's own value.
 */
export function remoteConfigBody(token: string, hasFeatureFlags: boolean): Record<string, unknown> {
  return {
    token,
    supportedCompression: ['gzip', 'gzip-js', 'base64'],
    hasFeatureFlags,
    captureDeadClicks: false,
    capturePerformance: false,
    autocapture_opt_out: false,
    autocaptureExceptions: false,
    analytics: { endpoint: '/i/v0/e/' },
    elementsChainAsString: true,
    errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
    sessionRecording: false,
    heatmaps: false,
    surveys: false,
    defaultIdentifiedOnly: true,
    siteApps: [],
  }
}

export function flagsBody(result: EvaluationResponse, options: ResponseOptions): Record<string, unknown> {
  const flags = Object.values(result.flags)
  const body: Record<string, unknown> = options.withConfig ? configFields(options.supportedCompression) : {}
  switch (options.shape) {
    case 'v1':
      body.featureFlags = flags.filter((f) => f.enabled).map((f) => f.key)
      break
    case 'v2':
      body.featureFlags = Object.fromEntries(flags.filter((f) => f.enabled).map((f) => [f.key, value(f)]))
      break
    case 'v3': {
      body.featureFlags = Object.fromEntries(flags.map((f) => [f.key, value(f)]))
      body.featureFlagPayloads = Object.fromEntries(
        flags.filter((f) => f.enabled && f.payload !== null && f.payload !== undefined).map((f) => [f.key, f.payload]),
      )
      body.errorComputingFlags = result.errorsWhileComputingFlags
      break
    }
    case 'v4':
      body.flags = Object.fromEntries(
        flags.map((f) => [
          f.key,
          {
            key: f.key,
            enabled: f.enabled,
            variant: f.variant,
            reason: f.reason,
            metadata: { id: f.id, version: f.version, description: null, payload: f.enabled ? (f.payload ?? null) : null },
            ...(f.failed ? { failed: true } : {}),
          },
        ]),
      )
      break
  }
  body.errorsWhileComputingFlags = result.errorsWhileComputingFlags
  body.requestId = options.requestId
  return body
}

const configJsonCache = new Map<string, string>()

/** The config fields as a JSON fragment (no braces), serialised once per compression list. */
function configFragment(supportedCompression: string[]): string {
  const key = supportedCompression.join(',')
  let fragment = configJsonCache.get(key)
  if (fragment === undefined) {
    fragment = JSON.stringify(configFields(supportedCompression)).slice(1, -1)
    configJsonCache.set(key, fragment)
  }
  return fragment
}

/** `flagsBody` already serialised, with the constant config part spliced in instead of re-serialised. */
export function flagsJson(result: EvaluationResponse, options: ResponseOptions): string {
  const inner = JSON.stringify(flagsBody(result, { ...options, withConfig: false })).slice(1, -1)
  return options.withConfig ? `{${configFragment(options.supportedCompression)},${inner}}` : `{${inner}}`
}
