import t from 'tap'
import { join } from 'node:path'
import { runCli, serverFor, tempDir } from '../../helpers/server.js'

t.test('skylark CLI', async (t) => {
  const dataDir = tempDir()
  const env = { DATA_DIR: dataDir }

  t.test('bootstrap --json is idempotent and hands out a fresh key each time', async (t) => {
    const first = await runCli(['bootstrap', '--json'], env)
    const second = await runCli(['bootstrap', '--json', '--data-dir', dataDir])
    t.equal(first.code, 0, first.stderr)
    const a = JSON.parse(first.stdout)
    const b = JSON.parse(second.stdout)
    t.same(Object.keys(a).sort(), ['organization_id', 'personal_api_key', 'project_api_key', 'project_id', 'project_secret_api_key'])
    t.equal(a.project_id, b.project_id)
    t.equal(a.organization_id, b.organization_id)
    t.equal(a.project_api_key, b.project_api_key)
    t.equal(a.project_secret_api_key, b.project_secret_api_key, 'the project secret key is kept, not renewed')
    t.match(a.project_secret_api_key, /^phs_[A-Za-z0-9]{43}$/)
    t.not(a.personal_api_key, b.personal_api_key)
    t.match(a.personal_api_key, /^phx_[A-Za-z0-9]{43}$/)
  })

  const server = await serverFor(t, { dataDir })

  t.test('keys create --scopes makes a key limited to those scopes', async (t) => {
    const created = await runCli(['keys', 'create', '--scopes', 'feature_flag:read', '--json'], env)
    t.equal(created.code, 0, created.stderr)
    const { personal_api_key: key, mask } = JSON.parse(created.stdout)
    t.equal(mask, `phx_…${key.slice(-4)}`)
    const denied = await server.api('GET', '/api/projects/', undefined, key)
    t.equal(denied.status, 403)
    t.same(denied.body, {
      type: 'authentication_error',
      code: 'permission_denied',
      detail: "API key missing required scope 'project:read'",
      attr: null,
    })
  })

  t.test('a write scope implies the read scope', async (t) => {
    const created = await runCli(['keys', 'create', '--scopes', 'project:write', '--json'], env)
    const { personal_api_key: key } = JSON.parse(created.stdout)
    t.equal((await server.api('GET', '/api/projects/', undefined, key)).status, 200)
  })

  t.test('keys revoke makes the key fail with 401', async (t) => {
    const created = JSON.parse((await runCli(['keys', 'create', '--scopes', '*', '--json'], env)).stdout)
    t.equal((await server.api('GET', '/api/projects/', undefined, created.personal_api_key)).status, 200)
    const revoked = await runCli(['keys', 'revoke', created.id], env)
    t.equal(revoked.code, 0, revoked.stderr)
    const res = await server.api('GET', '/api/projects/', undefined, created.personal_api_key)
    t.equal(res.status, 401)
    t.equal(res.body.code, 'invalid_personal_api_key')
  })

  t.test('keys list shows masks, never keys', async (t) => {
    const list = await runCli(['keys', 'list', '--json'], env)
    const keys = JSON.parse(list.stdout) as Array<{ mask: string }>
    t.ok(keys.length >= 3)
    t.notMatch(list.stdout, /phx_[A-Za-z0-9]{20,}/)
  })

  t.test('projects create adds a project the running server serves at once', async (t) => {
    const created = await runCli(['projects', 'create', '--name', 'Second', '--json'], env)
    t.equal(created.code, 0, created.stderr)
    const project = JSON.parse(created.stdout)
    t.match(project.api_token, /^phc_/)
    const res = await server.api('GET', `/api/projects/${project.id}/`)
    t.equal(res.status, 200)
    t.equal(res.body.name, 'Second')
    t.notOk(res.text.includes(project.secret_api_token), 'the HTTP API never shows the secret key')
    // Its secret key reads its definitions at once (the server notices the new project).
    const definitions = await server.request('GET', `/flags/definitions?token=${project.api_token}`, { headers: { authorization: `Bearer ${project.secret_api_token}` } })
    t.equal(definitions.status, 200)
    const listed = JSON.parse((await runCli(['projects', 'list', '--json'], env)).stdout)
    t.equal(listed.find((p: { id: number }) => p.id === project.id).secret_api_token, project.secret_api_token, 'projects list shows it again')
  })

  t.test('roles create makes a role visible in the API', async (t) => {
    const created = await runCli(['roles', 'create', '--name', 'Engineers', '--json'], env)
    t.equal(created.code, 0, created.stderr)
    const res = await server.api('GET', '/api/organizations/@current/roles/')
    t.equal(res.status, 200)
    t.ok(res.body.results.some((r: { name: string }) => r.name === 'Engineers'))
  })

  t.test('management backup copies management.db while the server runs, and a server on the copy serves the same flags and keys', async (t) => {
    const projectId = server.boot.project_id
    const flag = await server.api('POST', `/api/projects/${projectId}/feature_flags/`, { key: 'backed-up', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
    t.equal(flag.status, 201, flag.text)
    const copy = tempDir()
    const file = join(copy, 'management.db')
    const res = await runCli(['management', 'backup', '--to', file, '--json'], env)
    t.equal(res.code, 0, res.stderr)
    t.ok(JSON.parse(res.stdout).pages > 0)
    const again = await runCli(['management', 'backup', '--to', file], env)
    t.equal(again.code, 2, 'a backup never overwrites a file')
    t.match(again.stderr, /exists/)

    const node = await serverFor(t, { dataDir: copy })
    const flags = await node.api('GET', `/api/projects/${projectId}/feature_flags/`, undefined, server.boot.personal_api_key!)
    t.equal(flags.status, 200, 'the personal key works on the copy')
    t.same(flags.body.results.map((f: { key: string }) => f.key), ['backed-up'])
    const decide = await node.request('POST', '/decide/?v=3', { body: { token: server.boot.project_api_key, distinct_id: 'someone' } })
    t.equal(decide.status, 200)
    t.equal(decide.body.featureFlags['backed-up'], true, 'the project key and the flag work on the copy')
  })

  t.test('unknown commands and bad arguments exit 2 with usage', async (t) => {
    const res = await runCli(['frobnicate'], env)
    t.equal(res.code, 2)
    t.match(res.stderr, /Usage: skylark/)
    const inherited = await runCli(['constructor'], env)
    t.equal(inherited.code, 2, 'a name only Object.prototype has is no command either')
    t.match(inherited.stderr, /unknown command: constructor/)
    const bad = await runCli(['keys', 'create'], env)
    t.equal(bad.code, 2)
  })

  t.test('an invalid configuration is reported in one message', async (t) => {
    const res = await runCli(['bootstrap'], { DATA_DIR: dataDir, PORT: 'x', LOG_LEVEL: 'nope' })
    t.equal(res.code, 1)
    t.match(res.stderr, /Invalid configuration/)
    t.match(res.stderr, /PORT/)
    t.match(res.stderr, /LOG_LEVEL/)
  })
})
