/**
 * Does a stored event match an action? PostHog's `action_to_expr` (posthog/hogql/property.py), read once into
 * the stores' `ActionStepCondition`s (which the SQLite and ClickHouse stores compile to SQL) and evaluated
 * here on one event: any step matching is enough, and an action without steps matches every event, as does
 * a step without conditions. Within a step every condition must hold:
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
 * it refuses matches nothing. Pure.
 */
import { ValidationError } from '../../common/errors.js'
import { like } from '../../common/sql-like.js'
import { compileSearchRegex } from '../../flags/index.js'
import { chainHref, chainValues, USEFUL_ELEMENTS, type ActionCondition, type ActionStepCondition, type TextMatch } from '../../storage/events/index.js'
import { propertiesHold, propertyText, readStepProperties, type FilteredEvent } from './properties.js'
import type { ActionStep, StepMatching } from './record.js'
import { storesCanRun } from './regex.js'
import { parseSelector, selectorRegex } from './selector.js'

/** What a step reads of an event: a stored event (the events API's shape) has all of it. */
export interface MatchableEvent extends FilteredEvent {
  elements_chain: string
}

export type EventTest = (event: MatchableEvent) => boolean

const AUTOCAPTURE = '$autocapture'

/** `href` and `text`: exact unless told otherwise, and contains ignores case. */
function elementMatch(value: string, matching: StepMatching | null): TextMatch {
  if (matching === 'regex') return { mode: 'regex', pattern: value }
  if (matching === 'contains') return { mode: 'ilike', pattern: `%${value}%` }
  return { mode: 'exact', pattern: value }
}

/** `url`: contains (case-sensitive LIKE) unless told otherwise. */
function urlMatch(value: string, matching: StepMatching | null): TextMatch {
  if (matching === 'exact' || matching === 'regex') return { mode: matching, pattern: value }
  return { mode: 'like', pattern: `%${value}%` }
}

/**
 * A selector's and a tag name's conditions on the chain, as PostHog's `selector_to_expr` and `tag_name_to_expr`
 * write them (an action step's, and an element filter's): the selector's regex, the ids it names and one of its
 * useful tags; the tag's regex.
 */
export function chainCondition(selector: string | null, tagName: string | null): Pick<ActionStepCondition, 'chainRegexes' | 'chainIds' | 'chainTags'> {
  const condition = { chainRegexes: [] as string[], chainIds: [] as string[], chainTags: [] as string[] }
  if (selector) {
    const parts = parseSelector(selector)
    condition.chainIds = parts.flatMap((p) => (p.attrId === null ? [] : [p.attrId]))
    // A lone part naming only an id is matched by the id alone (PostHog's shortcut, which it keeps).
    const idOnly = parts.length === 1 && parts[0]!.dataKeys === 1 && condition.chainIds.length === 1
    const regex = selectorRegex(parts)
    if (!idOnly) {
      if (regex) condition.chainRegexes.push(regex)
      condition.chainTags = parts.flatMap((p) => (p.tagName !== null && (USEFUL_ELEMENTS as readonly string[]).includes(p.tagName) ? [p.tagName] : []))
    }
  }
  if (tagName !== null) condition.chainRegexes.push(`(^|;)${tagName}(\\.|$|;|:)`)
  return condition
}

function stepCondition(step: ActionStep, index: number): ActionStepCondition {
  const read = readStepProperties(step.properties)
  if ('unsupported' in read) throw new ValidationError('unsupported', `Action step ${index + 1} uses ${read.unsupported}, which skylark can't evaluate.`)
  const autocapture = step.event === AUTOCAPTURE
  return {
    event: step.event || null,
    url: step.url ? urlMatch(step.url, step.url_matching) : null,
    ...(autocapture ? chainCondition(step.selector, step.tag_name) : { chainRegexes: [], chainIds: [], chainTags: [] }),
    href: autocapture && step.href !== null ? elementMatch(step.href, step.href_matching) : null,
    text: autocapture && step.text !== null ? elementMatch(step.text, step.text_matching) : null,
    properties: read.nodes,
  }
}

/** The regexes a step runs, which must all be ones the stores can run. */
const stepRegexes = (c: ActionStepCondition): string[] => [...c.chainRegexes, ...[c.url, c.href, c.text].flatMap((m) => (m?.mode === 'regex' ? [m.pattern] : []))]

/** A condition no event meets (an empty list of distinct ids), for an action whose every step is impossible. */
const NOTHING: ActionStepCondition = { event: null, url: null, chainRegexes: [], chainIds: [], chainTags: [], href: null, text: null, properties: [{ distinctIds: [] }] }

/** Whether the stores can run every regex of a step (regex.ts); one that they can't matches nothing. */
export const stepRunnable = (c: ActionStepCondition): boolean => stepRegexes(c).every(storesCanRun)

/**
 * The action's steps as the stores' condition. A step whose property filters skylark can't evaluate (person,
 * element, cohort or HogQL filters, the regex operators) is refused with a 400 naming it, rather than ignored;
 * a step with a regex the stores can't run (regex.ts) matches nothing.
 */
export function actionCondition(steps: readonly ActionStep[]): ActionCondition {
  if (steps.length === 0) return { actionSteps: [] }
  const possible = steps.map(stepCondition).filter(stepRunnable)
  return { actionSteps: possible.length > 0 ? possible : [NOTHING] }
}

/** A text against a match; a missing text (SQL's NULL) matches nothing, a refused regex neither. */
export function textMatches(text: string | null, m: TextMatch): boolean {
  if (text === null) return false
  if (m.mode === 'exact') return text === m.pattern
  if (m.mode === 'regex') return compileSearchRegex(m.pattern)?.test(text) === true
  return like(text, m.pattern, m.mode === 'ilike')
}

function stepHolds(c: ActionStepCondition, e: MatchableEvent): boolean {
  const chain = e.elements_chain
  if (c.event !== null && e.event !== c.event) return false
  if (!c.chainRegexes.every((r) => textMatches(chain, { mode: 'regex', pattern: r }))) return false
  if (c.chainIds.length > 0 && !c.chainIds.every((id) => chainValues(chain, 'attr_id').includes(id))) return false
  if (c.chainTags.length > 0 && !chainValues(chain, 'element').some((tag) => c.chainTags.includes(tag))) return false
  if (c.href !== null && !textMatches(chainHref(chain), c.href)) return false
  if (c.text !== null && !chainValues(chain, 'text').some((t) => textMatches(t, c.text!))) return false
  if (c.url !== null && !textMatches(propertyText(e.properties, '$current_url'), c.url)) return false
  return propertiesHold(c.properties, e)
}

/** Whether an event matches the action's condition: any step, or any event when there are none. */
export function conditionHolds(condition: ActionCondition, e: MatchableEvent): boolean {
  return condition.actionSteps.length === 0 || condition.actionSteps.some((step) => stepHolds(step, e))
}

/** The action's steps as one test, read once. */
export function compileAction(steps: readonly ActionStep[]): EventTest {
  const condition = actionCondition(steps)
  return (e) => conditionHolds(condition, e)
}
