/**
 * Cookieless tracking, as PostHog's ingestion and flag service do it (plugin-server's cookieless-manager.ts,
 * rust/common/cookieless): a browser in posthog-js's `cookieless_mode` stores nothing and sends the distinct id
 * `$posthog_cookieless` with `$cookieless_mode: true`; the server gives it the id
 * `cookieless_<base64 of SipHash-128(daily salt, "team-ip-root domain-user agent-n-extra")>`. The salt is random per
 * calendar day and deleted once no time zone can still be in that day, after which no id can be traced back to
 * the IP and user agent it came from; those two are never stored. The hash is PostHog's, bit for bit (its shared
 * test vectors pass), so only the salt differs between the two.
 *
 * Pure: the salts and the state of stateful mode are the caller's (cookieless-state.ts).
 */
import { isIPv6 } from 'node:net'
import { sipHash128 } from '../common/siphash.js'
import { uuidv7Of } from '../common/ids.js'
import { requireOnUse } from '../common/on-use.js'
import { isKnownTimeZone, wallToInstant, zoneOffsetMs } from '../common/time-zones.js'

export { COOKIELESS_SENTINEL } from '../schemas/captured-event.js'

/** PostHog's CookielessServerHashMode: a project's `cookieless_server_hash_mode`. */
export const CookielessMode = { disabled: 0, stateless: 1, stateful: 2 } as const

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
/**
 * PostHog's window for a day's salt (isCalendarDateValid): from 12 h before the day starts in UTC to 14 h after
 * it ends there. UTC+13 and +14 reach a day up to 2 h before the window opens (PostHog drops their events then);
 * the last zone leaves it 12 h after its UTC end, the rest is a margin for ingestion lag.
 */
const BEFORE_START_HOURS = 12
const AFTER_END_HOURS = 14

/** What the hash is made of (`hashExtra`: `$cookieless_extra`, at most its first 100 characters count). */
export interface HashInput {
  teamId: number
  ip: string
  rootDomain: string
  userAgent: string
  n: number
  hashExtra: string
}

/** PostHog's doHash: SipHash-128 of the joined fields, its four 32-bit words written in reverse order. */
export function cookielessHash(salt: Uint8Array, input: HashInput): Buffer {
  if (salt.length !== 16) throw new Error('a cookieless salt is 16 bytes')
  const text = `${input.teamId}-${input.ip}-${input.rootDomain}-${input.userAgent}-${input.n}-${input.hashExtra.slice(0, 100)}`
  const [h1, l1, h2, l2] = sipHash128(salt, Buffer.from(text, 'utf8'))
  const out = Buffer.allocUnsafe(16)
  out.writeUInt32LE(h2, 0)
  out.writeUInt32LE(l2, 4)
  out.writeUInt32LE(h1, 8)
  out.writeUInt32LE(l1, 12)
  return out
}

/** The hash's input for a device before any identify: the host read as its root domain, an extra that is not text as none. */
export function hashInput(teamId: number, ip: string, host: string, userAgent: string, hashExtra: unknown): HashInput {
  return { teamId, ip, rootDomain: rootDomain(host), userAgent, n: 0, hashExtra: typeof hashExtra === 'string' ? hashExtra : '' }
}

/** The device's hash after `n` identifies: the base hash itself for none, as PostHog hashes again only for n ≠ 0. */
export function hashAfterIdentifies(salt: Uint8Array, input: HashInput, baseHash: Buffer, n: number): Buffer {
  return n === 0 ? baseHash : cookielessHash(salt, { ...input, n })
}

const unpadded = (hash: Uint8Array) => Buffer.from(hash).toString('base64').replace(/=+$/, '')

export const hashToDistinctId = (hash: Uint8Array): string => `cookieless_${unpadded(hash)}`
/** From the base hash (n = 0): the same device keeps it across identifies. */
export const hashToDeviceId = (baseHash: Uint8Array): string => `cookielessd_${unpadded(baseHash)}`
/** The key stateful mode keeps a hash's identifies and sessions under. */
export const hashKey = (hash: Uint8Array): string => unpadded(hash)

/**
 * The registrable domain (eTLD+1) of a host, URL or address, with its port: sub.example.co.uk:8080 →
 * example.co.uk:8080, localhost → 127.0.0.1, an IPv6 address in brackets and compressed.
 */
export function rootDomain(input: string): string {
  if (input === '') return input
  if (isIPv6(input)) return new URL(`http://[${input}]`).hostname
  let url: URL
  try {
    url = new URL(input.includes('://') ? input : `http://${input}`)
  } catch {
    return input
  }
  // Loaded by the first cookieless event: ≈50 ms of start in every thread that imports the persons module otherwise.
  const { getDomain } = requireOnUse('tldts') as typeof import('tldts')
  let domain = getDomain(url.hostname) ?? url.hostname
  if (domain === 'localhost') domain = '127.0.0.1'
  return url.port ? `${domain}:${url.port}` : domain
}

/** The zone the event's day is read in: its own `$timezone` when known, else the project's, else UTC. */
export function dayZone(eventZone: unknown, projectZone: string): string {
  if (typeof eventZone === 'string' && eventZone !== '' && isKnownTimeZone(eventZone)) return eventZone
  return isKnownTimeZone(projectZone) ? projectZone : 'UTC'
}

/** `YYYY-MM-DD` of the instant in the zone: which day's salt hashes it. */
export function dayOf(ms: number, zone: string): string {
  return new Date(ms + (zoneOffsetMs(zone, ms) ?? 0)).toISOString().slice(0, 10)
}

/** Whether the day's salt may be made or used now (PostHog's isCalendarDateValid). */
export function isDayValid(day: string, nowMs: number): boolean {
  const start = Date.parse(`${day}T00:00:00Z`)
  return Number.isFinite(start) && nowMs >= start - BEFORE_START_HOURS * HOUR_MS && nowMs < start + DAY_MS + AFTER_END_HOURS * HOUR_MS
}

/**
 * Stateless mode's session id: one session per device and day, a UUIDv7 of the day's start in the zone whose
 * random part is the hash's first ten bytes.
 */
export function statelessSessionId(ms: number, zone: string, baseHash: Uint8Array): string {
  const dayStart = wallToInstant(zone, Date.parse(`${dayOf(ms, zone)}T00:00:00Z`))
  return uuidv7Of(dayStart, baseHash)
}

/** Removes what the hash was made of and must not be stored: `$ip`, the raw user agent and `$cookieless_extra`. */
export function stripHashInputs(properties: Record<string, unknown>): void {
  delete properties.$ip
  delete properties.$raw_user_agent
  delete properties.$cookieless_extra
  const set = properties.$set
  if (set !== null && typeof set === 'object') delete (set as Record<string, unknown>).$raw_user_agent
  const setOnce = properties.$set_once
  if (setOnce !== null && typeof setOnce === 'object') delete (setOnce as Record<string, unknown>).$initial_raw_user_agent
}
