import t from 'tap'
import { systemClock } from '../../../src/common/clock.js'
import { createManagement, hasScope, hashPersonalKey, maskPersonalKey } from '../../../src/management/index.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'

function management() {
  const db = openDatabase(':memory:')
  migrate(db, MANAGEMENT_MIGRATIONS)
  const m = createManagement(db, systemClock)
  const org = m.accounts.createOrganization('o')
  const user = m.accounts.createUser({ email: 'u@example.com' })
  return { m, db, user, org }
}

t.test('personal key hashing', async (t) => {
  t.test('stores only the sha256 and a mask', async (t) => {
    const { m, db, user } = management()
    const { key, record } = m.keys.create({ userId: user.id, label: 'k', scopes: ['*'] })
    const row = db.prepare('SELECT * FROM personal_api_keys').get() as Record<string, string>
    t.equal(row.secure_value, hashPersonalKey(key))
    t.match(row.secure_value, /^sha256\$[0-9a-f]{64}$/)
    t.notMatch(JSON.stringify(row), key, 'the key itself is not stored')
    t.equal(record.mask, `phx_…${key.slice(-4)}`)
    t.equal(maskPersonalKey('phx_abcdefgh'), 'phx_…efgh')
  })

  t.test('finds live keys and rejects revoked, unknown and malformed ones', async (t) => {
    const { m, user } = management()
    const { key, record } = m.keys.create({ userId: user.id, label: 'k', scopes: ['feature_flag:read'] })
    t.equal(m.keys.find(key)?.id, record.id)
    t.equal(m.keys.find(key + 'x'), null)
    t.equal(m.keys.find('phc_' + key.slice(4)), null, 'project key prefix is not a personal key')
    t.equal(m.keys.find('phx_' + 'a'.repeat(500)), null)
    t.ok(m.keys.revoke(record.id))
    t.equal(m.keys.find(key), null)
    t.notOk(m.keys.revoke(record.id), 'revoking twice reports nothing revoked')
  })

  t.test('refuses unknown scopes', async (t) => {
    const { m, user } = management()
    t.throws(() => m.keys.create({ userId: user.id, label: 'k', scopes: ['feature_flag:admin'] }), { code: 'invalid_input', attr: 'scopes' })
    t.throws(() => m.keys.create({ userId: user.id, label: 'k', scopes: [] }), { code: 'invalid_input', attr: 'scopes' })
  })
})

t.test('hasScope', async (t) => {
  const cases: Array<[string[], string, boolean, string]> = [
    [['*'], 'experiment:write', true, 'star grants everything'],
    [['feature_flag:read'], 'feature_flag:read', true, 'exact scope'],
    [['feature_flag:write'], 'feature_flag:read', true, 'write implies read'],
    [['feature_flag:read'], 'feature_flag:write', false, 'read does not imply write'],
    [['experiment:write'], 'feature_flag:read', false, 'other objects are not implied'],
    [[], 'project:read', false, 'no scopes'],
  ]
  for (const [granted, required, expected, description] of cases) {
    t.equal(hasScope(granted, required as never), expected, description)
  }
})

t.test('project access', async (t) => {
  const { m, user, org } = management()
  const project = m.accounts.createProject(org.id, 'p')
  const { key } = m.keys.create({ userId: user.id, label: 'k', scopes: ['*'] })
  const principal = m.auth.authenticate(`Bearer ${key}`)
  t.throws(() => m.auth.project(principal, String(project.id)), { code: 'not_found' }, 'not a member yet')
  m.accounts.addMember(org.id, user.id, 1)
  t.equal(m.auth.project(principal, String(project.id)).id, project.id)
  t.equal(m.auth.project(principal, '@current').id, project.id)
  t.throws(() => m.auth.project(principal, 'abc'), { code: 'not_found' })
  const scoped = m.keys.create({ userId: user.id, label: 'k', scopes: ['*'], scopedTeams: [project.id + 1] })
  t.throws(() => m.auth.project(m.auth.authenticate(`Bearer ${scoped.key}`), String(project.id)), { code: 'not_found' })
  t.throws(() => m.auth.authenticate(undefined), { code: 'not_authenticated' })
  t.throws(() => m.auth.authenticate('Basic abc'), { code: 'not_authenticated' })
  t.throws(() => m.auth.authenticate('Bearer phx_nope'), { code: 'invalid_personal_api_key' })
})
