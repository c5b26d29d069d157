/**
 * Flags under hostile input, in-process. The management rules take random flag and cohort bodies (valid
 * shapes broken at random, catastrophic regexes, pollution keys) and either store them or refuse them with
 * a 4xx; then everything stored, plus definitions that never went through validation, is compiled and
 * evaluated for random users. Evaluation never throws, never takes long, and never plants a property on
 * Object.prototype.
 */
import t from 'tap'
import { isAppError } from '../../../src/common/errors.js'
import { compileFlags, evaluateAll, type FlagDefinition } from '../../../src/flags/index.js'
import { readDecideRequest } from '../../../src/flags/request.js'
import { ManagementFlagSource } from '../../../src/management/index.js'
import { flagWorld } from '../management/flag-fixture.js'
import { Rng, fuzzSeed } from './rng.js'
import { cohortBody, decideBody, flagBody, flagFilters } from './shapes.js'
import { POLLUTION_MARKER, hostileString, mutate, pollutionJson, randomJson, regexVictim } from './values.js'

const SEED = fuzzSeed()
const BODIES = Number(process.env.FUZZ_FLAG_BODIES ?? 6_000)
const EVALUATIONS = Number(process.env.FUZZ_EVALUATIONS ?? 3_000)
const SLOW_MS = 1000
t.setTimeout(Math.max(120_000, BODIES * 10 + EVALUATIONS * 20))

function polluted(): boolean {
  const proto = Object.prototype as Record<string, unknown>
  if (proto[POLLUTION_MARKER] === undefined) return false
  delete proto[POLLUTION_MARKER]
  return true
}

/** Runs `fn`; a 4xx AppError is an answer, anything else thrown (or a slow or polluting run) a failure. */
function attempt(label: string, failures: string[], outcomes: Map<string, number>, fn: () => void): void {
  const started = performance.now()
  let outcome = 'ok'
  try {
    fn()
  } catch (error) {
    if (isAppError(error) && error.status >= 400 && error.status < 500) outcome = `${error.status} ${error.code}`
    else {
      outcome = 'crash'
      failures.push(`${label}: ${error instanceof Error ? error.stack : String(error)}`.slice(0, 1500))
    }
  }
  const ms = performance.now() - started
  if (ms > SLOW_MS) failures.push(`${label}: took ${Math.round(ms)} ms`)
  if (polluted()) failures.push(`${label}: Object.prototype.${POLLUTION_MARKER} was set`)
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
}

