/**
 * A five-field cron expression read as croniter (PostHog's `croniter~=6.0.0`) reads it, quirks included, since
 * what PostHog accepts and when it runs follow from them: names (`jan`, `mon`) in any case, `7` for Sunday,
 * `?` in the day fields, `L` for the month's last day (also as a range's end, `25-L`), `L5` and `5#3` in the
 * day of week, `R` (a random value, drawn anew each time), reversed ranges that wrap (`fri-mon`, `nov-feb`,
 * `50-10`), a range from a value to itself meaning the whole field (`1-1`), and `a/b` meaning `a-max/b`.
 * croniter refuses `H` without a hash id, `W`, `5L`, numbers out of range, and `#`/`L` mixed with plain days.
 */
import { MONTHS } from '../../flags/strptime.js'

/** One field's values, or null for every value (`*`). */
export type FieldValues = Set<number> | null

export interface CronFields {
  minutes: FieldValues
  hours: FieldValues
  /** Days of the month; `last` is croniter's `L`. */
  days: { values: Set<number>; last: boolean } | null
  months: FieldValues
  weekdays: FieldValues
  /** Weekday (0 = Sunday) → which of its occurrences in the month: 1–5, or 'l' for the last. */
  nth: Map<number, Set<number | 'l'>>
}

/** croniter's CroniterBadCronError. */
export class CronSyntaxError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CroniterBadCronError'
  }
}

const WEEKDAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']

const MINUTE = 0
const HOUR = 1
const DAY = 2
const MONTH = 3
const WEEKDAY = 4
/** Each field's lowest and highest value. */
const RANGES: ReadonlyArray<readonly [number, number]> = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 6]]
/** How many values mean "every value" (then the field is `*`, with croniter's exception for the day fields). */
const ALL_COUNT = [60, 24, 31, 12, 7]

const ALIASES: ReadonlyArray<Readonly<Record<string, number | 'l'>>> = [
  {},
  {},
  { l: 'l' },
  Object.fromEntries(MONTHS.map((name, i) => [name, i + 1])),
  Object.fromEntries(WEEKDAY_NAMES.map((name, i) => [name, i])),
]

const STEP_RANGE = /^([^-]+)-([^-/]+)(\/(\d+))?$/
const INT = /^\d+$/
const STAR_OR_INT = /^(\d+|\*)$/
const NAMES = `(?:${WEEKDAY_NAMES.join('|')})(?:-(?:${WEEKDAY_NAMES.join('|')}))?|(?:${MONTHS.join('|')})(?:-(?:${MONTHS.join('|')}))?`
/** `5#3`, `fri-mon#2` (each day's nth) and `l5` (the last Friday). */
const SPECIAL_WEEKDAY = new RegExp(`^(?:(?:(${NAMES}|\\w+)#)|(l))(\\d+)$`)
const RANDOM = /^(h|r)(\((\d+)-(\d+)\))?(\/(\d+))?$/

type Token = number | '*' | 'l'
type Random = () => number

function alias(field: number, key: string): number | 'l' {
  const names = ALIASES[field]!
  // Own keys only: `constructor` is no month.
  if (!Object.hasOwn(names, key)) throw new CronSyntaxError(`not acceptable: ${key}`)
  return names[key]!
}

/** croniter's `value_alias` for five fields: 7 is Sunday; nothing else moves. */
const normalise = (field: number, n: number) => (field === WEEKDAY && n === 7 ? 0 : n)

/** croniter's hash expander: `R` becomes a random value (or a random start of a step); `H` needs a hash id. */
function expandRandom(field: number, expr: string, random: Random): string {
  const m = RANDOM.exec(expr)
  if (!m) return expr
  if (m[1] === 'h') throw new CronSyntaxError('Hashed definitions must include hash_id')
  const [lo, hi] = RANGES[field]!
  const pick = (from: number, to: number) => from + Math.floor(random() * (to - from + 1))
  const begin = m[3] === undefined ? null : Number(m[3])
  const end = m[4] === undefined ? null : Number(m[4])
  const divisor = m[6] === undefined ? null : Number(m[6])
  if (begin !== null && end !== null && begin >= end) throw new CronSyntaxError('Range end must be greater than range begin')
  if (divisor === 0) throw new CronSyntaxError(`Bad expression: ${expr}`)
  if (begin !== null && end !== null && divisor !== null) return `${pick(begin, divisor - 1 + begin)}-${end}/${divisor}`
  if (begin !== null && end !== null) return String(pick(begin, end))
  if (divisor !== null) return `${pick(lo, divisor - 1 + lo)}-${hi}/${divisor}`
  return String(pick(lo, hi))
}

