/**
 * What flag evaluation reads from management.db: a project's live flags (inactive included, so
 * dependencies on them can be answered), its cohorts and its timezone (the one PostHog's flag service reads
 * dates in), plus a revision string that changes whenever any of them changes. The revision is derived from the rows themselves, so a worker thread with its own
 * connection computes the same string, and the main thread only recomputes it after a change
 * (`onChange` in this process, `PRAGMA data_version` for other processes such as the CLI).
 */
import type { Db } from '../storage/sqlite/database.js'
import type { Cohorts } from './cohorts/index.js'
import { liveFlagDefinitions, type FlagDefinition } from './feature-flags/definitions.js'
import type { FeatureFlags } from './feature-flags/service.js'
import type { ProjectDirectory } from './project-directory.js'

/** How often to ask SQLite whether another process (the CLI) changed flags or cohorts. */
const OTHER_PROCESS_CHECK_MS = 100

export interface CohortDefinitionRow {
  id: number
  is_static: boolean
  deleted: boolean
  filters: { properties?: unknown } | null
}

export interface ProjectFlagData {
  flags: FlagDefinition[]
  cohorts: CohortDefinitionRow[]
  timezone: string
}

export class ManagementFlagSource {
  readonly #db: Db
  readonly #revisions = new Map<number, string>()
  readonly #dataVersionQuery
  #dataVersion: number
  #checkedAt = 0

  constructor(db: Db, changes?: { featureFlags: FeatureFlags; cohorts: Cohorts; projects: ProjectDirectory }) {
    this.#db = db
    // A prepared statement: db.pragma() would prepare one on every call.
    this.#dataVersionQuery = db.prepare('PRAGMA data_version').pluck()
    this.#dataVersion = this.#currentDataVersion()
    const forget = (teamId: number) => this.#revisions.delete(teamId)
    changes?.featureFlags.onChange(forget)
    changes?.cohorts.onChange(forget)
    changes?.projects.onReload(() => this.#revisions.clear())
  }

  load(teamId: number): ProjectFlagData {
    const cohorts = this.#db
      .prepare('SELECT id, is_static, deleted, filters FROM cohorts WHERE team_id = ? ORDER BY id')
      .all(teamId) as Array<{ id: number; is_static: number; deleted: number; filters: string }>
    return {
      flags: liveFlagDefinitions(this.#db, teamId),
      cohorts: cohorts.map((c) => ({
        id: c.id,
        is_static: c.is_static === 1,
        deleted: c.deleted === 1,
        filters: JSON.parse(c.filters) as { properties?: unknown },
      })),
      timezone: this.#timezone(teamId),
    }
  }

  /**
   * A string that differs whenever the project's flags or cohorts differ. Changes made in this process
   * are seen at once (onChange); changes by another process within `OTHER_PROCESS_CHECK_MS`.
   */
  revision(teamId: number): string {
    const now = performance.now()
    if (now - this.#checkedAt >= OTHER_PROCESS_CHECK_MS) {
      this.#checkedAt = now
      const version = this.#currentDataVersion()
      if (version !== this.#dataVersion) {
        this.#dataVersion = version
        this.#revisions.clear()
      }
    }
    let revision = this.#revisions.get(teamId)
    if (revision === undefined) {
      const f = this.#db
        .prepare('SELECT COUNT(*) AS n, COALESCE(MAX(updated_at), \'\') AS u, COALESCE(SUM(version), 0) AS v, COALESCE(MAX(id), 0) AS m FROM feature_flags WHERE team_id = ?')
        .get(teamId) as { n: number; u: string; v: number; m: number }
      const c = this.#db
        .prepare('SELECT COUNT(*) AS n, COALESCE(MAX(updated_at), \'\') AS u, COALESCE(SUM(version), 0) AS v FROM cohorts WHERE team_id = ?')
        .get(teamId) as { n: number; u: string; v: number }
      // Which flags live experiments use (their has_experiment): experiments are soft-deleted, never moved.
      const e = this.#db
        .prepare('SELECT COUNT(*) AS n, COALESCE(SUM(id), 0) AS s FROM experiments WHERE team_id = ? AND deleted = 0')
        .get(teamId) as { n: number; s: number }
      revision = `${f.n}.${f.m}.${f.v}.${f.u}|${c.n}.${c.v}.${c.u}|${e.n}.${e.s}|${this.#timezone(teamId)}`
      this.#revisions.set(teamId, revision)
    }
    return revision
  }

  #timezone(teamId: number): string {
    return (this.#db.prepare('SELECT timezone FROM projects WHERE id = ?').pluck().get(teamId) as string | undefined) ?? 'UTC'
  }

  #currentDataVersion(): number {
    return this.#dataVersionQuery.get() as number
  }
}
