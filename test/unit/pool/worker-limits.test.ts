import t from 'tap'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from '../../helpers/server.js'

// A process started with the server's young-generation flag (`npm start`), on the compiled module (`npm test`
// builds dist/ first). A heap's limit is its old generation plus three semi-spaces.
const POOL = pathToFileURL(join(ROOT, 'dist', 'src', 'pool', 'index.js')).href
const SCRIPT = `
import { getHeapStatistics } from 'node:v8'
import { Worker } from 'node:worker_threads'
const limit = (resourceLimits) =>
  new Promise((resolve, reject) => {
    const code = "import { parentPort } from 'node:worker_threads'; import { getHeapStatistics } from 'node:v8'; parentPort.postMessage(getHeapStatistics().heap_size_limit)"
    const worker = new Worker(new URL('data:text/javascript,' + encodeURIComponent(code)), { resourceLimits })
    worker.once('message', resolve).once('error', reject)
  })
const mb = (bytes) => bytes / 1048576
const mainBefore = getHeapStatistics().heap_size_limit
const raw = await limit({ maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 48 })
const { workerLimits } = await import(${JSON.stringify(POOL)})
const given = await limit(workerLimits(64, 48))
const small = await limit(workerLimits(64, 12))
console.log(JSON.stringify({ raw: mb(raw), given: mb(given), small: mb(small), mainSame: getHeapStatistics().heap_size_limit === mainBefore }))
`

t.test("a worker gets the young generation it is given, not the size the process's flag sets for the main thread", async (t) => {
  const out = execFileSync(process.execPath, ['--max-semi-space-size=4', '--input-type=module', '-e', SCRIPT], { encoding: 'utf8' })
  const { raw, given, small, mainSame } = JSON.parse(out) as { raw: number; given: number; small: number; mainSame: boolean }
  t.equal(raw, 64 + 3 * 4, 'without workerLimits the flag wins over the worker’s own limit')
  t.equal(given, 64 + 48, 'a 48 MB young generation (16 MB semi-spaces)')
  t.equal(small, 64 + 12, 'a 12 MB one (4 MB semi-spaces)')
  t.ok(mainSame, 'the main thread keeps its heap')
})