t.test(`flags under hostile definitions and inputs (FUZZ_SEED=${SEED})`, async (t) => {
  const world = flagWorld()
  t.teardown(() => world.db.close())
  const { m, project, owner } = world
  const failures: string[] = []
  const cohortIds: number[] = []
  const flagIds: number[] = []

  const bodies = new Map<string, number>()
  for (let i = 0; i < BODIES && failures.length < 10; i++) {
    const rng = new Rng(SEED, i)
    const kind = rng.weighted<'flag' | 'update' | 'cohort'>([[6, 'flag'], [2, 'update'], [2, 'cohort']])
    const shape = kind === 'cohort' ? cohortBody(rng, cohortIds) : flagBody(rng, cohortIds, flagIds)
    const body: unknown = rng.weighted<() => unknown>([
      [5, () => shape],
      [4, () => mutate(rng, shape)],
      [1, () => JSON.parse(pollutionJson(rng, shape))],
      [1, () => randomJson(rng, 3)],
    ])()
    attempt(`body ${i} (${kind})`, failures, bodies, () => {
      if (kind === 'cohort') cohortIds.push(m.cohorts.create(project.id, body, owner.id).id)
      else if (kind === 'update' && flagIds.length > 0) m.featureFlags.update(project, rng.pick(flagIds), body, owner.id)
      else flagIds.push(m.featureFlags.create(project, body, owner.id).id)
    })
  }
  t.same(failures, [], `every flag and cohort body is stored or refused with a 4xx (FUZZ_SEED=${SEED})`)
  t.ok(flagIds.length > BODIES / 40, `${flagIds.length} flags and ${cohortIds.length} cohorts were stored`)
  t.comment(`management outcomes: ${JSON.stringify(Object.fromEntries([...bodies].sort((a, b) => b[1] - a[1]).slice(0, 12)))}`)

  // Everything stored, plus raw definitions that skipped validation (older rows, hand edits, the CLI).
  const stored = new ManagementFlagSource(world.db).load(project.id)
  const raw: FlagDefinition[] = Array.from({ length: 300 }, (_, i) => {
    const rng = new Rng(SEED ^ 0x5eed, i)
    const filters = rng.chance(0.5) ? flagFilters(rng, cohortIds, flagIds) : mutate(rng, flagFilters(rng, cohortIds, flagIds))
    return { id: 900_000 + i, key: `raw-${i}`, filters: (rng.chance(0.9) ? filters : randomJson(rng, 2)) as Record<string, unknown>, active: true, deleted: false, ensure_experience_continuity: rng.chance(0.2), version: 1 }
  })
  const evaluations = new Map<string, number>()
  let set: ReturnType<typeof compileFlags> | null = null
  attempt('compile', failures, evaluations, () => {
    set = compileFlags([...stored.flags, ...raw], { groupTypeMapping: { '0': 'company', '1': 'team' }, cohorts: stored.cohorts, timezone: 'Europe/Paris' })
  })
  t.ok(set, 'the definitions compile')
  let slowest = 0
  for (let i = 0; set && i < EVALUATIONS && failures.length < 10; i++) {
    const rng = new Rng(SEED ^ 0xe7a1, i)
    const started = performance.now()
    attempt(`evaluation ${i}`, failures, evaluations, () => {
      const personProperties: Record<string, unknown> = { email: regexVictim(rng), plan: hostileString(rng), age: rng.pick([1, '2', null, {}, [1]]), $browser: hostileString(rng), ...(randomJson(rng, 2) as object) }
      const result = evaluateAll(set!, {
        distinctId: rng.chance(0.9) ? `user-${rng.int(1000)}` : hostileString(rng),
        personProperties,
        groups: { company: hostileString(rng), team: `t${rng.int(10)}` },
        groupProperties: { company: { name: regexVictim(rng) }, team: randomJson(rng, 1) as Record<string, unknown> },
        anonDistinctId: rng.chance(0.3) ? hostileString(rng) : undefined,
        staticCohortIds: new Set(cohortIds.filter(() => rng.chance(0.2))),
        now: Date.parse('2025-06-01T00:00:00Z'),
      })
      for (const [key, flag] of Object.entries(result.flags)) {
        if (typeof flag.enabled !== 'boolean') throw new Error(`flag ${key} answered enabled=${String(flag.enabled)}`)
      }
    })
    slowest = Math.max(slowest, performance.now() - started)
  }
  t.same(failures, [], 'every evaluation answers, quickly, without touching Object.prototype')
  t.comment(`${stored.flags.length + raw.length} definitions × ${EVALUATIONS} users: ${JSON.stringify(Object.fromEntries(evaluations))}, slowest ${slowest.toFixed(1)} ms`)
})

t.test(`/decide bodies are read or refused with a 4xx (FUZZ_SEED=${SEED})`, async (t) => {
  const failures: string[] = []
  const outcomes = new Map<string, number>()
  for (let i = 0; i < 20_000 && failures.length < 10; i++) {
    const rng = new Rng(SEED ^ 0xdec1de, i)
    const body = rng.weighted<() => unknown>([
      [4, () => mutate(rng, decideBody(rng, 'phc_x'))],
      [2, () => JSON.parse(pollutionJson(rng, decideBody(rng, 'phc_x')))],
      [2, () => randomJson(rng, 3)],
    ])()
    attempt(`decide body ${i}`, failures, outcomes, () => void readDecideRequest(body))
  }
  t.same(failures, [])
  t.comment(JSON.stringify(Object.fromEntries(outcomes)))
})
