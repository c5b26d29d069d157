/**
 * Experiment writes under hostile input, in-process: random create and update bodies (valid shapes with
 * the `feature_flag` object, metrics and settings, broken at random, pollution keys, random JSON) are
 * either stored or refused with a 4xx, and whatever is stored reads back.
 */
import t from 'tap'
import { experimentWorld } from '../experiments/fixture.js'
import { fuzzCases, fuzzRun } from './run.js'
import { experimentBody } from './shapes.js'
import { mutate, pollutionJson, randomJson } from './values.js'

const RUN = fuzzRun(3_000)
t.setTimeout(Math.max(120_000, RUN.cases * 20))

t.test(`experiment writes under ${RUN.cases} hostile bodies (FUZZ_SEED=${RUN.seed})`, async (t) => {
  const w = experimentWorld({ noEvents: true })
  t.teardown(() => w.close())
  const ids: number[] = []
  const flagKeys: string[] = []
  fuzzCases(t, RUN, 'body', (rng, i) => {
    // Mostly with the older fields tame, so most bodies reach the flag config, metrics and settings.
    const base = experimentBody(rng, flagKeys)
    const shape = rng.chance(0.7) ? { ...base, name: `experiment ${i}`, description: '', parameters: {}, filters: {}, secondary_metrics: [], start_date: null, end_date: null } : base
    const body: unknown = rng.weighted<() => unknown>([
      [6, () => shape],
      [3, () => mutate(rng, shape)],
      [1, () => JSON.parse(pollutionJson(rng, shape))],
      [1, () => randomJson(rng, 3)],
    ])()
    const updating = ids.length > 0 && rng.chance(0.4)
    const stored = updating ? w.update(rng.pick(ids), body as Record<string, unknown>) : w.create(body as Record<string, unknown>)
    if (!updating) {
      ids.push(stored.id)
      flagKeys.push(stored.feature_flag_key)
    }
    const read = w.experiments.get(w.project, stored.id)
    if (JSON.stringify(read.metrics) !== JSON.stringify(stored.metrics) || read.conclusion !== stored.conclusion) {
      throw new Error(`experiment ${stored.id} reads back otherwise than it was answered`)
    }
    return 'accepted some'
  })
})
