/**
 * The suite's CPU probe (bench/lib/speed.mjs): a probe process per vCPU reports how long a fixed unit of work
 * takes, each run records the reading of its window, and a target's ratio says when its two runs saw CPUs that
 * ran at different speeds.
 */
import t from 'tap'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ROOT } from '../../helpers/server.js'

interface Speed {
  nsPerUnit: number
  perCpu: { cpu: number | 'any'; nsPerUnit: number; reports: number }[]
}
const { parseCpuList, speedIn, startSpeedProbe } = (await import(join(ROOT, 'bench', 'lib', 'speed.mjs'))) as {
  parseCpuList: (list: string) => number[]
  speedIn: (reports: Map<number, [number, number][]>, from: number, to: number) => Speed | null
  startSpeedProbe: () => { pinned: boolean; cpus: (number | 'any')[]; between: (from: number, to: number) => Speed | null; stop: () => void }
}
const { evaluateTargets, speedNote } = (await import(join(ROOT, 'bench', 'lib', 'targets.mjs'))) as {
  evaluateTargets: (report: object) => { target: string; detail: string }[]
  speedNote: (measured: object | undefined, against: object | undefined, name: string) => string
}

t.test('a window reads the median of each vCPU inside it and their mean', async (t) => {
  const reports = new Map<number, [number, number][]>([
    [0, [[100, 9000], [200, 3000], [300, 3100], [400, 2900], [500, 9000]]],
    [1, [[150, 1000], [250, 6200], [350, 5800], [390, 6000], [550, 1000]]],
  ])
  const speed = speedIn(reports, 200, 400)
  t.same(speed?.perCpu, [
    { cpu: 0, nsPerUnit: 3000, reports: 3 },
    { cpu: 1, nsPerUnit: 6000, reports: 3 },
  ])
  t.equal(speed?.nsPerUnit, 4500)
  t.equal(speedIn(reports, 600, 700), null, 'no report in the window: no reading')
})

t.test('the probed vCPUs are those the process may run on, as the kernel lists them', async (t) => {
  t.same(parseCpuList('0-1\n'), [0, 1])
  t.same(parseCpuList('0,2-4,7'), [0, 2, 3, 4, 7])
  t.same(parseCpuList('3'), [3])
})

t.test('a ratio notes both readings and flags readings a quarter or more apart', async (t) => {
  t.equal(speedNote({ nsPerUnit: 3000 }, { nsPerUnit: 3600 }, 'baseline'), '; CPU probe 3000 vs 3600 ns')
  t.match(speedNote({ nsPerUnit: 3000 }, { nsPerUnit: 6000 }, 'baseline'), /⚠ the CPUs ran 2× slower in the baseline than/)
  t.match(speedNote({ nsPerUnit: 6000 }, { nsPerUnit: 4000 }, 'ceiling'), /⚠ the CPUs ran 1\.5× slower in the measured run than/)
  t.equal(speedNote(undefined, { nsPerUnit: 3000 }, 'baseline'), '', 'results from before the probe have no reading')
})

t.test('the /batch/ target compares its run with the ceiling sample it is judged against', async (t) => {
  const report = {
    options: { sinks: ['sqlite'] },
    baselines: [],
    lag: [],
    scenarios: [{ name: 'batch-100', sink: 'sqlite', loadgen: 'autocannon', status: 'ok', e2e: { storedPerS: 30_000 }, cpuSpeed: { nsPerUnit: 6000 } }],
    ceilings: [{ sink: 'sqlite', status: 'ok', rowsPerS: 70_000, allRowsPerS: [50_000, 70_000, 60_000], cpuSpeeds: [{ nsPerUnit: 6000 }, { nsPerUnit: 3000 }, { nsPerUnit: 6100 }] }],
  }
  const batch = evaluateTargets(report).find((x) => x.target.startsWith('/batch/'))
  t.match(batch?.detail, '30000 stored/s vs 70000 rows/s; CPU probe 6000 vs 3000 ns — ⚠ the CPUs ran 2× slower in the measured run')
})

t.test('p99 at half of max compares its run with the run whose maximum it halves, and names its slowest answer and the steal', async (t) => {
  const decide = { sink: 'sqlite', status: 'ok', latencyMs: { p50: 1, p99: 26, max: 31 } }
  const report = {
    options: { sinks: ['sqlite'] },
    baselines: [],
    lag: [],
    ceilings: [],
    scenarios: [
      { ...decide, name: 'decide-50', loadgen: 'autocannon', rps: 40_000, cpuSpeed: { nsPerUnit: 3300 } },
      { ...decide, name: 'decide-50-half-rate', loadgen: 'steady', rps: 20_000, load: { overallRate: 20_000 }, cpuSpeed: { nsPerUnit: 5500 }, stealCores: 0.04 },
    ],
  }
  const half = evaluateTargets(report).find((x) => x.target.includes('half max'))
  t.match(half?.detail, 'achieved 20000 req/s, p50 1 ms, max 31 ms; steal 0.04 cores; CPU probe 5500 vs 3300 ns — ⚠ the CPUs ran 1.67× slower in the measured run')
})

t.test('the probes report from every vCPU while they run, and end when stopped', async (t) => {
  const probe = startSpeedProbe()
  const cpus = probe.cpus.length
  const from = Date.now()
  // A report every 200 ms once a probe has started and compiled its work (slower while other tests load the machine).
  let speed: Speed | null = null
  for (let waited = 0; waited < 15_000; waited += 100) {
    await sleep(100)
    speed = probe.between(from, Date.now())
    if (speed?.perCpu.length === cpus && speed.perCpu.every((c) => c.reports >= 3)) break
  }
  probe.stop()
  t.ok(speed, 'a reading')
  t.ok(probe.pinned ? cpus >= 1 : probe.cpus[0] === 'any', probe.pinned ? `pinned to vCPUs ${probe.cpus.join(', ')}` : 'one unpinned probe')
  t.same(speed?.perCpu.map((c) => c.cpu), probe.cpus, 'a reading from each probe')
  for (const cpu of speed?.perCpu ?? []) {
    t.ok(cpu.reports >= 3, `vCPU ${cpu.cpu}: ${cpu.reports} reports`)
    t.ok(cpu.nsPerUnit > 100 && cpu.nsPerUnit < 1_000_000, `vCPU ${cpu.cpu}: ${cpu.nsPerUnit} ns a unit`)
  }
  await sleep(500)
  t.same(probe.between(Date.now() - 400, Date.now()), null, 'no report after stop')
})
