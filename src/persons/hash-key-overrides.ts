/** The one persons.db write outside ingestion: experience continuity's hash-key overrides, on a writable connection. */
import type { Statement, Transaction } from 'better-sqlite3'
import type { Db } from '../storage/index.js'

/**
 * Experience continuity (§1.9): records `hashKey` as the bucketing key of each flag for each existing person,
 * unless one of those persons already has an override for that flag ("first override wins").
 */
export class HashKeyOverrideWriter {
  private readonly existingPersons: Statement<[string, number], { id: number }>
  private readonly existingFlags: Statement<[number, string], { feature_flag_key: string }>
  private readonly insert: Statement<[number, number, string, string]>
  private readonly writeAll: Transaction<(teamId: number, personIds: readonly number[], flagKeys: readonly string[], hashKey: string) => number>

  constructor(db: Db) {
    this.existingPersons = db.prepare('SELECT id FROM persons WHERE id IN (SELECT value FROM json_each(?)) AND team_id = ?')
    this.existingFlags = db.prepare(
      `SELECT DISTINCT feature_flag_key FROM hash_key_overrides
       WHERE team_id = ? AND person_id IN (SELECT value FROM json_each(?))`,
    )
    this.insert = db.prepare(
      'INSERT OR IGNORE INTO hash_key_overrides (team_id, person_id, feature_flag_key, hash_key) VALUES (?, ?, ?, ?)',
    )
    this.writeAll = db.transaction((teamId: number, personIds: readonly number[], flagKeys: readonly string[], hashKey: string) => {
      const ids = JSON.stringify(personIds)
      const persons = this.existingPersons.all(ids, teamId).map((row) => row.id)
      if (persons.length === 0) return 0
      const taken = new Set(this.existingFlags.all(teamId, ids).map((row) => row.feature_flag_key))
      let written = 0
      for (const flagKey of new Set(flagKeys)) {
        if (taken.has(flagKey)) continue
        for (const personId of persons) written += this.insert.run(teamId, personId, flagKey, hashKey).changes
      }
      return written
    })
  }

  /** Returns how many override rows were written. */
  writeHashKeyOverrides(teamId: number, personIds: readonly number[], flagKeys: readonly string[], hashKey: string): number {
    if (personIds.length === 0 || flagKeys.length === 0) return 0
    // IMMEDIATE: the consumer thread writes persons.db; a deferred read-then-write could not upgrade.
    return this.writeAll.immediate(teamId, personIds, flagKeys, hashKey)
  }
}
