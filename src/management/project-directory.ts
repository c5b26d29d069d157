/**
 * Project API key (and project secret key) → project, in memory. The public endpoints look up every request here, so it never
 * queries SQLite on a hit. Another process (the CLI) may add projects; `PRAGMA data_version` changes when
 * any other connection commits, so a miss re-reads the table only when something actually changed.
 */
import type { Db } from '../storage/sqlite/database.js'

export interface ProjectRef {
  readonly id: number
  readonly organizationId: string
  readonly apiToken: string
  readonly anonymizeIps: boolean
  /** The project's IANA zone: the calendar day of a cookieless event without a zone of its own. */
  readonly timezone: string
  /** 0 disabled, 1 stateless, 2 stateful (persons/cookieless.ts). */
  readonly cookielessMode: number
}

export class ProjectDirectory {
  readonly #db: Db
  /** Each lookup's map, replaced whole by reload(). */
  #maps: Record<'token' | 'secret' | 'id', Map<string | number, ProjectRef>> = { token: new Map(), secret: new Map(), id: new Map() }
  /** -1 until the first lookup reads the table: a directory made over a database not yet migrated reads nothing. */
  #dataVersion = -1
  readonly #listeners = new Set<() => void>()

  constructor(db: Db) {
    this.#db = db
  }

  byToken(token: string): ProjectRef | undefined {
    return this.#find('token', token)
  }

  /** The project whose secret API key (`phs_…`) this is. */
  bySecret(secret: string): ProjectRef | undefined {
    return this.#find('secret', secret)
  }

  byId(id: number): ProjectRef | undefined {
    return this.#find('id', id)
  }

  /** The project as it is now: re-read first when another connection changed anything (another thread's PATCH). */
  current(id: number): ProjectRef | undefined {
    if (this.#changedElsewhere()) this.reload()
    return this.#maps.id.get(id)
  }

  /** A hit as it is; a miss looked up again once after a reload, when another process changed projects. */
  #find(kind: 'token' | 'secret' | 'id', key: string | number): ProjectRef | undefined {
    const hit = this.#maps[kind].get(key)
    if (hit || !this.#changedElsewhere()) return hit
    this.reload()
    return this.#maps[kind].get(key)
  }

  /** Calls `listener` after each reload, as this process changed a project (its flag sets read its timezone). */
  onReload(listener: () => void): void {
    this.#listeners.add(listener)
  }

  /** Call after this process changes projects; other processes are noticed through data_version. */
  reload(): void {
    const rows = this.#db
      .prepare('SELECT id, organization_id, api_token, secret_api_token, anonymize_ips, timezone, cookieless_server_hash_mode FROM projects')
      .all() as Array<{ id: number; organization_id: string; api_token: string; secret_api_token: string; anonymize_ips: number; timezone: string; cookieless_server_hash_mode: number | null }>
    const byToken = new Map<string | number, ProjectRef>()
    const bySecret = new Map<string | number, ProjectRef>()
    const byId = new Map<string | number, ProjectRef>()
    for (const row of rows) {
      const ref = Object.freeze({
        id: row.id,
        organizationId: row.organization_id,
        apiToken: row.api_token,
        anonymizeIps: row.anonymize_ips === 1,
        timezone: row.timezone,
        cookielessMode: row.cookieless_server_hash_mode ?? 0,
      })
      byToken.set(ref.apiToken, ref)
      bySecret.set(row.secret_api_token, ref)
      byId.set(ref.id, ref)
    }
    this.#maps = { token: byToken, secret: bySecret, id: byId }
    this.#dataVersion = this.#currentDataVersion()
    for (const listener of this.#listeners) listener()
  }

  #currentDataVersion(): number {
    return this.#db.pragma('data_version', { simple: true }) as number
  }

  #changedElsewhere(): boolean {
    return this.#currentDataVersion() !== this.#dataVersion
  }
}