/** The values `low-high/step` stands for; a reversed range wraps past the field's end, as croniter wraps it. */
function rangeValues(field: number, low: number, high: number, step: number): number[] {
  const [lo, hi] = RANGES[field]!
  const span = (from: number, to: number) => Array.from({ length: from > to ? 0 : Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step)
  if (low === high) return span(lo, hi)
  if (low < high) return span(low, high)
  const head = span(low, hi)
  const last = head.at(-1)
  // croniter's arithmetic for where the wrapped part starts, kept as it is (it is not a clean modulo).
  const skip = last !== undefined && last - lo + step > hi - lo + 1 && hi - last < step ? step - (hi - last) : 0
  return [...head, ...span(lo + skip, high)]
}

/** One field's tokens, as croniter's `_expand` reads them, with the nth weekdays it names. */
function fieldTokens(field: number, expr: string, nth: Map<number, Set<number | 'l'>>): Token[] {
  const [lo, hi] = RANGES[field]!
  const pending: Array<string | number> = expr.split(',')
  const seen = new Set<string | number>()
  const out: Token[] = []
  while (pending.length > 0) {
    let item = String(pending.pop())
    let which: number | 'l' | null = null
    const special = field === WEEKDAY ? SPECIAL_WEEKDAY.exec(item) : null
    if (special) {
      if (special[1] !== undefined) {
        which = Number(special[3])
        if (!(which >= 1 && which <= 5)) throw new CronSyntaxError(`Invalid day_of_week value: '${which}'`)
        item = special[1]
      } else {
        which = 'l'
        item = special[3]!
      }
    }
    let text = item.replace(/^\*(\/.+)$/, `${lo}-${hi}$1`)
    let m = STEP_RANGE.exec(text)
    if (!m) {
      text = item.replace(/^(.+)\/(.+)$/, `$1-${hi}/$2`)
      m = STEP_RANGE.exec(text)
    }
    if (m) {
      let low: string | number = m[1]!
      let high: string | number = field === DAY && m[2] === 'l' ? '31' : m[2]!
      const step = Number(m[4] ?? 1)
      if (!INT.test(low)) low = alias(field, low)
      if (!INT.test(high)) high = alias(field, high)
      if (step === 0) throw new CronSyntaxError(`step '${step}' is not acceptable`)
      if (!INT.test(String(low)) || !INT.test(String(high))) throw new CronSyntaxError(`bands '${low}-${high}' are not acceptable`)
      const [from, to] = [normalise(field, Number(low)), normalise(field, Number(high))]
      if (Math.max(from, to) > hi) throw new CronSyntaxError('out of bands')
      const values: Array<string | number> = rangeValues(field, from, to, step).map((v) => (which !== null && which !== 'l' ? `${v}#${which}` : v))
      for (const v of values) if (!seen.has(v)) pending.push(v)
      for (const v of values) seen.add(v)
      continue
    }
    if (text.startsWith('-')) throw new CronSyntaxError('negative numbers not allowed')
    const value: Token = STAR_OR_INT.test(text) ? (text === '*' ? '*' : Number(text)) : alias(field, text)
    const token = typeof value === 'number' ? normalise(field, value) : value
    if (typeof token === 'number' && (token < lo || token > hi)) throw new CronSyntaxError('out of range')
    out.push(token)
    if (which !== null && typeof token === 'number') {
      if (!nth.has(token)) nth.set(token, new Set())
      nth.get(token)!.add(which)
    }
  }
  return out
}

/**
 * A field's values as croniter keeps them: all of a field's values become `*`, unless a day field is all values
 * beside a restricted other; a field with `*` among other values stays a list, and counts as `*`.
 */
function fieldValues(field: number, tokens: Token[], raw: string[]): Token[] {
  const unique = new Set(tokens)
  if (unique.size === ALL_COUNT[field]) {
    const keep = (field === DAY && !raw[WEEKDAY]!.includes('*')) || (field === WEEKDAY && !raw[DAY]!.includes('*'))
    if (!keep) return ['*']
  }
  return [...unique]
}

/** The split fields of a five-field expression, read as croniter reads them; CronSyntaxError where it refuses. */
export function parseCronFields(expression: string, random: Random = Math.random): CronFields {
  const raw = expression.toLowerCase().split(/\s+/).filter(Boolean)
  if (raw.length !== 5) throw new CronSyntaxError('Exactly 5 columns have to be specified')
  const nth = new Map<number, Set<number | 'l'>>()
  const sets = raw.map((part, field) => {
    let expr = expandRandom(field, part, random)
    if (expr.includes('?')) {
      if (expr !== '?' || (field !== DAY && field !== WEEKDAY)) throw new CronSyntaxError('Question mark can only be used alone in a day field')
      expr = '*'
    }
    return fieldValues(field, fieldTokens(field, expr, nth), raw)
  })
  const weekdays = sets[WEEKDAY]!
  if (nth.size > 0) {
    const plain = weekdays.filter((d) => d !== '*' && !(typeof d === 'number' && nth.has(d)))
    if (plain.length > 0 && weekdays.length !== ALL_COUNT[WEEKDAY]) throw new CronSyntaxError('day-of-week field does not support mixing literal values and nth day of week syntax')
  }
  const numbers = (s: Token[]) => (s.includes('*') ? null : new Set(s.filter((v): v is number => typeof v === 'number')))
  const days = sets[DAY]!
  return {
    minutes: numbers(sets[MINUTE]!),
    hours: numbers(sets[HOUR]!),
    days: days.includes('*') ? null : { values: numbers(days)!, last: days.includes('l') },
    months: numbers(sets[MONTH]!),
    weekdays: numbers(weekdays),
    nth,
  }
}
