import t from 'tap'
import { BEHIND_BYTES, OTHERS_CORES, RAISED_NICE_ABOVE_MAIN, RAISED_TICKS, STARVED_TICKS, StarvationGuard, WARM_EVENTS, raisedNice, starved } from '../../../src/ingestion/consumer/starvation.js'

const STARVED = { runMs: 3, waitMs: 900 }
const BUSY = { runMs: 400, waitMs: 500 } // shares the cores with the request thread, and keeps up
const ASLEEP = { runMs: 1, waitMs: 0 } // nothing to do
/** The consumer's report: nothing waiting to be stored, unless said otherwise. */
const work = (backlogBytes = 0, { stored = 0, waiting = false } = {}) => ({ backlogBytes, stored, waiting })

t.test('starved: waiting runnable for at least half the interval while running for at most a tenth of it', async (t) => {
  t.ok(starved(STARVED, 1000))
  t.ok(starved({ runMs: 100, waitMs: 500 }, 1000), 'both bounds inclusive')
  t.notOk(starved(BUSY, 1000), 'it ran for 40 %')
  t.notOk(starved(ASLEEP, 1000), 'it had nothing to wait for')
  t.notOk(starved({ runMs: 0, waitMs: 499 }, 1000))
})

t.test(`raised after ${STARVED_TICKS} starved intervals in a row, lowered ${RAISED_TICKS} intervals later`, async (t) => {
  const guard = new StarvationGuard()
  const actions: Array<string | null> = []
  for (let i = 0; i < STARVED_TICKS + RAISED_TICKS; i++) actions.push(guard.tick([ASLEEP, STARVED], 1000, 1.5, work()))
  t.same(actions, [...Array(STARVED_TICKS - 1).fill(null), 'raise', ...Array(RAISED_TICKS - 1).fill(null), 'lower'])
  t.notOk(guard.raised)
  t.same(
    Array.from({ length: STARVED_TICKS }, () => guard.tick([STARVED], 1000, 1.5, work())),
    [...Array(STARVED_TICKS - 1).fill(null), 'raise'],
    'still starved: raised again after the same wait',
  )
})

t.test('a starved interval between others is not starvation', async (t) => {
  const guard = new StarvationGuard()
  const actions = [STARVED, BUSY, STARVED, ASLEEP, STARVED].map((s) => guard.tick([s], 1000, 1.5, work()))
  t.same(actions, [null, null, null, null, null])
  t.notOk(guard.raised)
})

t.test('threads that were never sampled are not starved', async (t) => {
  const guard = new StarvationGuard()
  t.same([guard.tick([], 1000, 2, work()), guard.tick([], 1000, 2, work()), guard.tick([], 1000, 2, work())], [null, null, null])
})

t.test(`waiting while other processes use under ${OTHERS_CORES} cores is yielding to this process's request thread, not starvation`, async (t) => {
  const guard = new StarvationGuard()
  const light = Array.from({ length: STARVED_TICKS + 2 }, () => guard.tick([STARVED], 1000, OTHERS_CORES - 0.05, work()))
  t.same(light, Array(STARVED_TICKS + 2).fill(null), 'a load generator as light as wrk beside the server')
  const heavy = Array.from({ length: STARVED_TICKS }, () => guard.tick([STARVED], 1000, OTHERS_CORES, work()))
  t.same(heavy, [...Array(STARVED_TICKS - 1).fill(null), 'raise'], 'half a core used elsewhere')
})

t.test(`raised threads run ${RAISED_NICE_ABOVE_MAIN} nicer than the request thread, and always above where they were lowered`, async (t) => {
  t.equal(raisedNice('idle', 19, 0), RAISED_NICE_ABOVE_MAIN, 'out of SCHED_IDLE')
  t.equal(raisedNice('other', 19, 0), RAISED_NICE_ABOVE_MAIN, 'from nice 19')
  t.equal(raisedNice('idle', 19, 17), 19, 'never past 19')
  t.equal(raisedNice('other', RAISED_NICE_ABOVE_MAIN, 0), 0, 'lowered only as far as the raise would go: the request thread’s own')
  t.equal(raisedNice('other', 8, 4), 4, 'lowered less than the raise would put them: the request thread’s own')
})

