/**
 * formatDateTime(t, 'pattern') of a HogQL query (hogql-datetime.ts's datetimeCall): ClickHouse's MySQL-style
 * specifiers as current servers (PostHog's) write them, on the project's wall clock. The text is made of the date and
 * time's parts (calendar nodes) and functions both stores already compute (concat, toString, substring, if, floor),
 * so neither store has anything new to write, and they agree as they do on those.
 */
import { numberNode as num, type CalendarPart, type HogqlFunction, type HogqlNode, type HogqlType } from './hogql-math.js'
import { HogqlMathError } from './hogql-tokens.js'

/** A part of the date and time being written: the same node each time it is asked for (ClickHouse's SQL names it once). */
type Parts = (part: CalendarPart) => HogqlNode

const MAX_PATTERN = 1000
const text = (value: string): HogqlNode => ({ op: 'text', type: 'text', value })
const call = (fn: HogqlFunction, type: HogqlType, ...args: HogqlNode[]): HogqlNode => ({ op: 'call', fn, type, args })
const equals = (a: HogqlNode, b: number): HogqlNode => ({ op: '=', type: 'number', args: [a, num(b)] })
/** `n` in `width` digits, zeros first (n below 10^width). */
const padded = (n: HogqlNode, width: number): HogqlNode => call('substring', 'text', call('toString', 'text', { op: '+', type: 'number', args: [num(10 ** width), n] }), num(2), num(width))
const century = (p: Parts): HogqlNode => call('floor', 'number', { op: '/', type: 'number', args: [p('year'), num(100)] })
/** The hour on a 12-hour clock, 12 for 0. */
const twelve = (p: Parts): HogqlNode => call('if', 'number', equals(p('hour'), 0), num(12), call('if', 'number', { op: '>', type: 'number', args: [p('hour'), num(12)] }, { op: '-', type: 'number', args: [p('hour'), num(12)] }, p('hour')))
/** The name of the `index`th (from 1) of `names`. */
export const named = (index: HogqlNode, names: readonly string[]): HogqlNode => names.slice(0, -1).reduceRight((otherwise, name, i) => call('if', 'text', equals(index, i + 1), text(name), otherwise), text(names[names.length - 1]))
export const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']
const short = (names: readonly string[]) => names.map((name) => name.slice(0, 3))

/** Each specifier's text. `%k`, `%l`, `%V`, `%G`, `%g`, `%U`, `%z` … are not read. */
const SPECIFIERS = new Map<string, (p: Parts) => HogqlNode>([
  ['Y', (p) => call('toString', 'text', p('year'))],
  ['y', (p) => padded({ op: '-', type: 'number', args: [p('year'), { op: '*', type: 'number', args: [century(p), num(100)] }] }, 2)],
  ['C', (p) => padded(century(p), 2)],
  ['m', (p) => padded(p('month'), 2)],
  ['d', (p) => padded(p('dayOfMonth'), 2)],
  ['e', (p) => call('if', 'text', { op: '<', type: 'number', args: [p('dayOfMonth'), num(10)] }, call('concat', 'text', text(' '), p('dayOfMonth')), call('toString', 'text', p('dayOfMonth')))],
  ['H', (p) => padded(p('hour'), 2)],
  ['I', (p) => padded(twelve(p), 2)],
  ['i', (p) => padded(p('minute'), 2)],
  ['S', (p) => padded(p('second'), 2)],
  // Microseconds: the stores keep ms.
  ['f', (p) => call('concat', 'text', padded(p('millisecond'), 3), text('000'))],
  ['j', (p) => padded(p('dayOfYear'), 3)],
  ['p', (p) => call('if', 'text', { op: '<', type: 'number', args: [p('hour'), num(12)] }, text('AM'), text('PM'))],
  ['Q', (p) => call('toString', 'text', p('quarter'))],
  ['u', (p) => call('toString', 'text', p('dayOfWeek'))],
  ['w', (p) => call('toString', 'text', call('if', 'number', equals(p('dayOfWeek'), 7), num(0), p('dayOfWeek')))],
  ['a', (p) => named(p('dayOfWeek'), short(WEEKDAYS))],
  ['W', (p) => named(p('dayOfWeek'), WEEKDAYS)],
  ['b', (p) => named(p('month'), short(MONTHS))],
  ['M', (p) => named(p('month'), MONTHS)],
  ['n', () => text('\n')],
  ['t', () => text('\t')],
  ['%', () => text('%')],
])
/** The specifiers that stand for others (ClickHouse's synonyms among them). */
const SHORTHANDS: Readonly<Record<string, string>> = { c: '%m', h: '%I', s: '%S', F: '%Y-%m-%d', D: '%m/%d/%y', T: '%H:%i:%S', R: '%H:%i', r: '%I:%i %p' }
const READ = [...SPECIFIERS.keys(), ...Object.keys(SHORTHANDS)].map((s) => `%${s}`).join(' ')

/** The pieces `pattern` writes, appended to `pieces`: texts as they are, each specifier's text. */
function read(pattern: string, p: Parts, pieces: HogqlNode[]): void {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c !== '%') {
      const last = pieces[pieces.length - 1]
      if (last?.op === 'text') pieces[pieces.length - 1] = text(last.value + c)
      else pieces.push(text(c))
      continue
    }
    const s = pattern[++i] ?? ''
    const write = SPECIFIERS.get(s)
    if (Object.hasOwn(SHORTHANDS, s)) read(SHORTHANDS[s], p, pieces)
    else if (write !== undefined) pieces.push(write(p))
    else throw new HogqlMathError(`formatDateTime() reads ${READ} here, not ${s === '' ? 'a % at the end' : `%${s}`}.`)
  }
}

/** The text `pattern` writes of the date and time whose parts `p` gives; null where it is null. */
export function formatted(pattern: string, p: Parts): HogqlNode {
  if (pattern.length > MAX_PATTERN) throw new HogqlMathError(`formatDateTime() takes a pattern of at most ${MAX_PATTERN} characters here.`)
  const pieces: HogqlNode[] = []
  read(pattern, p, pieces)
  // concat takes 64 arguments at most: longer patterns nest.
  let whole = pieces.length === 0 ? text('') : pieces.length === 1 ? pieces[0] : null
  for (let list = pieces; whole === null; ) {
    const chunks = Array.from({ length: Math.ceil(list.length / 64) }, (_, k) => list.slice(k * 64, k * 64 + 64)).map((chunk) => (chunk.length === 1 ? chunk[0] : call('concat', 'text', ...chunk)))
    if (chunks.length === 1) whole = chunks[0]
    list = chunks
  }
  return call('if', 'text', call('isNull', 'number', p('year')), { op: 'null', type: 'null' }, whole)
}
