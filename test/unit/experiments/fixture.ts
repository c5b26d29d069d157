/**
 * An experiments world for unit tests: an in-memory management store (one organisation, project and
 * owner), a real SQLite event store in a temp folder that tests fill with rows, a clock tests can move,
 * and the Experiments service over them, with statistics inline unless an offload is given.
 */
import { rmSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { Experiments, StatsRunner, type CohortMembers, type KnownEvents, type StatsOffload } from '../../../src/experiments/index.js'
import { compileSearchRegex } from '../../../src/flags/index.js'
import { createManagement, MembershipLevel } from '../../../src/management/index.js'
import { SqliteEventSink, SqliteEventStore, type EventRow } from '../../../src/storage/events/index.js'
import { migrate, openDatabase, prepareDataDir } from '../../../src/storage/index.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'
import { tempDir } from '../../helpers/temp.js'

export const T0 = Date.parse('2024-05-01T00:00:00.000Z')
export const HOUR = 3_600_000
export const DAY = 24 * HOUR

export interface WorldOptions {
  offload?: StatsOffload | null
  cohortMembers?: CohortMembers | null
  /** No event store: results and exposure cohorts are unavailable. */
  noEvents?: boolean
  /** The ingested event names metrics are checked against (absent: not checked). */
  knownEvents?: KnownEvents | null
}

export function experimentWorld(options: WorldOptions = {}) {
  const db = openDatabase(':memory:')
  migrate(db, MANAGEMENT_MIGRATIONS)
  let now = T0
  const clock = { now: () => now }
  const m = createManagement(db, clock)
  const org = m.accounts.createOrganization('Org')
  const owner = m.accounts.createUser({ email: 'owner@example.com', first_name: 'Olive' })
  m.accounts.addMember(org.id, owner.id, MembershipLevel.owner)
  const project = m.accounts.createProject(org.id, 'Project')
  const other = m.accounts.createProject(org.id, 'Other project')

  const dir = tempDir('skylark-exp-')
  const paths = prepareDataDir(dir)
  const sink = new SqliteEventSink(paths.events)
  const store = new SqliteEventStore(paths.events, compileSearchRegex)
  const members: Array<{ teamId: number; cohortId: number; distinctIds: string[] }> = []
  const cohortMembers: CohortMembers = options.cohortMembers ?? {
    replaceMembers: (teamId, cohortId, distinctIds) => {
      members.push({ teamId, cohortId, distinctIds: [...distinctIds] })
      return distinctIds.length
    },
  }
  const experiments = new Experiments({
    db,
    clock,
    accounts: m.accounts,
    featureFlags: m.featureFlags,
    cohorts: m.cohorts,
    activity: m.activity,
    events: options.noEvents ? null : store,
    stats: new StatsRunner(options.offload ?? null),
    cohortMembers,
    knownEvents: options.knownEvents ?? null,
    actions: m.actions,
  })

  const w = {
    db,
    m,
    /** The event store (absent with `noEvents`). */
    store: options.noEvents ? null : store,
    owner,
    project,
    other,
    experiments,
    members,
    now: () => now,
    advance(ms: number) {
      now += ms
    },
    create(body: Record<string, unknown>) {
      return experiments.create(project, body, owner.id)
    },
    update(id: number, body: Record<string, unknown>) {
      return experiments.update(project, id, body, owner.id)
    },
    flag(key: string) {
      return m.featureFlags.repository.liveByKey(project.id, key)
    },
    /** The single value a query returns. */
    scalar(sql: string): unknown {
      return w.db.prepare(sql).pluck().get()
    },
    activity(scope: string) {
      return db.prepare('SELECT activity, item_id, detail FROM activity_log WHERE scope = ? ORDER BY id').all(scope) as Array<{
        activity: string
        item_id: string
        detail: string
      }>
    },
    /** Rows written as ingestion writes them; `groups`: the keys of group types 0–4 ('' for none). */
    async events(rows: Array<{ distinctId: string; event: string; at: number; properties?: Record<string, unknown>; teamId?: number; elementsChain?: string; groups?: EventRow['groups'] }>) {
      const built: EventRow[] = rows.map((r) => ({
        uuid: randomUUID(),
        team_id: r.teamId ?? project.id,
        event: r.event,
        distinct_id: r.distinctId,
        person_id: `person-${r.distinctId}`,
        properties: JSON.stringify(r.properties ?? {}),
        timestamp: r.at,
        created_at: r.at,
        groups: r.groups ?? ['', '', '', '', ''],
        elements_chain: r.elementsChain ?? '',
      }))
      await sink.write(built)
    },
    async close() {
      await sink.close()
      await store.close()
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return w
}

export type ExperimentWorld = ReturnType<typeof experimentWorld>

/** Runs `fn` and returns the error it throws (or fails the caller's expectation with null). */
export function thrown(fn: () => unknown): any {
  try {
    fn()
  } catch (error) {
    return error
  }
  return null
}

export async function rejected(promise: Promise<unknown>): Promise<any> {
  try {
    await promise
  } catch (error) {
    return error
  }
  return null
}

/** A flag body for a multivariate flag with the given variants (equal split when percentages are absent). */
/** Variants with these keys, sharing 100% evenly and the first taking the rest: `control` 34, then 33s. */
export function variantsOf(keys: string[]): Array<{ key: string; rollout_percentage: number }> {
  const share = Math.floor(100 / keys.length)
  return keys.map((key, i) => ({ key, rollout_percentage: i === 0 ? 100 - share * (keys.length - 1) : share }))
}

export function multivariateFlag(key: string, variants: string[], extra: Record<string, unknown> = {}) {
  return {
    key,
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: {
        variants: variantsOf(variants),
      },
    },
    ...extra,
  }
}
