/**
 * The bodies of /decide and /flags, by version (posthog-semantics §1.3): v1 a list of enabled keys, v2 a
 * map of enabled flags, v3 every evaluated flag with payloads (the contract's shape), v4 (and /flags v2)
 * per-flag details, `typed` (/flags v3 and up; posthog-node ≥ 5.74 asks v4) per-flag records with one typed
 * `value` in place of `enabled` and `variant`. Config fields are what posthog-js reads at start-up, set so it
 * starts cleanly and does not try features skylark doesn't serve (recordings, site apps, surveys).
 */
import type { EvaluationList, FlagResult, PersonState } from './types.js'

export type ResponseShape = 'v1' | 'v2' | 'v3' | 'v4' | 'typed'

export interface ResponseOptions {
  shape: ResponseShape
  withConfig: boolean
  /** `["gzip", "lz64"]` on /decide (the contract's values); `["gzip", "gzip-js"]` on /flags (what posthog-js looks for). */
  supportedCompression: string[]
  requestId: string
  /** When the flags were evaluated, ms since the epoch (PostHog's `evaluatedAt`, on every shape). */
  evaluatedAt: number
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

const CACHE_LIMIT = 20_000
const CACHED_MAX_LENGTH = 256

/** `make(s)`, kept for the short strings every answer repeats; a full cache starts over. */
function remembered<T>(cache: Map<string, T>, s: string, make: (s: string) => T): T {
  if (s.length > CACHED_MAX_LENGTH) return make(s)
  let v = cache.get(s)
  if (v === undefined) {
    if (cache.size >= CACHE_LIMIT) cache.clear()
    cache.set(s, (v = make(s)))
  }
  return v
}

/** JSON text of flag keys, variants and stored payload strings. */
const quotedCache = new Map<string, string>()
const quoted = (s: string): string => remembered(quotedCache, s, JSON.stringify)

/**
 * A flag key's member texts (`"key":` and its two boolean members), also with the comma that precedes every
 * member but the first: most members of an answer are then one string, not three.
 */
interface KeyTexts {
  prefix: string
  on: string
  off: string
  commaPrefix: string
  commaOn: string
  commaOff: string
}
const keyTextsCache = new Map<string, KeyTexts>()

function makeKeyTexts(key: string): KeyTexts {
  const prefix = `${quoted(key)}:`
  return { prefix, on: `${prefix}true`, off: `${prefix}false`, commaPrefix: `,${prefix}`, commaOn: `,${prefix}true`, commaOff: `,${prefix}false` }
}

const keyTexts = (key: string): KeyTexts => remembered(keyTextsCache, key, makeKeyTexts)

function jsonText(v: unknown): string {
  return typeof v === 'string' ? quoted(v) : typeof v === 'boolean' ? (v ? 'true' : 'false') : JSON.stringify(v)
}

/** Reasons are shared objects (`wireReason`), so their text is kept beside them. */
const reasonTexts = new WeakMap<object, string>()

function reasonText(reason: FlagResult['reason']): string {
  let text = reasonTexts.get(reason)
  if (text === undefined) reasonTexts.set(reason, (text = JSON.stringify(reason)))
  return text
}

/** `"key":text` members, joined. */
function members(flags: readonly FlagResult[], include: (f: FlagResult) => boolean, member: (f: FlagResult) => string): string {
  let out = ''
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i]
    if (include(f)) out += (out === '' ? '' : ',') + member(f)
  }
  return out
}

const all = (): boolean => true
const enabled = (f: FlagResult): boolean => f.enabled
// Whenever the result carries one, enabled or not: an early-access flag (or legacy super condition) answered
// false keeps its "true" payload, as PostHog's flag service sends it
const withPayload = (f: FlagResult): boolean => f.payload !== null && f.payload !== undefined

/** `"key":value` (`,"key":value` after the first), the value being the variant or else whether the flag is enabled. */
function valueMember(f: FlagResult, first = true): string {
  const texts = keyTexts(f.key)
  if (f.variant !== null && f.variant !== undefined) return (first ? texts.prefix : texts.commaPrefix) + quoted(f.variant)
  if (first) return f.enabled ? texts.on : texts.off
  return f.enabled ? texts.commaOn : texts.commaOff
}

