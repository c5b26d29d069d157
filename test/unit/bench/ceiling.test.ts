/**
 * The suite's SQLite insert ceiling (bench/lib/ceiling.mjs) writes the rows into a real events.db made by the
 * service's own migrations, and reports the best of its samples: a ceiling is what the sink can do at most.
 */
import t from 'tap'
import { join } from 'node:path'
import { ROOT } from '../../helpers/server.js'

interface Ceiling {
  sink: string
  rows: number
  repeats: number
  rowsPerS: number
  allRowsPerS: number[]
  windows: [number, number][]
}
const { sqliteCeiling } = (await import(join(ROOT, 'bench', 'lib', 'ceiling.mjs'))) as {
  sqliteCeiling: (root: string, sample: object[], rows: number, repeats: number) => Promise<Ceiling>
}

const row = (n: number) => ({
  team_id: 1,
  event: '$pageview',
  distinct_id: `user-${n}`,
  person_id: null,
  properties: JSON.stringify({ $current_url: `https://example.com/${n}`, n }),
  timestamp: 1_764_000_000_000 + n,
  created_at: 1_764_000_000_000 + n,
  group_0: '',
  group_1: '',
  group_2: '',
  group_3: '',
  group_4: '',
  elements_chain: '',
})

t.test('the SQLite ceiling is the best of its samples', async (t) => {
  const ceiling = await sqliteCeiling(ROOT, [row(1), row(2), row(3)], 3000, 4)
  t.equal(ceiling.sink, 'sqlite')
  t.equal(ceiling.allRowsPerS.length, 4, 'one rate per sample')
  for (const rate of ceiling.allRowsPerS) t.ok(rate > 0 && Number.isFinite(rate), `${rate} rows/s`)
  t.equal(ceiling.rowsPerS, Math.max(...ceiling.allRowsPerS))
  // Each sample's wall-clock window, for the CPU probe's reading of it (bench/lib/speed.mjs).
  t.equal(ceiling.windows.length, 4)
  for (const [i, [from, to]] of ceiling.windows.entries()) {
    t.ok(from <= to, `sample ${i} ends after it starts`)
    if (i > 0) t.ok(from >= ceiling.windows[i - 1][1], `sample ${i} starts after sample ${i - 1} ends`)
  }
})
