/** The benchmark suite's judgement of acknowledged → visible, on a stored run with its lag entries replaced. */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../helpers/server.js'

interface Lag {
  p50: number
  p99: number
  max: number
  n: number
}
interface LagEntry {
  sink: string
  status: string
  probes: number
  timeouts: number
  failures: number
  pollMs: number
  backgroundRps: number
  peakRssMB: number
  eventsMs: Lag
  personsMs: Lag
  decideMs?: Lag
}
interface Report {
  lag: LagEntry[]
}
interface TargetRow {
  target: string
  where: string
  value: number | null
  met: boolean | null
}

const { evaluateTargets } = (await import(join(ROOT, 'bench', 'lib', 'targets.mjs'))) as { evaluateTargets: (r: Report) => TargetRow[] }
const { renderMarkdown } = (await import(join(ROOT, 'bench', 'lib', 'report.mjs'))) as { renderMarkdown: (r: Report, svg: string) => string }

/** A complete run of the suite (both sinks), as `npm run bench` wrote it. */
const stored = (): Report => JSON.parse(readFileSync(join(ROOT, 'bench', 'results', '2026-11-24-95749ad3a5.json'), 'utf8')) as Report
const lag = (p99: number): Lag => ({ p50: p99 / 2, p99, max: p99 + 1, n: 200 })
const entry = (sink: string, decideMs?: Lag): LagEntry => ({
  sink,
  status: 'ok',
  probes: 200,
  timeouts: 0,
  failures: 0,
  pollMs: 10,
  backgroundRps: 4000,
  peakRssMB: 230,
  eventsMs: lag(140),
  personsMs: lag(25),
  ...(decideMs ? { decideMs } : {}),
})
const visibleRows = (report: Report) => evaluateTargets(report).filter((row) => row.target === 'ack → visible p99 < 1 s')

t.test('ack → visible is judged in the events API, the persons API and /decide, each on its own p99', async (t) => {
  const report = { ...stored(), lag: [entry('sqlite', lag(30)), entry('clickhouse', lag(1200))] }
  const rows = visibleRows(report)
  t.same(
    rows.map((row) => [row.where, row.value, row.met]),
    [
      ['sqlite, events API', 140, true],
      ['sqlite, persons API', 25, true],
      ['sqlite, /decide', 30, true],
      ['clickhouse, events API', 140, true],
      ['clickhouse, persons API', 25, true],
      ['clickhouse, /decide', 1200, false],
    ],
  )
})

t.test('a probe that never became visible fails every ack → visible row of its sink', async (t) => {
  const report = { ...stored(), lag: [{ ...entry('sqlite', lag(30)), timeouts: 1 }] }
  t.same(
    visibleRows(report).map((row) => row.met),
    [false, false, false],
  )
})

t.test('runs from before the /decide probes are judged and rendered without a /decide column value', async (t) => {
  const report = { ...stored(), lag: [entry('sqlite')] }
  t.same(
    visibleRows(report).map((row) => row.where),
    ['sqlite, events API', 'sqlite, persons API'],
  )
  const line = renderMarkdown(report, 'chart.svg')
    .split('\n')
    .find((l) => l.startsWith('| sqlite | 4,000 |'))
  t.ok(line, 'the lag row is rendered')
  t.match(line, '| 70.0 / 140 / 141 | 12.5 / 25.0 / 26.0 | – | 0 | 10 | 230 |')
})

t.test('the stored run itself has a /decide lag for both sinks, within its target', async (t) => {
  const rows = visibleRows(stored()).filter((row) => row.where.endsWith('/decide'))
  t.same(
    rows.map((row) => row.where),
    ['sqlite, /decide', 'clickhouse, /decide'],
  )
  for (const row of rows) t.ok(row.met && row.value !== null && row.value < 1000, row.where)
})

t.test("a run with the durable floor names it, and skylark's share of it, beside the /capture/ target", async (t) => {
  const base = stored() as Report & { baselines: Array<{ name: string; body: string; loadgen: string; rps: number }> }
  const raw = base.baselines.find((b) => b.name === 'uws-raw' && b.body === 'capture' && b.loadgen === 'wrk')!
  const report = { ...base, baselines: [...base.baselines, { ...raw, name: 'uws-durable', rps: raw.rps / 2 }] }
  const detail = (r: Report) =>
    (evaluateTargets(r) as Array<TargetRow & { detail: string }>).find((row) => row.target === '/capture/ ≥ 0.6× raw uWS' && row.where === 'sqlite, wrk')!.detail
  t.match(detail(report), `durable floor ${raw.rps / 2} req/s = 0.5× raw uWS`)
  t.match(detail(report), /skylark \d+(\.\d+)?× the floor/)
  t.notMatch(detail(base), 'durable floor', 'runs without it say nothing of it')
  t.match(renderMarkdown(report, 'chart.svg'), `| uws-durable | capture | wrk |`, 'its row is in the baselines table')
})

t.test('a ratio just under its target is not met, and is shown with the digit that says so', async (t) => {
  const base = stored() as Report & {
    ceilings: Array<{ sink: string; rowsPerS: number }>
    scenarios: Array<{ name: string; sink: string; loadgen: string; e2e?: { storedPerS: number } }>
  }
  const ceiling = base.ceilings.find((c) => c.sink === 'clickhouse')!.rowsPerS
  const withStored = (ratio: number) => ({
    ...base,
    scenarios: base.scenarios.map((s) =>
      s.name === 'batch-1000' && s.sink === 'clickhouse' ? { ...s, e2e: { ...s.e2e!, storedPerS: ceiling * ratio } } : s,
    ),
  })
  const row = (r: Report) => evaluateTargets(r).find((x) => x.target === '/batch/ end to end ≥ 0.5× sink ceiling' && x.where === 'batch-1000, clickhouse')!
  t.same([row(withStored(0.4957)).value, row(withStored(0.4957)).met], [0.496, false], 'two decimals would read 0.5')
  t.same([row(withStored(0.5043)).value, row(withStored(0.5043)).met], [0.5, true])
  t.same([row(withStored(0.4843)).value, row(withStored(0.4843)).met], [0.48, false])
  const ceilingRow = (r: Report) => renderMarkdown(r, 'chart.svg').split('\n').find((l) => l.startsWith('| clickhouse | 100,000 |'))
  t.match(ceilingRow(withStored(0.4957)), / \| 0\.496× \|$/, 'the ceilings table shows it as the targets table does')
  t.match(ceilingRow(withStored(0.5043)), / \| 0\.50× \|$/)
})