function payloadMember(f: FlagResult, first: boolean): string {
  const texts = keyTexts(f.key)
  return (first ? texts.prefix : texts.commaPrefix) + jsonText(f.payload)
}

function v4Member(f: FlagResult): string {
  const payload = f.payload ?? null
  return (
    `${keyTexts(f.key).prefix}{"key":${quoted(f.key)},"enabled":${f.enabled},"variant":${jsonText(f.variant)},"reason":${reasonText(f.reason)},` +
    `"metadata":{"id":${JSON.stringify(f.id)},"version":${JSON.stringify(f.version)},"description":null,"payload":${jsonText(payload)},"has_experiment":${f.hasExperiment}}${f.failed ? ',"failed":true' : ''}}`
  )
}

/**
 * A typed record (PostHog's FlagDetailsV3). Every skylark flag is in PostHog's config format 1, whose record
 * is its FlagsV2 detail retold: the value is the variant or else whether it is enabled (none once failed),
 * the variant is named again as `variant_key`, and the payload keeps its legacy channel.
 */
function typedMember(f: FlagResult): string {
  const variant = f.variant ?? null
  const value = f.failed ? 'null' : variant !== null ? quoted(variant) : String(f.enabled)
  const variantKey = variant !== null ? `,"variant_key":${quoted(variant)}` : ''
  return (
    `${keyTexts(f.key).prefix}{"key":${quoted(f.key)},"value":${value}${f.failed ? ',"failed":true' : ''},"reason":${reasonText(f.reason)},` +
    `"metadata":{"id":${JSON.stringify(f.id)},"version":${JSON.stringify(f.version)},"config_version":1,"description":null,"payload":${jsonText(f.payload ?? null)},"has_experiment":${f.hasExperiment}${variantKey}}}`
  )
}

/**
 * The answer's text up to the request id, written directly: building objects of hundreds of keys and
 * serialising them cost more than evaluating the flags (the object form it equals is spelled out in
 * test/unit/flags/fixtures/flags-body.ts, and a test holds the two equal). The flags come in the order of
 * `Object.values` of a keyed object (unique keys, integer-like ones first), which is the order
 * `Object.fromEntries` would give them back, so writing them in list order changes nothing.
 */
function answerHead(result: EvaluationList, options: ResponseOptions): string {
  const flags = result.results
  let inner: string
  switch (options.shape) {
    case 'v1': {
      let keys = ''
      for (const f of flags) if (f.enabled) keys += (keys === '' ? '' : ',') + quoted(f.key)
      inner = `"featureFlags":[${keys}]`
      break
    }
    case 'v2':
      inner = `"featureFlags":{${members(flags, enabled, valueMember)}}`
      break
    case 'v3': {
      // the contract's shape, and what every /decide?v=3 builds: one pass for both maps
      let values = ''
      let payloads = ''
      for (let i = 0; i < flags.length; i++) {
        const f = flags[i]
        values += valueMember(f, i === 0)
        if (withPayload(f)) payloads += payloadMember(f, payloads === '')
      }
      inner = `"featureFlags":{${values}},"featureFlagPayloads":{${payloads}},"errorComputingFlags":${result.errorsWhileComputingFlags}`
      break
    }
    case 'v4':
      inner = `"flags":{${members(flags, all, v4Member)}}`
      break
    case 'typed':
      inner = `"flags":{${members(flags, all, typedMember)}}`
      break
  }
  inner += `,"errorsWhileComputingFlags":${result.errorsWhileComputingFlags},"requestId":`
  return options.withConfig ? `{${configFragment(options.supportedCompression)},${inner}` : `{${inner}`
}

/**
 * The longest head kept on a person's holder alone (one-byte characters): a 50-flag answer's is ≈2.6 K.
 * PersonReader keeps up to 10,000 persons, so these stay under ≈40 MB.
 */
const KEPT_HEAD_MAX = 4096
/**
 * Longer heads (350 flags: ≈13 K) are kept within this many characters over all persons, the least recently
 * used given up first: ≈1,200 persons of 350 flags. Writing such a head and flattening it was about a third
 * of a 350-flag /decide (docs/performance.md).
 */
