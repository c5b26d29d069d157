/**
 * Autocapture's elements, as PostHog's ingestion stores them: the `elements_chain` column holds
 * `$elements_chain` as sent (posthog-js since elementsChainAsString), or the chain built from an older
 * client's `$elements` array, and both properties leave the stored event. A malformed `$elements` that
 * PostHog's conversion would throw on leaves the event as it came, with an empty chain, as PostHog does.
 */
import { isPlainObject, type JsonObject } from '../../common/json.js'

export interface StoredElements {
  chain: string
  /** The event's properties without `$elements` and `$elements_chain`; null when it had neither. */
  properties: JsonObject | null
}

class Malformed extends Error {}

/** JavaScript's `value.toString()` as PostHog's conversion calls it: a TypeError on null and undefined. */
function text(value: unknown): string {
  if (value === null || value === undefined) throw new Malformed()
  return String(value)
}

/** `value?.slice(0, n)`: strings and arrays slice, other present values throw. */
function sliced(value: unknown, n: number): unknown {
  if (value === null || value === undefined) return value
  if (typeof value === 'string' || Array.isArray(value)) return value.slice(0, n)
  throw new Malformed()
}

const quoted = (s: string): string => s.replace(/"/g, '\\"')

function classesOf(el: JsonObject): string[] {
  const value = el.attr__class
  if (!value) return []
  if (Array.isArray(value)) {
    return value.map((c) => {
      if (typeof c !== 'string') throw new Malformed()
      return c
    })
  }
  if (typeof value !== 'string') throw new Malformed()
  return value.split(' ')
}

/** One element of `$elements` as its chain link: `tag.class1.class2:attr="value"…`, attributes by name. */
function link(el: unknown): string {
  if (!isPlainObject(el)) throw new Malformed()
  let out = el.tag_name ? String(el.tag_name) : ''
  const classes = classesOf(el).sort()
  for (const c of classes) out += `.${c.replace(/"/g, '')}`
  const attributes: Record<string, unknown> = {}
  const elText = sliced(el.$el_text, 400)
  if (elText) attributes.text = elText
  attributes['nth-child'] = el.nth_child ?? 0
  attributes['nth-of-type'] = el.nth_of_type ?? 0
  const href = sliced(el.attr__href, 2048)
  if (href) attributes.href = href
  if (el.attr__id) attributes.attr_id = el.attr__id
  for (const [key, value] of Object.entries(el)) {
    // PostHog sorts a class list in place before it lists the attributes, so the attribute shows it sorted.
    if (key.startsWith('attr__')) attributes[key] = key === 'attr__class' && Array.isArray(value) ? classes : value
  }
  // localeCompare, as PostHog sorts them: the same ICU collation in every Node.
  const pairs = Object.entries(attributes).sort(([a], [b]) => a.localeCompare(b))
  return `${out}:${pairs.map(([key, value]) => `${quoted(key)}="${quoted(text(value))}"`).join('')}`
}

function chainOf(elements: unknown): string {
  if (Array.isArray(elements)) return elements.map(link).join(';')
  // PostHog maps over anything with a length: a string, or an object with one, makes it throw.
  if (elements && (elements as { length?: unknown }).length) throw new Malformed()
  return ''
}

export function storedElements(properties: JsonObject): StoredElements {
  const hasChain = Object.hasOwn(properties, '$elements_chain')
  if (!hasChain && !Object.hasOwn(properties, '$elements')) return { chain: '', properties: null }
  const sent = properties.$elements_chain
  let chain: string
  try {
    chain = sent ? (typeof sent === 'object' ? JSON.stringify(sent) : String(sent)) : chainOf(properties.$elements)
  } catch (error) {
    if (error instanceof Malformed) return { chain: '', properties: null }
    throw error
  }
  const { $elements_chain: _chain, $elements: _elements, ...rest } = properties
  return { chain, properties: rest }
}
