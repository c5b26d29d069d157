/**
 * Admission control for the HTTP front. Three limits keep an overloaded server answering with bounded
 * memory instead of queueing without end:
 *
 * - requests in flight (arrived, not answered yet): past `maxInflight` → 503 `service_unavailable`;
 * - requests in flight from one client address: past `maxInflightPerClient` → 429 `throttled`, so one
 *   client can't take the whole server;
 * - bytes of request bodies held in memory: a request whose declared body does not fit in what is left of
 *   `maxBodyBytes` → 503 before its body is kept, and a body that outgrows the budget while arriving is
 *   read to its end without being kept and answered 503.
 *
 * Refusals carry `Retry-After` (every PostHog SDK retries 429 and 503). Body bytes are counted as they
 * arrive, not as declared, so a client trickling a large body holds only what it has sent (and uWS cuts
 * off any request that takes more than ~10 s to arrive). Probes (`/_health`, `/_readiness`, `/metrics`)
 * are never refused, so orchestrators still see the process while it sheds load.
 */
import { AppError } from '../common/errors.js'

export interface AdmissionLimits {
  /** Requests in flight at once; more get 503. */
  readonly maxInflight: number
  /** Requests in flight from one client address; more get 429. 0 = no per-client limit. */
  readonly maxInflightPerClient: number
  /** Bytes of request bodies held in memory at once; more get 503. */
  readonly maxBodyBytes: number
}

/** Seconds a refused client is told to wait. Short: the condition clears as soon as requests finish. */
export const ADMISSION_RETRY_AFTER_SECONDS = 1

/** What one admitted request holds; `release()` gives it all back (idempotent). */
export class Ticket {
  readonly #admission: Admission
  readonly #client: string
  #bodyBytes = 0
  #released = false

  constructor(admission: Admission, client: string) {
    this.#admission = admission
    this.#client = client
  }

  /** Counts `bytes` more of this request's body; false (and nothing counted) when the budget is spent. */
  holdBody(bytes: number): boolean {
    if (this.#released || !this.#admission.reserveBody(bytes)) return false
    this.#bodyBytes += bytes
    return true
  }

  /** The body was thrown away: its bytes go back to the budget, the request stays in flight. */
  dropBody(): void {
    this.#admission.releaseBody(this.#bodyBytes)
    this.#bodyBytes = 0
  }

  release(): void {
    if (this.#released) return
    this.dropBody()
    this.#released = true
    this.#admission.leave(this.#client)
  }
}

/** Clients kept with nothing in flight before the idle ones are dropped (see `leave`). */
const IDLE_CLIENTS_KEPT = 10_000

export class Admission {
  readonly #limits: AdmissionLimits
  /** Requests in flight by client address; clients with none stay (at 0) until the next sweep. */
  readonly #perClient = new Map<string, number>()
  #sweepAt = IDLE_CLIENTS_KEPT
  #inflight = 0
  #bodyBytes = 0

  constructor(limits: AdmissionLimits) {
    this.#limits = limits
  }

  /** Requests admitted and not answered yet. */
  get inflight(): number {
    return this.#inflight
  }

  /** Client addresses tracked now: those with requests in flight, and idle ones not swept yet. */
  get trackedClients(): number {
    return this.#perClient.size
  }

  /** Bytes of request bodies held now. */
  get bodyBytes(): number {
    return this.#bodyBytes
  }

  /**
   * Admits a request from `client` that declares a body of `declaredBytes` (0 when unknown), or says why
   * not. The declared size is only checked here; bytes are counted by `Ticket.holdBody` as they arrive.
   */
  admit(client: string, declaredBytes: number): Ticket | AppError {
    const perClient = this.#limits.maxInflightPerClient
    const mine = this.#perClient.get(client) ?? 0
    if (perClient > 0 && mine >= perClient) {
      return new AppError('throttled', {
        detail: `Too many requests in flight from this client (${perClient}); retry shortly.`,
        retryAfter: ADMISSION_RETRY_AFTER_SECONDS,
      })
    }
    if (this.#inflight >= this.#limits.maxInflight || this.#bodyBytes + declaredBytes > this.#limits.maxBodyBytes) {
      return new AppError('service_unavailable', {
        detail: 'The server is at capacity; retry shortly.',
        retryAfter: ADMISSION_RETRY_AFTER_SECONDS,
      })
    }
    this.#inflight++
    if (mine === 0 && this.#perClient.size >= this.#sweepAt) this.#sweep()
    this.#perClient.set(client, mine + 1)
    return new Ticket(this, client)
  }

  /** @internal Ticket's side of the body budget. */
  reserveBody(bytes: number): boolean {
    if (this.#bodyBytes + bytes > this.#limits.maxBodyBytes) return false
    this.#bodyBytes += bytes
    return true
  }

  /** @internal */
  releaseBody(bytes: number): void {
    this.#bodyBytes -= bytes
  }

  /**
   * @internal A client's count stays at 0 instead of being deleted: deleting a Map's last entry makes V8
   * rebuild the Map's table, and once the Map lives in the old generation so does each new table. At low
   * concurrency that was ≈130 B of old-generation garbage a request, and a mark-compact every few seconds.
   */
  leave(client: string): void {
    this.#inflight--
    this.#perClient.set(client, (this.#perClient.get(client) ?? 1) - 1)
  }

  /** Drops the clients with nothing in flight; the next sweep waits until the Map has doubled again. */
  #sweep(): void {
    for (const [client, n] of this.#perClient) if (n <= 0) this.#perClient.delete(client)
    this.#sweepAt = Math.max(IDLE_CLIENTS_KEPT, 2 * this.#perClient.size)
  }
}

/** The refusal for a body that outgrew the budget while it was arriving. */
export function bodyBudgetSpent(): AppError {
  return new AppError('service_unavailable', {
    detail: 'The server is at capacity; retry shortly.',
    retryAfter: ADMISSION_RETRY_AFTER_SECONDS,
  })
}