const LARGE_HEADS_MAX_CHARS = 16 * 1024 * 1024

/** A person's last answer up to its request id, with what it was written from. */
interface KeptHead {
  results: FlagResult[]
  errors: boolean
  shape: ResponseShape
  withConfig: boolean
  supportedCompression: string[]
  head: string
}

/** The kept heads over KEPT_HEAD_MAX, by holder, least recently used first (a Map iterates in insertion order). */
export class LargeHeads {
  readonly #kept = new Map<PersonState, KeptHead>()
  #chars = 0

  constructor(readonly maxChars: number) {}

  get chars(): number {
    return this.#chars
  }

  /** Marks the holder's head as just used. */
  used(state: PersonState, kept: KeptHead): void {
    this.#kept.delete(state)
    this.#kept.set(state, kept)
  }

  /** The holder's new head (null: one under KEPT_HEAD_MAX, not counted here); gives up the oldest over the budget. */
  replace(state: PersonState, kept: KeptHead | null): void {
    const before = this.#kept.get(state)
    if (before !== undefined) {
      this.#kept.delete(state)
      this.#chars -= before.head.length
    }
    if (kept === null) return
    this.#kept.set(state, kept)
    this.#chars += kept.head.length
    for (const [oldest, head] of this.#kept) {
      if (this.#chars <= this.maxChars) break
      this.#kept.delete(oldest)
      this.#chars -= head.head.length
      if (oldest.answer === head) oldest.answer = undefined
    }
  }
}

const largeHeads = new LargeHeads(LARGE_HEADS_MAX_CHARS)

/** Whether two result lists write the same text: the same objects (kept answers) or equal in every field. */
function sameResults(a: readonly FlagResult[], b: readonly FlagResult[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]
    const y = b[i]
    if (x === y) continue
    if (x.key !== y.key || x.enabled !== y.enabled || x.variant !== y.variant || x.payload !== y.payload || x.reason !== y.reason) return false
    if (x.id !== y.id || x.version !== y.version || x.failed !== y.failed || x.hasExperiment !== y.hasExperiment) return false
  }
  return true
}

/**
 * The head of the answer, reused from the person's last answer when the results write the same text: a
 * returning person's requests mostly get the same results (most are the engine's kept answers, the same
 * objects), and writing 50 flags' text and flattening it cost ≈5 µs of a /decide. Kept flat: uWS flattens
 * the whole answer before copying it, and a head left as a tree of a hundred pieces would be walked again
 * each time (≈1.4 µs for 50 flags).
 */
function keptHead(result: EvaluationList, options: ResponseOptions): string {
  const state = result.personState
  const last = state?.answer as KeptHead | undefined
  if (
    last !== undefined &&
    last.shape === options.shape &&
    last.withConfig === options.withConfig &&
    last.supportedCompression === options.supportedCompression &&
    last.errors === result.errorsWhileComputingFlags &&
    sameResults(last.results, result.results)
  ) {
    if (last.head.length > KEPT_HEAD_MAX) largeHeads.used(state!, last)
    return last.head
  }
  const head = answerHead(result, options)
  if (state !== undefined) {
    head.charCodeAt(0) // flattens the string in place
    const kept: KeptHead = { results: result.results, errors: result.errorsWhileComputingFlags, shape: options.shape, withConfig: options.withConfig, supportedCompression: options.supportedCompression, head }
    state.answer = kept
    largeHeads.replace(state, head.length > KEPT_HEAD_MAX ? kept : null)
  }
  return head
}

/** The answer's JSON text. */
export function flagsJson(result: EvaluationList, options: ResponseOptions): string {
  return `${keptHead(result, options)}${JSON.stringify(options.requestId)},"evaluatedAt":${options.evaluatedAt}}`
}

/** PostHog's answer to a GET /flags: no flags and, of the config, the compression list alone. */
export function minimalFlagsJson(shape: 'v3' | 'v4', options: ResponseOptions): string {
  const body = flagsJson({ results: [], errorsWhileComputingFlags: false }, { ...options, shape, withConfig: false })
  return `{"supportedCompression":${JSON.stringify(options.supportedCompression)},${body.slice(1)}`
}
