/** The README documents every configuration variable and every error code the service can answer. */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CATALOGUE } from '../../src/common/errors.js'
import { VARIABLES } from '../../src/config/index.js'
import { ROOT } from '../helpers/server.js'

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')

t.test('README configuration table lists every variable with its default', async (t) => {
  for (const v of VARIABLES) {
    const def = 'default' in v ? `\`${v.default}\`` : 'unset'
    t.match(readme, `| \`${v.name}\` | ${def} |`, v.name)
  }
})

t.test('README error table lists every catalogue code with its status', async (t) => {
  for (const [code, entry] of Object.entries(CATALOGUE)) {
    t.match(readme, new RegExp(`\\| ${entry.status} \\| \`${entry.type}\` \\| [^\\n]*\`${code}\``), code)
  }
})

t.test('npm start, the skylark command and the benchmarks run the server with the same Node flags and environment', async (t) => {
  const { SERVER_NODE_ARGS, SERVER_PROCESS_ENV } = (await import(join(ROOT, 'bench', 'lib', 'servers.mjs'))) as {
    SERVER_NODE_ARGS: string[]
    SERVER_PROCESS_ENV: Record<string, string>
  }
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  const shebang = readFileSync(join(ROOT, 'bin', 'skylark.js'), 'utf8').split('\n')[0]
  const flags = SERVER_NODE_ARGS.join(' ')
  const env = Object.entries(SERVER_PROCESS_ENV).map(([name, value]) => `${name}=${value}`).join(' ')
  t.ok(flags.length > 0 && env.length > 0)
  t.match(start, `&& ${env} node ${flags} bin/skylark.js serve`)
  t.equal(shebang, `#!/usr/bin/env -S ${env} node ${flags}`)
})
