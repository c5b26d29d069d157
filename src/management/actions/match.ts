/**
 * Does a stored event match an action? PostHog's `action_to_expr` (posthog/hogql/property.py), evaluated on
 * one event instead of compiled to SQL: any step matching is enough, and an action without steps matches
 * every event, as does a step without conditions. Within a step every condition must hold:
 *
 * - `event`: the event's name, when the step names one;
 * - `url` (when non-empty) on `$current_url`: `exact` is equality, `regex` a search, anything else
 *   (`contains`, the default, or null) SQL's case-sensitive `LIKE '%url%'`, whose `%` and `_` stay wildcards;
 * - only on `$autocapture` steps, the elements chain: `selector` (see selector.ts), `tag_name` (a regex over the
 *   chain: `(^|;)tag(\.|$|;|:)`, unescaped as PostHog writes it), `href` on the chain's first `href` (exact,
 *   ILIKE for contains, regex search; exact is the default), `text` on any of its `text`s (same modes);
 *   they are ignored on other steps, as PostHog ignores them;
 * - `properties`: skylark's event property filters (properties.ts).
 *
 * Regexes run on skylark's safe engine (Rust syntax, as close to ClickHouse's re2 as skylark has); a pattern
 * it refuses matches nothing. Pure; `compileAction` reads the steps once.
 */
import { ValidationError } from '../../common/errors.js'
import { compileRegex } from '../../flags/index.js'
import type { PropertyNode } from '../../storage/events/index.js'
import { like } from './like.js'
import { propertiesHold, readStepProperties } from './properties.js'
import type { ActionStep, StepMatching } from './record.js'
import { parseSelector, selectorRegex, USEFUL_ELEMENTS } from './selector.js'

/** What a step reads of an event: a stored event (the events API's shape) has all of it. */
export interface MatchableEvent {
  event: string
  properties: Record<string, unknown>
  elements_chain: string
}

export type EventTest = (event: MatchableEvent) => boolean

const AUTOCAPTURE = '$autocapture'

/** A search with skylark's safe regex engine; an invalid pattern or one out of budget matches nothing. */
function searches(pattern: string): (text: string) => boolean {
  const regex = compileRegex(pattern)
  return (text) => regex?.test(text) === true
}

/** The chain's materialised columns, as PostHog's events table extracts them. */
const HREF = /(?::|")href="(.*?)"/
const TEXTS = /(?::|")text="(.*?)"/g
const IDS = /(?::|")attr_id="(.*?)"/g
const ELEMENTS = new RegExp(`(?:^|;)(${USEFUL_ELEMENTS.join('|')})(?:\\.|$|:)`, 'g')

const chainHref = (chain: string): string => HREF.exec(chain)?.[1] ?? ''
const chainAll = (chain: string, pattern: RegExp): string[] => [...new Set(Array.from(chain.matchAll(pattern), (m) => m[1]!))]

function textTest(value: string, matching: StepMatching | null, contains: 'LIKE' | 'ILIKE'): (text: string) => boolean {
  if (matching === 'regex') return searches(value)
  if (matching === 'contains') return (text) => like(text, `%${value}%`, contains === 'ILIKE')
  return (text) => text === value
}

function selectorTest(selector: string): EventTest {
  const parts = parseSelector(selector)
  const regex = searches(selectorRegex(parts))
  const ids = parts.flatMap((p) => (p.attrId === null ? [] : [p.attrId]))
  const hasId = (chain: string) => ids.every((id) => chainAll(chain, IDS).includes(id))
  // A lone part naming only an id is matched by the id alone (PostHog's shortcut, which it keeps).
  if (parts.length === 1 && parts[0]!.dataKeys === 1 && ids.length === 1) return (e) => hasId(e.elements_chain)
  const useful = parts.flatMap((p) => (p.tagName !== null && (USEFUL_ELEMENTS as readonly string[]).includes(p.tagName) ? [p.tagName] : []))
  return (e) => {
    const chain = e.elements_chain
    if (!regex(chain) || !hasId(chain)) return false
    return useful.length === 0 || chainAll(chain, ELEMENTS).some((tag) => useful.includes(tag))
  }
}

function stepTest(step: ActionStep, properties: PropertyNode[]): EventTest {
  const tests: EventTest[] = []
  if (step.event) {
    const name = step.event
    tests.push((e) => e.event === name)
  }
  if (step.event === AUTOCAPTURE) {
    if (step.selector) tests.push(selectorTest(step.selector))
    if (step.tag_name !== null) {
      const tag = searches(`(^|;)${step.tag_name}(\\.|$|;|:)`)
      tests.push((e) => tag(e.elements_chain))
    }
    if (step.href !== null) {
      const href = textTest(step.href, step.href_matching, 'ILIKE')
      tests.push((e) => href(chainHref(e.elements_chain)))
    }
    if (step.text !== null) {
      const text = textTest(step.text, step.text_matching, 'ILIKE')
      tests.push((e) => chainAll(e.elements_chain, TEXTS).some(text))
    }
  }
  if (step.url) {
    const url = step.url
    const matching = step.url_matching
    const test = matching === 'exact' ? (t: string) => t === url : matching === 'regex' ? searches(url) : (t: string) => like(t, `%${url}%`)
    // A missing or non-text `$current_url` reads as PostHog's NULL: no comparison holds.
    tests.push((e) => typeof e.properties.$current_url === 'string' && test(e.properties.$current_url))
  }
  if (properties.length > 0) tests.push((e) => propertiesHold(properties, e.properties))
  return (e) => tests.every((t) => t(e))
}

/**
 * The action's steps as one test. A step whose property filters skylark can't evaluate (person, element,
 * cohort or HogQL filters, the regex operators) is refused with a 400 naming it, rather than ignored.
 */
export function compileAction(steps: readonly ActionStep[]): EventTest {
  if (steps.length === 0) return () => true
  const tests = steps.map((step, i) => {
    const read = readStepProperties(step.properties)
    if ('unsupported' in read) throw new ValidationError('unsupported', `Action step ${i + 1} uses ${read.unsupported}, which skylark can't evaluate.`)
    return stepTest(step, read.nodes)
  })
  return (e) => tests.some((t) => t(e))
}
