#!/usr/bin/env node
// Flame graphs of V8 CPU profiles: `node bench/flame.mjs <file.cpuprofile | folder>...` writes <file>.svg
// beside each profile (a folder: every .cpuprofile in it), function locations relative to this folder.
// `npm run bench -- --cpu-prof` makes them for the server's threads by itself (next to its results).
import { readdirSync, statSync } from 'node:fs'
import { basename, join } from 'node:path'
import { writeFlameGraph } from './lib/flame.mjs'

const inputs = process.argv.slice(2)
if (inputs.length === 0) {
  process.stderr.write('usage: node bench/flame.mjs <file.cpuprofile | folder>...\n')
  process.exit(2)
}
const files = inputs.flatMap((input) =>
  statSync(input).isDirectory()
    ? readdirSync(input)
        .filter((f) => f.endsWith('.cpuprofile'))
        .sort()
        .map((f) => join(input, f))
    : [input],
)
for (const file of files) {
  const svg = file.replace(/\.cpuprofile$/, '') + '.svg'
  writeFlameGraph(file, svg, { root: process.cwd(), title: basename(file) })
  process.stdout.write(`${svg}\n`)
}
