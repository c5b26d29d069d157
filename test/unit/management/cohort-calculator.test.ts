/**
 * The cohort calculator on a real management.db with a clock the test moves: what a write queues, what falls due
 * and when, one count at a time, failures recorded (and given up after PostHog's 20), the history it keeps. The
 * count itself is the test's: what it would count over persons.db is the integration tests' business.
 */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import type { Clock } from '../../../src/common/clock.js'
import { ValidationError } from '../../../src/common/errors.js'
import { CohortCalculator, createManagement, type CohortRecord } from '../../../src/management/index.js'
import { HISTORY_KEPT, MAX_AGE_MS, MAX_ERRORS } from '../../../src/management/cohorts/calculations.js'
import { PER_LOOK } from '../../../src/management/cohorts/calculator.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'
import { tempDir } from '../../helpers/temp.js'

const START = Date.parse('2026-06-01T12:00:00Z')
const plan = (value: string) => ({ properties: { type: 'AND', values: [{ type: 'person', key: 'plan', value, operator: 'exact' }] } })

/** A real management.db, a project, a clock the test moves and a count it answers: a number, or an error to throw. */
function setup(t: Test) {
  const dir = tempDir('skylark-cohort-calc-')
  const db = openDatabase(join(dir, 'management.db'))
  migrate(db, MANAGEMENT_MIGRATIONS)
  let now = START
  const clock: Clock = { now: () => now }
  const m = createManagement(db, clock)
  const org = m.accounts.createOrganization('o')
  const project = m.accounts.createProject(org.id, 'p')
  const answers = new Map<number, number | Error>()
  const counted: number[] = []
  let gate: Promise<void> | null = null
  const count = async (cohort: CohortRecord, at: number) => {
    counted.push(cohort.id)
    if (gate) await gate
    now += 250 // the count takes a quarter of a second
    const answer = answers.get(cohort.id) ?? at % 1000
    if (answer instanceof Error) throw answer
    return answer
  }
  const calculator = new CohortCalculator({ cohorts: m.cohorts, count, clock })
  t.teardown(async () => {
    await calculator.stop()
    db.close()
  })
  const create = (body: object) => m.cohorts.create(project.id, { name: 'c', filters: plan('pro'), ...body }, null)
  const get = (id: number) => m.cohorts.get(project.id, id)
  const history = (id: number, limit = 100, offset = 0) => m.cohorts.calculationHistory(project.id, id, limit, offset)
  /** Counts from now on wait until the returned function is called. */
  const hold = () => {
    let open!: () => void
    const held = new Promise<void>((resolve) => (open = resolve))
    gate = held
    return () => {
      if (gate === held) gate = null
      open()
    }
  }
  return { db, m, project, calculator, answers, counted, create, get, history, hold, advance: (ms: number) => (now += ms) }
}

t.test('a new dynamic cohort is calculating until its first count, which the calculator records as PostHog does', async (t) => {
  const s = setup(t)
  const cohort = s.create({})
  s.answers.set(cohort.id, 42)
  t.match(cohort, { is_calculating: true, count: null, last_calculation: null, errors_calculating: 0 })
  s.calculator.start()
  await s.calculator.settled()
  const started = new Date(START).toISOString()
  const finished = new Date(START + 250).toISOString()
  t.match(s.get(cohort.id), { is_calculating: false, count: 42, last_calculation: finished, errors_calculating: 0, last_error_message: null })
  const { count, results } = s.history(cohort.id)
  t.equal(count, 1)
  t.same(results[0], {
    id: results[0]!.id,
    filters: plan('pro'),
    count: 42,
    started_at: started,
    finished_at: finished,
    queries: [{ query_ms: 250 }],
    error: null,
    duration_seconds: 0.25,
    is_completed: true,
    is_successful: true,
    total_query_ms: 250,
    total_memory_mb: null,
    total_read_rows: null,
    total_written_rows: null,
    main_query: null,
    main_query_id: null,
  })
  t.match(results[0]!.id, /^[0-9a-f-]{36}$/)
})

t.test('static and deleted cohorts are never counted; a change to a live dynamic one is, at once', async (t) => {
  const s = setup(t)
  s.calculator.start()
  const fixed = s.create({ is_static: true, filters: undefined })
  const gone = s.create({ deleted: true })
  const live = s.create({})
  await s.calculator.settled()
  t.same(s.counted, [live.id])
  t.match(s.get(fixed.id), { is_calculating: false, count: null })
  t.match(s.get(gone.id), { is_calculating: false, count: null })

  s.answers.set(live.id, 7)
  t.equal(s.m.cohorts.update(s.project.id, live.id, { name: 'renamed' }).is_calculating, true, 'any change, as PostHog recounts on any update')
  await s.calculator.settled()
  t.equal(s.get(live.id).count, 7)
  t.equal(s.m.cohorts.update(s.project.id, live.id, { deleted: true }).is_calculating, false, 'deleting is no reason to count')
  await s.calculator.settled()
  t.same(s.counted, [live.id, live.id])
  t.equal(s.m.cohorts.update(s.project.id, live.id, { deleted: false }).is_calculating, true, 'restoring is')
  await s.calculator.settled()
  t.same(s.counted, [live.id, live.id, live.id])
})

