import { spawnSync } from 'node:child_process'
import t from 'tap'

t.test('a process a test starts gets no test-runner loader in its NODE_OPTIONS', async (t) => {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(process.env.NODE_OPTIONS ?? "")'], { encoding: 'utf8' })
  t.equal(child.status, 0)
  t.notMatch(child.stdout, /processinfo|@tapjs/, 'tap tracks no child (plain-children.mjs)')
  t.ok(process.execArgv.some((arg) => arg.includes('processinfo')), 'while the test process itself runs under tap’s processinfo')
})
