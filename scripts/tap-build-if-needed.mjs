// Runs `tap build` when tap's test class was built for other plugins than package.json names. tap rebuilds it by
// itself, but only after it has worked out the loaders of the run it is starting: on a fresh install (every CI
// run) each test process of that first run still loaded ts-node and tap's mock loader beside tsx, ≈2.5× the
// start-up cost of a test file (docs/architecture.md, "tap runs two test processes at a time").
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(join(root, 'package.json'))
const wanted = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).tap?.plugin ?? []
const built = /signature = `([^`]*)`/.exec(readFileSync(require.resolve('@tapjs/test/test-built'), 'utf8'))
const plugins = new Set(built ? built[1].split('\n') : [])
const stale = !built || wanted.some((p) => (p.startsWith('!') ? plugins.has(p.slice(1)) : !plugins.has(p)))
if (stale) {
  process.stderr.write('building tap for the plugins in package.json…\n')
  execFileSync(process.execPath, [join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs'), 'build'], { stdio: 'inherit', cwd: root })
}