t.test('a count is due again once the last is fifteen minutes old, least recently counted first, a few a look', async (t) => {
  const s = setup(t)
  const cohorts = Array.from({ length: PER_LOOK + 2 }, () => s.create({}))
  s.calculator.start()
  await s.calculator.settled()
  s.counted.length = 0
  await s.calculator.runDue()
  t.same(s.counted, [], 'nothing is due before MAX_AGE_MS')
  s.advance(MAX_AGE_MS)
  await s.calculator.runDue()
  t.same(s.counted, cohorts.slice(0, PER_LOOK).map((c) => c.id), 'PER_LOOK of them, oldest count first')
  await s.calculator.runDue()
  t.same(s.counted.slice(PER_LOOK), cohorts.slice(PER_LOOK).map((c) => c.id), 'then the rest')
})

t.test('a failed count is recorded with its error and keeps the last count; after twenty failures in a row it is left alone', async (t) => {
  const s = setup(t)
  const cohort = s.create({})
  s.answers.set(cohort.id, 9)
  s.calculator.start()
  await s.calculator.settled()
  s.answers.set(cohort.id, new ValidationError('invalid', 'The behavioural condition "stopped_performing_event" is one skylark can\'t evaluate.'))
  s.advance(MAX_AGE_MS)
  await s.calculator.runDue()
  t.match(s.get(cohort.id), { count: 9, errors_calculating: 1, is_calculating: false, last_error_message: /stopped_performing_event/ })
  t.match(s.history(cohort.id).results[0], { count: null, error: /stopped_performing_event/, is_completed: true, is_successful: false })

  for (let i = 1; i <= MAX_ERRORS; i++) {
    s.advance(MAX_AGE_MS)
    await s.calculator.runDue()
  }
  t.equal(s.get(cohort.id).errors_calculating, MAX_ERRORS + 1)
  const tries = s.counted.length
  s.advance(MAX_AGE_MS)
  await s.calculator.runDue()
  t.equal(s.counted.length, tries, 'no longer due')

  s.answers.set(cohort.id, 11)
  s.m.cohorts.update(s.project.id, cohort.id, { filters: plan('free') })
  await s.calculator.settled()
  t.match(s.get(cohort.id), { count: 11, errors_calculating: 0, last_error_message: null }, 'a change counts it again, and a success clears the errors')
})

t.test('a cohort changed while it is counted stays calculating and is counted again with its new filters', async (t) => {
  const s = setup(t)
  const tick = () => new Promise((resolve) => setImmediate(resolve))
  s.calculator.start()
  const releaseFirst = s.hold()
  const cohort = s.create({})
  await tick()
  s.m.cohorts.update(s.project.id, cohort.id, { filters: plan('free') })
  const releaseSecond = s.hold()
  releaseFirst()
  await tick()
  t.equal(s.get(cohort.id).is_calculating, true, 'the first count is in, the second not yet')
  t.same(s.history(cohort.id).results.map((r) => r.is_completed), [false, true])
  releaseSecond()
  await s.calculator.settled()
  t.equal(s.get(cohort.id).is_calculating, false)
  t.same(s.history(cohort.id).results.map((r) => r.filters), [plan('free'), plan('pro')])
})

t.test('a cohort left calculating by a stopped process is counted when the calculator starts', async (t) => {
  const s = setup(t)
  const cohort = s.create({})
  s.db.prepare("UPDATE cohorts SET last_calculation = '2026-06-01T11:59:00.000Z' WHERE id = ?").run(cohort.id)
  s.calculator.start()
  await s.calculator.settled()
  t.same(s.counted, [cohort.id], 'though its last count is not due')
})

t.test('the history keeps the newest calculations and pages as PostHog pages it', async (t) => {
  const s = setup(t)
  const cohort = s.create({})
  s.calculator.start()
  await s.calculator.settled()
  for (let i = 0; i < HISTORY_KEPT; i++) {
    s.advance(MAX_AGE_MS)
    await s.calculator.runDue()
  }
  const all = s.history(cohort.id, 1000)
  t.equal(all.count, HISTORY_KEPT)
  t.equal(all.results.at(-1)!.started_at, new Date(START + MAX_AGE_MS + 250).toISOString(), 'the first was dropped')
  t.same(s.history(cohort.id, 2, 3).results.map((r) => r.id), all.results.slice(3, 5).map((r) => r.id))
  t.throws(() => s.m.cohorts.calculationHistory(s.project.id + 1, cohort.id, 10, 0), { code: 'not_found' }, "another project's cohort")
})
