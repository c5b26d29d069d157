/**
 * Personal API keys. The key is shown once at creation; only its SHA-256 (`sha256$<hex>`) and a mask
 * (`phx_…abcd`) are stored, so a stolen database does not yield working keys.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { randomKey, uuidv4 } from '../common/ids.js'
import { iso, type Clock } from '../common/clock.js'
import { ValidationError } from '../common/errors.js'
import type { Db } from '../storage/sqlite/database.js'
import { isValidScope } from './scopes.js'
import { prepared } from '../storage/sqlite/database.js'

export const PERSONAL_KEY_PREFIX = 'phx_'

export interface PersonalKeyRow {
  id: string
  user_id: number
  label: string
  secure_value: string
  mask_value: string
  scopes: string
  scoped_teams: string | null
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

export interface PersonalKey {
  id: string
  userId: number
  label: string
  mask: string
  scopes: string[]
  scopedTeams: number[] | null
  createdAt: string
  revokedAt: string | null
}

export function hashPersonalKey(key: string): string {
  return 'sha256$' + createHash('sha256').update(key, 'utf8').digest('hex')
}

export function maskPersonalKey(key: string): string {
  return `${key.slice(0, 4)}…${key.slice(-4)}`
}

function toKey(row: PersonalKeyRow): PersonalKey {
  return {
    id: row.id,
    userId: row.user_id,
    label: row.label,
    mask: row.mask_value,
    scopes: JSON.parse(row.scopes) as string[],
    scopedTeams: row.scoped_teams ? (JSON.parse(row.scoped_teams) as number[]) : null,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  }
}

export interface CreateKeyInput {
  userId: number
  label: string
  scopes: readonly string[]
  scopedTeams?: readonly number[] | null
}

export class PersonalKeys {
  readonly #db: Db
  readonly #clock: Clock

  constructor(db: Db, clock: Clock) {
    this.#db = db
    this.#clock = clock
  }

  /** Returns the key itself (shown once) and its stored record. */
  create(input: CreateKeyInput): { key: string; record: PersonalKey } {
    const invalid = input.scopes.filter((s) => !isValidScope(s))
    if (invalid.length > 0) throw new ValidationError('invalid_input', `Invalid scopes: ${invalid.join(', ')}`, 'scopes')
    if (input.scopes.length === 0) throw new ValidationError('invalid_input', 'A key needs at least one scope.', 'scopes')
    const key = randomKey(PERSONAL_KEY_PREFIX)
    const row: PersonalKeyRow = {
      id: uuidv4(),
      user_id: input.userId,
      label: input.label,
      secure_value: hashPersonalKey(key),
      mask_value: maskPersonalKey(key),
      scopes: JSON.stringify([...input.scopes]),
      scoped_teams: input.scopedTeams ? JSON.stringify([...input.scopedTeams]) : null,
      created_at: iso(this.#clock.now()),
      last_used_at: null,
      revoked_at: null,
    }
    prepared(this.#db, 
        `INSERT INTO personal_api_keys (id, user_id, label, secure_value, mask_value, scopes, scoped_teams, created_at)
         VALUES (@id, @user_id, @label, @secure_value, @mask_value, @scopes, @scoped_teams, @created_at)`,
      )
      .run(row)
    return { key, record: toKey(row) }
  }

  /**
   * Finds a live key. The lookup goes through the hash index; the final comparison is constant-time so
   * response timing says nothing about how close a guess was.
   */
  find(key: string): PersonalKey | null {
    if (!key.startsWith(PERSONAL_KEY_PREFIX) || key.length > 200) return null
    const hashed = hashPersonalKey(key)
    const row = prepared(this.#db, 'SELECT * FROM personal_api_keys WHERE secure_value = ?').get(hashed) as
      | PersonalKeyRow
      | undefined
    if (!row || row.revoked_at !== null) return null
    const a = Buffer.from(row.secure_value)
    const b = Buffer.from(hashed)
    return a.length === b.length && timingSafeEqual(a, b) ? toKey(row) : null
  }

  list(userId?: number): PersonalKey[] {
    const rows = (
      userId === undefined
        ? prepared(this.#db, 'SELECT * FROM personal_api_keys ORDER BY created_at').all()
        : prepared(this.#db, 'SELECT * FROM personal_api_keys WHERE user_id = ? ORDER BY created_at').all(userId)
    ) as PersonalKeyRow[]
    return rows.map(toKey)
  }

  /** Revokes by id or by mask-matching full key; returns whether a live key was revoked. */
  revoke(idOrKey: string): boolean {
    const where = idOrKey.startsWith(PERSONAL_KEY_PREFIX) ? 'secure_value = ?' : 'id = ?'
    const value = idOrKey.startsWith(PERSONAL_KEY_PREFIX) ? hashPersonalKey(idOrKey) : idOrKey
    const result = prepared(this.#db, `UPDATE personal_api_keys SET revoked_at = ? WHERE ${where} AND revoked_at IS NULL`)
      .run(iso(this.#clock.now()), value)
    return result.changes > 0
  }
}
