/**
 * Pool task: experiment statistics off the main thread (three or more variants need ~0.15–0.5 s of seeded
 * Monte Carlo). Errors PostHog answers as 400s come back as values; the main thread rethrows them.
 */
import { runStatsTask, type StatsOutcome, type StatsTask } from '../src/experiments/stats-task.js'

export function experimentStats(task: StatsTask): StatsOutcome {
  return runStatsTask(task)
}
