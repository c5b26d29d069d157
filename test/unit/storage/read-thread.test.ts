/**
 * A read thread answers each call with its read's result, and its errors with their messages (an AppError
 * whole); a thread that died is replaced at the next call, and an idle one does not keep the process alive.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { AppError } from '../../../src/common/errors.js'
import { ReadThread } from '../../../src/storage/read-thread.js'
import { ROOT } from '../../helpers/server.js'

// The thread runs compiled code, as the service's read threads do (`npm test` builds dist/ first).
const compiled = (path: string) => JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'src', path)).href)

/** An entry serving a few reads: an echo, two failures, one that ends the thread, one that waits. */
function entry(dir: string): URL {
  const file = join(dir, 'entry.mjs')
  writeFileSync(
    file,
    `import { readFileSync } from 'node:fs'
import { parentPort, threadId, workerData } from 'node:worker_threads'
import { serveReads } from ${compiled('storage/read-thread.js')}
import { AppError } from ${compiled('common/errors.js')}
serveReads(parentPort, () => ({
  echo: (...args) => ({ args, threadId, workerData }),
  later: (ms) => new Promise((resolve) => setTimeout(() => resolve(ms), ms)),
  fail: (message) => { throw new RangeError(message) },
  refuse: () => { throw new AppError('not_found', { detail: 'No such thing here.' }) },
  die: () => process.exit(3),
  // stat's 19th field after the name: the calling thread's niceness
  niceness: () => Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[16]),
  close: () => {},
}))
`,
  )
  return pathToFileURL(file)
}

t.test('each call answers with its read’s result, a structured clone of it', async (t) => {
  const started: number[] = []
  const thread = new ReadThread({ entry: entry(t.testdir()), workerData: { file: 'x.db' }, name: 'the test thread', onThreadStart: (id) => started.push(id) })
  t.teardown(() => thread.close())
  const answers = await Promise.all([thread.call('later', [30]), thread.call('echo', [1, 'two', { three: [3, -0] }])])
  t.same(answers, [30, { args: [1, 'two', { three: [3, -0] }], threadId: started[0], workerData: { file: 'x.db' } }], 'answered in the order asked')
  t.equal(started.length, 1, 'one thread for both')
})

t.test('a thread given a niceness runs its reads at it, one given none at the starting thread’s', { skip: process.platform === 'linux' ? false : 'Linux threads only' }, async (t) => {
  const lowered = new ReadThread({ entry: entry(t.testdir()), workerData: null, name: 'the test thread', nice: 7 })
  const plain = new ReadThread({ entry: entry(t.testdir()), workerData: null, name: 'the test thread' })
  t.teardown(() => Promise.all([lowered.close(), plain.close()]))
  const mine = Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[16])
  // setpriority sets the niceness itself: from above 7 it would be a raise, which needs CAP_SYS_NICE.
  if (mine <= 7) t.equal(await lowered.call('niceness', []), 7, 'lowered to 7')
  t.equal(await plain.call('niceness', []), mine, 'unchanged')
})

t.test('a failed read rejects with its message, an AppError as the same AppError, and the thread goes on', async (t) => {
  const thread = new ReadThread({ entry: entry(t.testdir()), workerData: null, name: 'the test thread' })
  t.teardown(() => thread.close())
  await t.rejects(thread.call('fail', ['group type index 9']), { message: 'group type index 9' })
  const refused = await thread.call('refuse', []).catch((error: unknown) => error)
  t.ok(refused instanceof AppError, 'an AppError')
  t.same((refused as AppError).envelope(), new AppError('not_found', { detail: 'No such thing here.' }).envelope(), 'with the contract’s envelope')
  t.equal((refused as AppError).status, 404)
  await t.rejects(thread.call('nothing', []), { message: 'no read named nothing' })
  await t.rejects(thread.call('close', []), { message: 'no read named close' }, 'close is not a read')
  t.match(await thread.call('echo', ['after']), { args: ['after'], threadId: Number, workerData: null }, 'the same thread answers the next read')
})

t.test('a thread that dies fails the calls it held with why, and the next call starts another', async (t) => {
  const started: number[] = []
  const thread = new ReadThread({ entry: entry(t.testdir()), workerData: null, name: 'the test thread', onThreadStart: (id) => started.push(id) })
  t.teardown(() => thread.close())
  const first = ((await thread.call('echo', [])) as { threadId: number }).threadId
  const dying = thread.call('die', [])
  const queued = thread.call('echo', ['queued behind the death'])
  await t.rejects(dying, { message: 'the test thread stopped' })
  await t.rejects(queued, { message: 'the test thread stopped' }, 'a call queued behind it fails too')
  const second = ((await thread.call('echo', [])) as { threadId: number }).threadId
  t.not(second, first, 'another thread answers')
  t.same(started, [first, second])
})

t.test('an idle thread does not keep the process alive, a busy one does', async (t) => {
  const dir = t.testdir()
  const script = `
import { ReadThread } from ${compiled('storage/read-thread.js')}
const thread = new ReadThread({ entry: new URL(${JSON.stringify(entry(dir).href)}), workerData: null, name: 'the test thread' })
console.log(await thread.call('later', [200]))
`
  const file = join(dir, 'main.mjs')
  writeFileSync(file, script)
  const started = Date.now()
  const run = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 20_000 })
  t.equal(run.status, 0, run.stderr)
  t.equal(run.stdout.trim(), '200', 'the process waited for the answer')
  t.ok(Date.now() - started < 15_000, 'and then exited by itself')
})
