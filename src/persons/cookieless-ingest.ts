/**
 * The consumer's cookieless step, before person processing (PostHog's cookielessServerHashStep): an event with
 * `$cookieless_mode` gets its distinct id, `$device_id` and `$session_id` from the hash of its IP, root domain
 * and user agent (persons/cookieless.ts), and loses those inputs; or it is dropped, with an `event_dropped`
 * ingestion warning saying why (PostHog drops these with a metric only; its users asked for the warning,
 * PostHog/posthog#99177). On the consumer thread, in spool order, so stateful mode's identifies and sessions
 * change in the same persons.db transaction as the persons they decide.
 */
import { uuidv7 } from '../common/ids.js'
import { COOKIELESS_SENTINEL, type CapturedEvent } from '../schemas/captured-event.js'
import {
  CookielessMode,
  cookielessHash,
  dayOf,
  dayZone,
  hashAfterIdentifies,
  hashInput,
  hashKey,
  hashToDeviceId,
  hashToDistinctId,
  statelessSessionId,
  stripHashInputs,
  type HashInput,
} from './cookieless.js'
import type { CookielessState } from './cookieless-state.js'

/** PostHog's COOKIELESS_SESSION_INACTIVITY_MS default: a stateful session ends after 30 minutes without events. */
const SESSION_INACTIVITY_MS = 30 * 60_000

export interface CookielessProject {
  timezone: string
  cookielessMode: number
}

/** A chunk of decoded events; `texts[i]` (the spooled properties text of event i) is cleared when it changes. */
export interface CookielessChunk {
  events: CapturedEvent[]
  texts: Array<Uint8Array | null>
}

export interface Dropped {
  event: CapturedEvent
  reason: string
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '')

export class CookielessIngest {
  readonly #state: CookielessState
  readonly #project: (teamId: number) => CookielessProject | undefined

  constructor(state: CookielessState, project: (teamId: number) => CookielessProject | undefined) {
    this.#state = state
    this.#project = project
  }

  /** Before each batch's transaction: today's salts made, ended days' state deleted. */
  prepare(now: number): void {
    this.#state.prepare(now)
  }

  /** Gives the chunk's cookieless events their ids in place and takes out those dropped. */
  apply(chunk: CookielessChunk, now: number): Dropped[] {
    const dropped: Dropped[] = []
    let kept = 0
    for (let i = 0; i < chunk.events.length; i++) {
      const event = chunk.events[i]
      let spooledText = chunk.texts[i]
      if (event.properties.$cookieless_mode) {
        const reason = this.#identify(event, now)
        if (reason !== null) {
          dropped.push({ event, reason })
          continue
        }
        spooledText = null
      }
      chunk.events[kept] = event
      chunk.texts[kept++] = spooledText
    }
    chunk.events.length = kept
    chunk.texts.length = kept
    return dropped
  }

  /** Null when the event got its ids; else why it is dropped (PostHog's drop causes). */
  #identify(event: CapturedEvent, now: number): string | null {
    const properties = event.properties
    const project = this.#project(event.team_id)
    const mode = project?.cookielessMode ?? CookielessMode.disabled
    if (event.event === '$create_alias' || event.event === '$merge_dangerously') return 'cookieless_disallowed_event'
    if (event.event === '$identify' && mode === CookielessMode.stateless) return 'cookieless_stateless_disallowed_identify'
    if (mode !== CookielessMode.stateless && mode !== CookielessMode.stateful) return 'cookieless_team_disabled'
    const userAgent = text(properties.$raw_user_agent)
    const ip = text(properties.$ip)
    const host = text(properties.$host)
    if (userAgent === '') return 'cookieless_missing_ua'
    if (ip === '') return 'cookieless_missing_ip'
    if (host === '') return 'cookieless_missing_host'
    const zone = dayZone(properties.$timezone, project!.timezone)
    const day = dayOf(event.timestamp, zone)
    const salt = this.#state.saltFor(day, now)
    if (salt === null) return 'cookieless_timestamp_out_of_range'
    const input = hashInput(event.team_id, ip, host, userAgent, properties.$cookieless_extra)
    const baseHash = cookielessHash(salt, input)
    properties.$device_id = hashToDeviceId(baseHash)
    if (mode === CookielessMode.stateless) {
      const distinctId = hashToDistinctId(baseHash)
      event.distinct_id = distinctId
      properties.$distinct_id = distinctId
      properties.$session_id = statelessSessionId(event.timestamp, zone, baseHash)
    } else {
      this.#stateful(event, input, salt, baseHash, day)
    }
    stripHashInputs(properties)
    return null
  }

  /**
   * Stateful mode: the hash also counts the device's $identify events before this one, so the next person to
   * use a shared device after a logout is not the last one; sessions end after 30 minutes without events.
   */
  #stateful(event: CapturedEvent, input: HashInput, salt: Buffer, baseHash: Buffer, day: string): void {
    const state = this.#state
    const properties = event.properties
    const baseKey = hashKey(baseHash)
    const n =
      event.event === '$identify'
        ? state.addIdentify(event.team_id, baseKey, event.uuid, day) - 1
        : event.distinct_id === COOKIELESS_SENTINEL
          ? state.identifyCount(event.team_id, baseKey)
          : // already identified: the hash of before its identify (PostHog's -1 even when it saw none)
            state.identifyCount(event.team_id, baseKey) - 1
    const hash = hashAfterIdentifies(salt, input, baseHash, n)
    const distinctId = hashToDistinctId(hash)
    const sessionKey = hashKey(hash)
    const last = state.session(event.team_id, sessionKey)
    const sessionId = last === undefined || event.timestamp - last.lastActivity > SESSION_INACTIVITY_MS ? uuidv7(event.timestamp) : last.sessionId
    state.setSession(event.team_id, sessionKey, { sessionId, lastActivity: event.timestamp }, day)
    delete properties.$distinct_id
    properties.$session_id = sessionId
    if (event.event === '$identify') properties.$anon_distinct_id = distinctId
    else if (event.distinct_id === COOKIELESS_SENTINEL) event.distinct_id = distinctId
  }
}
