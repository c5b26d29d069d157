/** Temp folders for tests; `testDir` removes its folder when the test ends, so runs leave nothing in /tmp. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function tempDir(prefix = 'skylark-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** A new temp folder, removed with everything in it when `t` (a tap test, or tap itself) ends. */
export function testDir(t: { teardown(fn: () => void): void }, prefix = 'skylark-test-'): string {
  const dir = tempDir(prefix)
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}
