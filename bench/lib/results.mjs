// Writes a run's results: <stem>.json (the report), .md and .svg (bench/lib/report.mjs), and with --cpu-prof a
// flame graph of each server thread in <stem>-flames/. A stem already taken gets -2, -3…
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { writeFlameGraph } from './flame.mjs'
import { threadLabel } from './profile.mjs'
import { say } from './progress.mjs'
import { renderMarkdown, renderSvg } from './report.mjs'

export function writeResults(report, outDir, buildRoot) {
  mkdirSync(outDir, { recursive: true })
  let stem = report.runId
  for (let n = 2; existsSync(join(outDir, `${stem}.json`)); n++) stem = `${report.runId}-${n}`
  const write = (ext, text) => {
    const tmp = join(outDir, `${stem}.${ext}.tmp`)
    writeFileSync(tmp, text)
    renameSync(tmp, join(outDir, `${stem}.${ext}`))
  }
  writeFlameGraphs(report, stem, outDir, buildRoot)
  write('json', JSON.stringify(report, null, 2) + '\n')
  write('md', renderMarkdown(report, `${stem}.svg`))
  write('svg', renderSvg(report))
  say(`\nresults: ${relative(process.cwd(), join(outDir, stem))}.{json,md,svg}  (${report.durationS} s)`)
  process.stdout.write('\n' + renderMarkdown(report, `${stem}.svg`))
}

/** With --cpu-prof: a flame graph of each server thread's profile in <stem>-flames/, named in the report. */
function writeFlameGraphs(report, stem, outDir, buildRoot) {
  for (const s of report.scenarios) {
    // Scenarios served by one server share its profile entries: each thread's graph is written once.
    for (const p of s.profile ?? []) {
      if (p.flame || !existsSync(p.path)) continue
      // The profile's folder is named after its server (run.mjs, serverFor).
      p.flame = `${stem}-flames/${basename(dirname(p.path))}.thread${p.thread}${p.role ? `-${p.role}` : ''}.svg`
      writeFlameGraph(p.path, join(outDir, p.flame), { root: buildRoot, title: `${s.serverKey}, ${threadLabel(p)} (${report.runId})` })
    }
  }
}
