/**
 * The piscina worker module: one named export per task (`pool.run(task, { name })`). Each task is a thin
 * adapter over pure functions in src/.
 */
export { parseBatch, parseV1Batch } from './parse-batch.js'
export { evaluateFlags } from './evaluate-flags.js'
export { experimentStats } from './experiment-stats.js'
