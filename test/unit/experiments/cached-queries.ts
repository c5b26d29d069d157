/** The query cache over a unit-test world: the real runner on its SQLite store, its clock, a small cache. */
import { CachedExperimentQueries, type CacheOutcome } from '../../../src/experiments/query/cached-runner.js'
import { ExperimentQueryRunner } from '../../../src/experiments/query/runner.js'
import type { experimentWorld } from './fixture.js'

export function cachedQueries(w: ReturnType<typeof experimentWorld>, count?: (outcome: CacheOutcome) => void): CachedExperimentQueries {
  const actionById = (teamId: number, id: number) => w.m.actions.byId(teamId, id)
  return new CachedExperimentQueries({
    runner: new ExperimentQueryRunner({ events: w.store!, experiments: w.experiments, actionById }),
    experiments: w.experiments,
    actionById,
    limits: { maxEntries: 10, maxBytes: 1_000_000 },
    now: w.now,
    count,
  })
}
