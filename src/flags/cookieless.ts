/**
 * /flags and /decide for a cookieless browser (distinct id `$posthog_cookieless`): the id its events get, as
 * PostHog's flag service computes it (handle_cookieless_distinct_id): the request's IP, its Origin header as the
 * host, its User-Agent, the body's `timezone` and `cookieless_hash_extra`, on the day of `?_=` (the SDK's send
 * time) or now, and as many identifies as the device has sent that day (persons/cookieless.ts).
 */
import { AppError } from '../common/errors.js'
import { COOKIELESS_SENTINEL, CookielessMode, CookielessState } from '../persons/index.js'
import { cookielessHash, dayOf, dayZone, hashAfterIdentifies, hashInput, hashKey, hashToDistinctId } from '../persons/cookieless.js'

export interface CookielessProjectRef {
  id: number
  timezone: string
  cookielessMode: number
}

/** What the request says besides its body. */
export interface CookielessRequest {
  ip: string | null
  origin: string | undefined
  userAgent: string | undefined
  /** `?_=`: when the SDK sent the request, ms. */
  sentAt: string | null
  timezone: unknown
  hashExtra: unknown
}

const missing = (what: string) => new AppError('cookieless_missing_property', { detail: `Missing required property: ${what}` })

export class CookielessFlagIds {
  readonly #state: CookielessState
  readonly #now: () => number

  constructor(state: CookielessState, now: () => number) {
    this.#state = state
    this.#now = now
  }

  /** The distinct id to evaluate for: the request's own unless it is the sentinel in a project with cookieless mode on. */
  distinctId(project: CookielessProjectRef, distinctId: string, req: CookielessRequest): string {
    if (distinctId !== COOKIELESS_SENTINEL || project.cookielessMode === CookielessMode.disabled) return distinctId
    if (!req.ip) throw missing('ip')
    if (!req.origin) throw missing('host')
    if (!req.userAgent) throw missing('user_agent')
    const now = this.#now()
    const sent = req.sentAt !== null && /^\d+$/.test(req.sentAt) ? Number(req.sentAt) : now
    const salt = this.#state.saltFor(dayOf(sent, dayZone(req.timezone, project.timezone)), now)
    if (salt === null) throw new AppError('cookieless_missing_property', { detail: 'Invalid timestamp: `_` names a day whose salt is gone.' })
    const input = hashInput(project.id, req.ip, req.origin, req.userAgent, req.hashExtra)
    const base = cookielessHash(salt, input)
    const n = this.#state.identifyCount(project.id, hashKey(base))
    return hashToDistinctId(hashAfterIdentifies(salt, input, base, n))
  }
}
