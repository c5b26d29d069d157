#!/usr/bin/env node
// Re-renders the Markdown table and SVG chart of a results file and re-judges its targets:
// `node bench/render.mjs bench/results/<run>.json` writes <run>.md and <run>.svg beside it and the new
// judgement into the file itself, so the three agree.
import { readFileSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { renderMarkdown, renderSvg } from './lib/report.mjs'
import { evaluateTargets } from './lib/targets.mjs'

const file = process.argv[2]
if (!file || !file.endsWith('.json')) {
  process.stderr.write('usage: node bench/render.mjs bench/results/<run>.json\n')
  process.exit(2)
}
const report = JSON.parse(readFileSync(file, 'utf8'))
report.targets = evaluateTargets(report)
writeFileSync(file, JSON.stringify(report, null, 2) + '\n')
const stem = file.slice(0, -'.json'.length)
writeFileSync(`${stem}.md`, renderMarkdown(report, `${basename(stem)}.svg`))
writeFileSync(`${stem}.svg`, renderSvg(report))
process.stdout.write(`${stem}.md, ${stem}.svg\n`)
