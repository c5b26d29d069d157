import { spawnSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import t from 'tap'
import { ROOT } from '../helpers/server.js'

t.test('a process a test starts gets no test-runner loader in its NODE_OPTIONS', async (t) => {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(process.env.NODE_OPTIONS ?? "")'], { encoding: 'utf8' })
  t.equal(child.status, 0)
  t.notMatch(child.stdout, /processinfo|@tapjs/, 'tap tracks no child (plain-children.mjs)')
  t.ok(process.execArgv.some((arg) => arg.includes('processinfo')), 'while the test process itself runs under tap’s processinfo')
})

t.test('every test file runs in `npm test`: one of its tap runs lists it, or a listed file imports its folder', async (t) => {
  // `npm test` runs tap more than once: `tap <files>` (test/alone, one at a time) and `tap` (package.json's include).
  const script = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.test as string
  const runs = [...script.matchAll(/(?<=^|[\s(;&])tap((?:\s+[^\s;&|)]+)*)/g)].map((m) => m[1].trim().split(/\s+/).filter((arg) => arg && !arg.startsWith('-')))
  t.equal(runs.length, 2, `npm test runs tap ${runs.length} times`)
  const listed = runs.flatMap((files) => spawnSync('npx', ['tap', 'list', ...files], { cwd: ROOT, encoding: 'utf8' }).stdout.trim().split('\n'))
  t.ok(listed.length > 20, `tap lists ${listed.length} files`)
  const imported = new Set<string>()
  for (const file of listed) {
    const folder = /importTestFiles\(new URL\('\.\/([^']+)\/'/.exec(readFileSync(join(ROOT, file), 'utf8'))?.[1]
    if (folder) imported.add(join(dirname(file), folder))
  }
  t.ok(imported.size >= 10, `${imported.size} folders run as one process each`)
  const all = (readdirSync(join(ROOT, 'test'), { recursive: true }) as string[]).map((f) => join('test', f)).filter((f) => f.endsWith('.test.ts'))
  const missed = all.filter((file) => !listed.includes(file) && !imported.has(dirname(file)))
  t.same(missed, [], 'no test file is left out')
})
