// Runs `tsc` when dist/ is missing or older than any source file, so `npm start` works on a fresh clone.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const stamp = join(root, 'dist', '.build-stamp')

function newestMtime(dir) {
  if (!existsSync(dir)) return 0
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

const sources = Math.max(newestMtime(join(root, 'src')), newestMtime(join(root, 'workers')), statSync(join(root, 'tsconfig.json')).mtimeMs)
const force = process.argv.includes('--force')
if (force || !existsSync(stamp) || statSync(stamp).mtimeMs < sources) {
  process.stderr.write('building skylark (tsc)…\n')
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', root], { stdio: 'inherit' })
  writeFileSync(stamp, new Date().toISOString() + '\n')
}
