/**
 * The `dateparser` crate, which PostHog reaches after its own formats fail: unix timestamps, RFC 2822,
 * postgres-style and zone-suffixed `yyyy-mm-dd`, slash dates, month names, bare times. Only the forms listed
 * here are read; Chinese, MySQL-log and dotted dates are not.
 */
import { civilFromDays, MONTHS, strptime, type DateFields } from './strptime.js'

const RFC2822 = /^\s*(?:[A-Za-z]{3}\s*,\s*)?(\d{1,2})\s+([A-Za-z]{3})\s+(\d{2,4})\s+(\d{2}):(\d{2})(?::(\d{2}))?\s+([+-]\d{4}|[A-Za-z]{1,5})\s*$/
const RFC2822_ZONES: Record<string, number> = { ut: 0, gmt: 0, z: 0, edt: -4, est: -5, cdt: -5, cst: -6, mdt: -6, mst: -7, pdt: -7, pst: -8 }

function parseRfc2822(s: string): DateFields | null {
  const m = RFC2822.exec(s)
  if (m === null) return null
  const month = MONTHS.indexOf(m[2].toLowerCase()) + 1
  if (month === 0) return null
  let year = Number(m[3])
  if (m[3].length === 2) year += year < 50 ? 2000 : 1900
  else if (m[3].length === 3) year += 1900
  const zone = m[7]
  let offset: number
  if (zone[0] === '+' || zone[0] === '-') {
    const hh = Number(zone.slice(1, 3))
    const mm = Number(zone.slice(3, 5))
    if (mm > 59) return null
    offset = (hh * 3600 + mm * 60) * (zone[0] === '-' ? -1 : 1)
  } else offset = (RFC2822_ZONES[zone.toLowerCase()] ?? 0) * 3600
  return { year, month, day: Number(m[1]), hour: Number(m[4]), minute: Number(m[5]), second: Number(m[6] ?? 0), nano: 0, offset }
}

/** dateparser's zone token: `±HH[:]MM` or an RFC 2822 name; unknown names count as UTC. */
function zoneOffset(token: string): number | null {
  const t = token.trim()
  if (t.includes(':') || t[0] === '+' || t[0] === '-') {
    const m = /^([+-])(\d{2})[:\s]*(\d{2})$/.exec(t)
    if (m === null || Number(m[3]) > 59) return null
    return (Number(m[2]) * 3600 + Number(m[3]) * 60) * (m[1] === '-' ? -1 : 1)
  }
  const name = /^[A-Za-z]*/.exec(t)![0].toLowerCase()
  return (RFC2822_ZONES[name] ?? 0) * 3600
}

function firstOf(input: string, formats: readonly string[]): DateFields | null {
  for (const f of formats) {
    const r = strptime(input, f)
    if (r !== null) return r
  }
  return null
}

const HMS = ['%H:%M:%S', '%H:%M', '%H:%M:%S%.f', '%I:%M:%S %P', '%I:%M %P']
const withDate = (date: string, times = HMS): string[] => times.map((t) => `${date} ${t}`)

