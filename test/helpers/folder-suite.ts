/**
 * One process for a folder of test files. A tap test process spends ≈2 s starting (tap's processinfo loader and
 * tsx sit on every module load) before its first test, more than most unit files take to run; imported into one
 * process, a folder's files share that start-up and the modules they import. Their top-level `t.test` calls queue
 * on tap's root test in file-name order, as they would one file after the other. A file still runs alone with
 * `npx tap <file>`.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Imports every `*.test.ts` directly in `folder` that `only` keeps, in name order. Two suites over one folder
 * share tap's two jobs: tap starts files in name order, and a long last one would run alone at the end.
 */
export async function importTestFiles(folder: URL, only: (name: string) => boolean = () => true): Promise<void> {
  const dir = fileURLToPath(folder)
  const files = readdirSync(dir).filter((name) => name.endsWith('.test.ts') && only(name)).sort()
  if (files.length === 0) throw new Error(`no test files in ${dir}`)
  for (const name of files) await import(join(dir, name))
}
