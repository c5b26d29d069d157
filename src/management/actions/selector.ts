/**
 * An action step's CSS `selector` as PostHog reads it against an `$autocapture` event's elements chain
 * (posthog/models/event/event.py `Selector`, posthog/models/property/util.py `build_selector_regex`, and
 * `selector_to_expr` in posthog/hogql/property.py): the selector is split at spaces outside attribute
 * brackets, read right to left (the clicked element comes first in the chain), and each part becomes a
 * stretch of one regex over the chain text; the chain must also hold one of the part's "useful" tags, and a
 * part's id must be among the chain's `attr_id`s. Pure.
 */

export interface SelectorPart {
  tagName: string | null
  classes: string[]
  /** `attr_id`, `nth-child`, `nth-of-type` and custom attributes, as the chain spells their keys. */
  attributes: Map<string, string>
  attrId: string | null
  /** Written after `>`: its element is the parent of the previous part's. */
  directDescendant: boolean
  /** How many keys PostHog's `data` would have: a lone id part is matched by id alone. */
  dataKeys: number
}

const ATTRIBUTE = /\[\s*([^\]\s=]+)\s*=\s*(['"])(.*?)\2\s*\]/g
const POSITIONAL = /:(nth-child|nth-of-type)\((\d+)\)/g
/** A dot that is not inside square brackets (Tailwind's arbitrary values keep theirs). */
const CLASS_DOT = /\.(?![^[]*\])/

function* splitSelector(selector: string): Generator<string> {
  let inAttribute = false
  let quote: string | null = null
  let part = ''
  for (const char of selector) {
    if (char === '[' && quote === null) inAttribute = true
    if (char === ']' && quote === null) inAttribute = false
    if (char === '"' || char === "'") {
      if (quote === null) quote = char
      else if (quote === char) quote = null
    }
    if (char === ' ' && !inAttribute) {
      yield part
      part = ''
    } else {
      part += char
    }
  }
  yield part
}

function excise(text: string, pattern: RegExp, each: (m: RegExpExecArray) => void): string {
  const matches = [...text.matchAll(pattern)]
  for (const m of matches) each(m)
  let out = text
  for (const m of matches.reverse()) out = out.slice(0, m.index) + out.slice(m.index! + m[0].length)
  return out
}

function readPart(raw: string, directDescendant: boolean): SelectorPart {
  const part: SelectorPart = { tagName: null, classes: [], attributes: new Map(), attrId: null, directDescendant, dataKeys: 0 }
  const data = new Set<string>()
  let tag = excise(raw, ATTRIBUTE, (m) => {
    const [key, value] = [m[1]!, m[3]!]
    if (key === 'id') {
      part.attrId = value
      part.attributes.set('attr_id', value)
      data.add('attr_id')
    } else {
      part.attributes.set(key, value)
      data.add(`attributes__attr__${key}`)
    }
  })
  tag = excise(tag, POSITIONAL, (m) => {
    part.attributes.set(m[1]!, m[2]!)
    data.add(m[1] === 'nth-child' ? 'nth_child' : 'nth_of_type')
  })
  if (tag.includes('.')) {
    const pieces = tag.split(CLASS_DOT)
    part.classes = pieces.slice(1)
    data.add('attr_class__contains')
    tag = pieces[0]!
  }
  if (tag.includes('#')) {
    const pieces = tag.split('#')
    part.attrId = pieces[1]!
    part.attributes.set('attr_id', part.attrId)
    data.add('attr_id')
    tag = pieces[0]!
  }
  if (tag) {
    part.tagName = tag
    data.add('tag_name')
  }
  part.dataKeys = data.size
  return part
}

/** PostHog's `Selector(selector, escape_slashes=False).parts`: the target element's part first. */
export function parseSelector(selector: string): SelectorPart[] {
  // Written `*` steps add nothing, and `\:` is an escaped colon.
  const cleaned = selector.replaceAll('> * > ', '').replaceAll('> *', '').replaceAll('\\:', ':').trim()
  const tags = [...splitSelector(cleaned)].reverse()
  const parts: SelectorPart[] = []
  tags.forEach((tag, index) => {
    if (tag === '>' || tag === '') return
    parts.push(readPart(tag, index > 0 && tags[index - 1] === '>'))
  })
  return parts
}

/** Python's `re.escape` for what it changes in these patterns: the characters a regex reads as syntax. */
export const escapeRegex = (text: string): string => text.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&')

/** The rest of an element after the part's own conditions, up to the next element or an attribute run. */
const PART_END = '([-_a-zA-Z0-9\\.:"= \\[\\]\\(\\),]*?)?($|;|:([^;^\\s]*(;|$|\\s)))'

/** PostHog's `build_selector_regex`: matched anywhere in the chain, starting at an element. */
export function selectorRegex(parts: readonly SelectorPart[]): string {
  let regex = ''
  for (const part of parts) {
    if (part.tagName && part.tagName !== '*') regex += escapeRegex(part.tagName)
    if (part.classes.length > 0) regex += '.*?\\.' + [...part.classes].sort().map(escapeRegex).join('\\..*?')
    if (part.attributes.size > 0) {
      regex += '.*?'
      for (const [key, value] of [...part.attributes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        regex += `${escapeRegex(key)}="${escapeRegex(value)}".*?`
      }
    }
    regex += PART_END
    if (part.directDescendant) regex += '.*'
  }
  return regex ? `(^|;)${regex}` : ''
}