/** Fields of `input` in the first dateparser form that reads it; naive results are UTC (PostHog runs in UTC). */
export function parseLenient(input: string): DateFields | null {
  if (/^[0-9]{10,19}$/.test(input)) {
    const n = BigInt(input)
    const ns = input.length === 10 ? n * 1_000_000_000n : input.length === 13 ? n * 1_000_000n : input.length === 19 ? n : null
    if (ns !== null) return fromEpochNanos(ns)
  }
  const rfc2822 = parseRfc2822(input)
  if (rfc2822 !== null) return rfc2822
  if (/^[0-9]{4}-[0-9]{2}/.test(input)) {
    if (/^\d{4}-\d{2}-\d{2}\s+\d{2}:\d{2}(:\d{2})?(\.\d{1,9})?[+\-:0-9]{3,6}$/.test(input)) {
      const r = firstOf(input, ['%Y-%m-%d %H:%M:%S%#z', '%Y-%m-%d %H:%M:%S%.f%#z', '%Y-%m-%d %H:%M%#z'])
      if (r !== null) return r
    }
    if (/^\d{4}-\d{2}-\d{2}\s+\d{2}:\d{2}(:\d{2})?(\.\d{1,9})?\s*(am|pm|AM|PM)?$/.test(input)) {
      const r = firstOf(input, withDate('%Y-%m-%d'))
      if (r !== null) return r
    }
    const z = /^\d{4}-\d{2}-\d{2}\s+\d{2}:\d{2}(:\d{2})?(\.\d{1,9})?(\s*[+\-:a-zA-Z0-9]{3,6})$/.exec(input)
    if (z !== null) {
      const offset = zoneOffset(z[3])
      const r = offset === null ? null : firstOf(input, ['%Y-%m-%d %H:%M:%S %Z', '%Y-%m-%d %H:%M %Z', '%Y-%m-%d %H:%M:%S%.f %Z'])
      return r === null ? null : { ...r, offset: offset! }
    }
    const dz = /^\d{4}-\d{2}-\d{2}(\s*[+\-:a-zA-Z0-9]{3,6})$/.exec(input)
    if (dz !== null) {
      const offset = zoneOffset(dz[1])
      const r = offset === null ? null : strptime(input, '%Y-%m-%d %Z')
      return r === null ? null : { ...r, offset: offset!, timeFromNow: true }
    }
    return null
  }
  if (/^[0-9]{1,2}:[0-9]{2}/.test(input)) {
    const r = firstOf(input, HMS)
    return r === null ? null : { ...r, dateFromNow: true }
  }
  if (/^[a-zA-Z]{3,9}\.?\s+[0-9]{1,2}/.test(input)) {
    const dt = input.replaceAll(', ', ' ').replaceAll('. ', ' ')
    if (/^[a-zA-Z]{3,9}\.?\s+[0-9]{1,2},\s+[0-9]{2,4},?\s+[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?\s*(am|pm|AM|PM)?$/.test(input)) {
      const r = firstOf(dt, withDate('%B %d %Y', ['%H:%M:%S', '%H:%M', '%I:%M:%S %P', '%I:%M %P']))
      if (r !== null) return r
    }
    if (/^[a-zA-Z]{3,9}\.?\s+[0-9]{1,2},\s+[0-9]{2,4}$/.test(input)) {
      const r = strptime(dt, '%B %d %Y')
      if (r !== null) return { ...r, timeFromNow: true }
    }
    return null
  }
  if (/^[0-9]{1,2}\s+[a-zA-Z]{3,9}/.test(input)) {
    const dt = input.replaceAll(', ', ' ')
    if (/^[0-9]{1,2}\s+[a-zA-Z]{3,9}\s+[0-9]{2,4},?\s+[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?(\.[0-9]{1,9})?$/.test(input)) {
      const r = firstOf(dt, withDate('%d %B %Y'))
      if (r !== null) return r
    }
    if (/^[0-9]{1,2}\s+[a-zA-Z]{3,9}\s+[0-9]{2,4}$/.test(input)) {
      const r = strptime(input, '%d %B %Y')
      if (r !== null) return { ...r, timeFromNow: true }
    }
    return null
  }
  if (/^[0-9]{1,2}\/[0-9]{1,2}/.test(input)) {
    if (/^[0-9]{1,2}\/[0-9]{1,2}\/[0-9]{2,4}\s+[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?(\.[0-9]{1,9})?\s*(am|pm|AM|PM)?$/.test(input)) {
      return firstOf(input, [...withDate('%m/%d/%y'), ...withDate('%m/%d/%Y')])
    }
    if (/^[0-9]{1,2}\/[0-9]{1,2}\/[0-9]{2,4}$/.test(input)) {
      const r = /\/\d{2}$/.test(input) ? strptime(input, '%m/%d/%y') : strptime(input, '%m/%d/%Y')
      return r === null ? null : { ...r, timeFromNow: true }
    }
    return null
  }
  if (/^[0-9]{4}\/[0-9]{1,2}/.test(input)) {
    if (/^[0-9]{4}\/[0-9]{1,2}\/[0-9]{1,2}\s+[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?(\.[0-9]{1,9})?\s*(am|pm|AM|PM)?$/.test(input)) {
      return firstOf(input, withDate('%Y/%m/%d'))
    }
    if (/^[0-9]{4}\/[0-9]{1,2}\/[0-9]{1,2}$/.test(input)) {
      const r = strptime(input, '%Y/%m/%d')
      return r === null ? null : { ...r, timeFromNow: true }
    }
  }
  return null
}

function fromEpochNanos(ns: bigint): DateFields {
  const secs = ns / 1_000_000_000n
  const nano = Number(ns % 1_000_000_000n)
  const s = Number(secs)
  const days = Math.floor(s / 86400)
  const sod = s - days * 86400
  const { year, month, day } = civilFromDays(days)
  return { year, month, day, hour: Math.floor(sod / 3600), minute: Math.floor((sod % 3600) / 60), second: sod % 60, nano, offset: 0 }
}

