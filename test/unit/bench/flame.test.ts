/** The benchmark suite's flame graphs of V8 CPU profiles (bench/lib/flame.mjs). */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../helpers/server.js'
import { testDir } from '../../helpers/temp.js'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
}
interface Profile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[]
  samples: number[]
  timeDeltas: number[]
}
interface Frame {
  name: string
  us: number
  children: Map<string, Frame>
}

const { callTree, flameSvg } = (await import(join(ROOT, 'bench', 'lib', 'flame.mjs'))) as {
  callTree: (p: Profile, root: string) => Frame
  flameSvg: (p: Profile, o: { root: string; title?: string; minFraction?: number }) => string
}

const frame = (functionName: string): CallFrame => ({ functionName, url: '', lineNumber: 0 })

/**
 * (root) → main → [work → inner, work (a second V8 node of the same function)], (root) → other, (root) → (idle).
 * Self time: inner 60, work 20 + 10, other 10, (idle) 100: 100 µs of work in all.
 */
function profile(): Profile {
  return {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 6, 7] },
      { id: 2, callFrame: frame('main'), children: [3, 5] },
      { id: 3, callFrame: frame('work'), children: [4] },
      { id: 4, callFrame: frame('inner <T & U>') },
      { id: 5, callFrame: frame('work') },
      { id: 6, callFrame: frame('other') },
      { id: 7, callFrame: frame('(idle)') },
    ],
    samples: [4, 4, 3, 5, 6, 7, 4],
    timeDeltas: [30, 20, 20, 10, 10, 100, 10],
  }
}

/** Each box of an SVG: its tooltip, x and width. */
function boxes(svg: string): { title: string; x: number; width: number; y: number }[] {
  return [...svg.matchAll(/<g><title>([^<]*)<\/title><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"/g)].map((m) => ({
    title: m[1],
    x: Number(m[2]),
    y: Number(m[3]),
    width: Number(m[4]),
  }))
}

t.test('the call tree merges a function called twice from one caller and leaves waiting out', async (t) => {
  const tree = callTree(profile(), '/')
  t.equal(tree.us, 100, 'the root holds all the work, not the 100 µs idle')
  t.equal(tree.children.get('(idle)')?.us ?? 0, 0, 'idle time counts nowhere')
  const main = tree.children.get('main')!
  t.equal(main.us, 90)
  t.same([...main.children.keys()], ['work'], 'the two V8 nodes of `work` under `main` are one frame')
  t.equal(main.children.get('work')!.us, 90, 'work: its own 30 µs and inner 60 µs')
  t.equal(main.children.get('work')!.children.get('inner <T & U>')!.us, 60)
  t.equal(tree.children.get('other')!.us, 10)
})

t.test('a box is as wide as its share of the work, above its caller', async (t) => {
  const svg = flameSvg(profile(), { root: '/', title: 'a <test>' })
  const byName = new Map(boxes(svg).map((b) => [b.title.split(' — ')[0], b]))
  const all = byName.get('all (0.10 ms)')!
  const main = byName.get('main')!
  const work = byName.get('work')!
  const inner = byName.get('inner &lt;T &amp; U&gt;')!
  t.ok(all && main && work && inner, 'every frame with work has a box, its name escaped')
  t.notOk(byName.has('(idle)'), 'waiting has no box')
  // Boxes are drawn 0.5 px narrower than their share, to leave a gap.
  const share = (b: { width: number }) => (b.width + 0.5) / (all.width + 0.5)
  t.ok(Math.abs(share(main) - 0.9) < 1e-9, 'main: 90 % of the width')
  t.ok(Math.abs(share(inner) - 0.6) < 1e-9, 'inner: 60 %')
  t.ok(work.y < main.y && inner.y < work.y, 'callees above callers')
  t.ok(Math.abs(byName.get('other')!.x - (main.x + main.width + 0.5)) < 1e-9, 'siblings side by side, in name order')
  t.match(svg, /a &lt;test&gt;/, 'the title is escaped')
  t.notMatch(svg, /<script/, 'no script in the picture')
})

t.test('frames narrower than the given share are left out, their time kept in the caller', async (t) => {
  const names = (minFraction: number) => boxes(flameSvg(profile(), { root: '/', minFraction })).map((b) => b.title.split(' — ')[0])
  t.ok(names(0.05).includes('other'), 'other (10 %) is kept at 5 %')
  t.notOk(names(0.2).includes('other'), 'and left out at 20 %')
  t.ok(names(0.2).includes('all (0.10 ms)'), 'the root always has its box')
})

t.test('a profile Node wrote names the functions that ran', async (t) => {
  const dir = testDir(t, 'skylark-flame-')
  // A second of spinning: Node's own start-up is in the profile too, and on a loaded or slowed vCPU it took
  // ≈300 ms, as long as a 300 ms spin (593 of 1,200 px in one CI run).
  const script = 'function spinForFlameGraph() { let x = 0; const end = Date.now() + 1000; while (Date.now() < end) x += Math.sqrt(x + 1); return x } spinForFlameGraph()'
  execFileSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, '-e', script])
  const [file] = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))
  execFileSync(process.execPath, [join(ROOT, 'bench', 'flame.mjs'), dir])
  const svg = readFileSync(join(dir, file.replace(/\.cpuprofile$/, '.svg')), 'utf8')
  const spin = boxes(svg).find((b) => b.title.startsWith('spinForFlameGraph'))
  t.ok(spin, 'the spinning function has a box')
  const all = boxes(svg).find((b) => b.title.startsWith('all ('))!
  t.ok(spin!.width > 0.5 * all.width, `it holds most of the work (${spin!.width.toFixed(0)} of ${all.width.toFixed(0)} px)`)
})
