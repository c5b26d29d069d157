/** Group commit: a lone insert is written after one turn; those arriving before or during a write share the next; a failure is its batch's. */
import t from 'tap'
import { GroupCommit } from '../../../src/storage/group-commit.js'

function store() {
  const writes: number[][] = []
  const gates: Array<(error?: Error) => void> = []
  const commit = new GroupCommit<number>(
    (rows) =>
      new Promise<void>((resolve, reject) => {
        writes.push([...rows])
        gates.push((error) => (error ? reject(error) : resolve()))
      }),
  )
  return { commit, writes, open: (error?: Error) => gates.shift()!(error) }
}

const settled = async (p: Promise<void>) => p.then(() => 'stored', (e: Error) => `failed: ${e.message}`)

const turn = () => new Promise((r) => setImmediate(r))

t.test('a lone insert is written after one turn of the event loop, and resolves when its write does', async (t) => {
  const s = store()
  let done = false
  const p = s.commit.insert([1, 2]).then(() => (done = true))
  t.same(s.writes, [], 'waits for the requests already queued')
  await turn()
  t.same(s.writes, [[1, 2]], 'then written, with no further wait')
  await turn()
  t.equal(done, false, 'not before the store answered')
  s.open()
  await p
  t.equal(done, true)
})

t.test('inserts made in the same turn share a write', async (t) => {
  const s = store()
  const first = settled(s.commit.insert([1]))
  const second = settled(s.commit.insert([2, 3]))
  await turn()
  t.same(s.writes, [[1, 2, 3]], 'one write for both, in their order')
  s.open()
  t.same(await Promise.all([first, second]), ['stored', 'stored'])
})

t.test('inserts arriving during a write are written together next, in their order', async (t) => {
  const s = store()
  const first = settled(s.commit.insert([1]))
  await turn()
  const second = settled(s.commit.insert([2, 3]))
  const third = settled(s.commit.insert([]))
  const fourth = settled(s.commit.insert([4]))
  t.same(s.writes, [[1]], 'the others wait for the write in flight')
  s.open()
  t.equal(await first, 'stored')
  await turn()
  t.same(s.writes, [[1], [2, 3, 4]], 'one write for the three that waited')
  s.open()
  t.same(await Promise.all([second, third, fourth]), ['stored', 'stored', 'stored'])
})

t.test("a failed write fails its batch's inserts only; the next batch is written", async (t) => {
  const s = store()
  const first = settled(s.commit.insert([1]))
  await turn()
  const second = settled(s.commit.insert([2]))
  s.open(new Error('disk full'))
  t.equal(await first, 'failed: disk full')
  await turn()
  s.open()
  t.equal(await second, 'stored')
  const third = settled(s.commit.insert([3]))
  await turn()
  t.same(s.writes, [[1], [2], [3]], 'idle again: the next insert is written after one turn')
  s.open()
  t.equal(await third, 'stored')
})
