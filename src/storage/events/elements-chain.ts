/**
 * A stored `elements_chain` read back as the events API's `elements`, as PostHog's `chain_to_element_dicts`
 * reads it: elements split at `;` outside quotes (a chain over 16,384 characters cut at its last separator
 * past the middle, so the clicked element, which comes first, stays), the tag and classes before `:`, then
 * `key="value"` pairs found by a scan (a regex restarting at every position would be quadratic on runs the
 * sender controls).
 */

export interface ElementJson {
  text: string | null
  tag_name: string | null
  attr_class: string[] | null
  href: string | null
  attr_id: string | null
  nth_child: number | null
  nth_of_type: number | null
  attributes: Record<string, string>
  order: number
}

const MAX_CHAIN = 16_384
const SPLIT = /(?:[^\s;"]|"(?:[^"\\]|\\.|\\(?=\n))*\\?")+/g
const TAG_AND_ATTRIBUTES = /(.*?)($|:([a-zA-Z\-_0-9]*=.*))/
/** One value, from just past `="`: the shortest run whose last character is not a backslash, then `"`. */
const VALUE = /(.*?[^\\])"/y

function split(chain: string): string[] {
  let text = chain
  if (text.length > MAX_CHAIN) {
    text = text.slice(0, MAX_CHAIN)
    const separator = text.lastIndexOf(';')
    if (separator > MAX_CHAIN / 2) text = text.slice(0, separator)
  }
  return text.match(SPLIT) ?? []
}

/** Each `key="value"` of an element's attribute run; text before a `="` that has no value joins the next key. */
function* attributes(run: string): Generator<[string, string]> {
  let keyStart = 0
  let search = 0
  for (;;) {
    const equals = run.indexOf('="', search)
    if (equals < 0) return
    VALUE.lastIndex = equals + 2
    const value = VALUE.exec(run)
    if (!value) {
      search = equals + 2
      continue
    }
    yield [run.slice(keyStart, equals), value[1]]
    keyStart = search = VALUE.lastIndex
  }
}

/** Python's int() of a position; null where it would raise (PostHog would answer 500). */
const position = (value: string): number | null => (/^\s*[+-]?\d+\s*$/.test(value) ? Number(value) : null)

export function chainToElements(chain: string): ElementJson[] {
  return split(chain).map((part, order) => {
    const element: ElementJson = { text: null, tag_name: null, attr_class: null, href: null, attr_id: null, nth_child: null, nth_of_type: null, attributes: {}, order }
    const match = TAG_AND_ATTRIBUTES.exec(part)
    const tag = match?.[1] ?? ''
    if (tag) {
      const dot = tag.indexOf('.')
      element.tag_name = dot < 0 ? tag : tag.slice(0, dot)
      if (dot >= 0) element.attr_class = tag.slice(dot + 1).split('.').filter((c) => c !== '')
    }
    for (const [key, value] of match?.[3] ? attributes(match[3]) : []) {
      if (key === 'href') element.href = value
      else if (key === 'nth-child') element.nth_child = position(value)
      else if (key === 'nth-of-type') element.nth_of_type = position(value)
      else if (key === 'text') element.text = value
      else if (key === 'attr_id') element.attr_id = value
      else if (key) element.attributes[key] = value
    }
    return element
  })
}

/**
 * The chain as PostHog's events table materialises it for action steps (`elements_chain_href`, `_texts`,
 * `_ids`, `_elements`): the first `href`, and the distinct `text`s, `attr_id`s and "useful" tags, each found
 * by the same patterns ClickHouse runs here.
 */
export const USEFUL_ELEMENTS = ['a', 'button', 'form', 'input', 'select', 'textarea', 'label'] as const
export const CHAIN_PATTERNS = {
  href: '(?::|")href="(.*?)"',
  text: '(?::|")text="(.*?)"',
  attr_id: '(?::|")attr_id="(.*?)"',
  element: `(?:^|;)(${USEFUL_ELEMENTS.join('|')})(?:\\.|$|:)`,
} as const
export type ChainColumn = keyof typeof CHAIN_PATTERNS

const CHAIN_REGEXES = Object.fromEntries(Object.entries(CHAIN_PATTERNS).map(([k, p]) => [k, new RegExp(p, 'g')])) as Record<ChainColumn, RegExp>

/** The first `href` of the chain, '' without one (ClickHouse's `extract`). */
export function chainHref(chain: string): string {
  const re = CHAIN_REGEXES.href
  re.lastIndex = 0
  return re.exec(chain)?.[1] ?? ''
}

/** Every distinct value of a column in the chain (ClickHouse's `arrayDistinct(extractAll(…))`). */
export function chainValues(chain: string, column: Exclude<ChainColumn, 'href'>): string[] {
  return [...new Set(Array.from(chain.matchAll(CHAIN_REGEXES[column]), (m) => m[1]!))]
}
