/**
 * Keeps the folder rules of docs/architecture.md true: each folder may import only the folders listed
 * for it. A new import across a boundary fails here before it becomes a habit.
 */
import t from 'tap'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from '../helpers/server.js'

/** folder → folders it may import from (besides itself). */
const ALLOWED: Record<string, string[]> = {
  'src/common': [],
  'src/config': ['src/common'],
  'src/observability': ['src/common', 'src/config'],
  'src/schemas': ['src/common'],
  'src/storage': ['src/common', 'src/config', 'src/observability'],
  'src/geoip': ['src/common', 'src/config'],
  'src/management': ['src/common', 'src/config', 'src/storage', 'src/observability', 'src/schemas', 'src/flags'],
  'src/persons': ['src/common', 'src/config', 'src/storage', 'src/observability', 'src/geoip', 'src/schemas'],
  'src/flags': ['src/common', 'src/config', 'src/schemas', 'src/storage', 'src/observability', 'src/persons', 'src/geoip'],
  'src/ingestion': ['src/common', 'src/config', 'src/schemas', 'src/storage', 'src/observability', 'src/persons', 'src/pool', 'src/management', 'src/geoip'],
  'src/experiments': ['src/common', 'src/config', 'src/storage', 'src/observability', 'src/flags', 'src/management', 'src/schemas'],
  'src/pool': ['src/common', 'src/config', 'src/observability'],
  'src/logs': ['src/common', 'src/config', 'src/storage', 'src/observability'],
  'src/metrics': ['src/common', 'src/config', 'src/storage', 'src/observability'],
  'src/http': ['src/common', 'src/config', 'src/observability', 'src/schemas', 'src/management', 'src/ingestion', 'src/flags', 'src/experiments', 'src/persons', 'src/storage', 'src/pool', 'src/geoip', 'src/logs', 'src/metrics'],
  'src/cli': ['src/common', 'src/config', 'src/management', 'src/storage', 'src/ingestion', 'src/main.ts'],
  workers: ['src/common', 'src/config', 'src/schemas', 'src/ingestion', 'src/flags', 'src/persons', 'src/storage', 'src/observability', 'src/geoip', 'src/management', 'src/pool', 'src/experiments', 'src/logs', 'src/metrics'],
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : []
  })
}

function ownerOf(file: string): string | null {
  const rel = relative(ROOT, file)
  if (rel === 'src/main.ts') return 'src/main.ts'
  for (const folder of Object.keys(ALLOWED)) if (rel === folder || rel.startsWith(folder + '/')) return folder
  return null
}

t.test('imports respect the folder rules', async (t) => {
  const sources = [...files(join(ROOT, 'src')), ...files(join(ROOT, 'workers'))]
  t.ok(sources.length > 10, 'found the sources')
  const violations: string[] = []
  for (const file of sources) {
    const from = ownerOf(file)
    if (!from) {
      if (relative(ROOT, file) !== 'src/main.ts') violations.push(`${relative(ROOT, file)} is in no known folder`)
      continue
    }
    if (from === 'src/main.ts') continue
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(/^(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]/gm)) {
      const target = ownerOf(resolve(dirname(file), m[1].replace(/\.js$/, '.ts')))
      if (!target || target === from) continue
      if (!ALLOWED[from].includes(target)) violations.push(`${relative(ROOT, file)} imports ${m[1]} (${target})`)
    }
  }
  t.same(violations, [], 'no import crosses a boundary it should not')
})