t.test(`a consumer ${BEHIND_BYTES / 2 ** 20} MB behind is raised to catch up at once, for ${RAISED_TICKS} intervals at a time`, async (t) => {
  const guard = new StarvationGuard()
  t.equal(guard.tick([BUSY], 100, 0, work(BEHIND_BYTES - 1)), null, 'less behind: left lowered')
  const actions = Array.from({ length: RAISED_TICKS + 1 }, () => guard.tick([BUSY], 100, 0, work(BEHIND_BYTES)))
  t.same(actions, ['catch-up', ...Array(RAISED_TICKS - 1).fill(null), 'lower'])
  t.equal(guard.tick([BUSY], 100, 0, work(BEHIND_BYTES * 2)), 'catch-up', 'still behind: raised again')
  t.ok(guard.raised)
})

t.test(`a new consumer is raised when the first events wait, until it has stored ${WARM_EVENTS} of them, and only once`, async (t) => {
  const guard = new StarvationGuard()
  t.equal(guard.tick([ASLEEP], 100, 0, work()), null, 'nothing to store: left lowered')
  t.equal(guard.tick([BUSY], 100, 0, work(0, { waiting: true })), 'warm-up')
  const warming = Array.from({ length: 5 }, (_, i) => guard.tick([BUSY], 100, 0, work(0, { stored: (i * WARM_EVENTS) / 5, waiting: true })))
  t.same(warming, Array(5).fill(null), 'raised while it has stored fewer')
  t.equal(guard.tick([BUSY], 100, 0, work(0, { stored: WARM_EVENTS, waiting: true })), 'lower', 'lowered as soon as it has stored them')
  const after = Array.from({ length: RAISED_TICKS * 2 }, () => guard.tick([BUSY], 100, 0, work(0, { stored: WARM_EVENTS + 1, waiting: true })))
  t.same(after, Array(RAISED_TICKS * 2).fill(null), 'warm: events waiting alone never raise it again')
})

t.test(`a warm-up lasts ${RAISED_TICKS} intervals at most: light traffic does not keep the threads raised`, async (t) => {
  const guard = new StarvationGuard()
  const actions = Array.from({ length: RAISED_TICKS + 3 }, () => guard.tick([ASLEEP], 100, 0, work(0, { stored: 10, waiting: true })))
  t.same(actions, ['warm-up', ...Array(RAISED_TICKS - 1).fill(null), 'lower', null, null])
})

t.test('a consumer that stored its first events before any waited is warm already', async (t) => {
  const guard = new StarvationGuard()
  t.equal(guard.tick([BUSY], 100, 0, work(0, { stored: WARM_EVENTS, waiting: true })), null)
})

t.test('warming up, a consumer behind is lowered when warm and raised again at once to catch up', async (t) => {
  const guard = new StarvationGuard()
  t.equal(guard.tick([BUSY], 100, 0, work(BEHIND_BYTES, { waiting: true })), 'warm-up')
  t.equal(guard.tick([BUSY], 100, 0, work(BEHIND_BYTES, { stored: WARM_EVENTS, waiting: true })), 'lower')
  t.equal(guard.tick([BUSY], 100, 0, work(BEHIND_BYTES, { stored: WARM_EVENTS, waiting: true })), 'catch-up')
})

t.test('a warm-up the process may not make leaves the threads watched as lowered, and is not asked for again', async (t) => {
  const guard = new StarvationGuard()
  t.equal(guard.tick([BUSY], 100, 0, work(0, { waiting: true })), 'warm-up')
  guard.notRaised()
  t.notOk(guard.raised)
  t.same(
    Array.from({ length: STARVED_TICKS }, () => guard.tick([STARVED], 100, 1.5, work(0, { waiting: true }))),
    [...Array(STARVED_TICKS - 1).fill(null), 'raise'],
    'starved by others at once: raised as if there had been no warm-up',
  )
  guard.notRaised()
  t.equal(guard.tick([BUSY], 100, 0, work(BEHIND_BYTES, { waiting: true })), 'catch-up', 'behind: raised to catch up at once')
})
