/**
 * Early access features, below HTTP: Django's slugify and URL rules as PostHog applies them, the enrollment
 * filters each stage leaves on the flag, the field order of PostHog's serializers, and the service on a real
 * management.db (the public form follows the flag's key; a failed flag write stores no feature).
 */
import t from 'tap'
import { systemClock } from '../../../src/common/clock.js'
import { createManagement } from '../../../src/management/index.js'
import { isDjangoUrl, slugify, withEnrollment } from '../../../src/management/early-access/index.js'
import { readCreate, readUpdate } from '../../../src/management/early-access/input.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'
import { refusal } from '../../helpers/refusal.js'

function management() {
  const db = openDatabase(':memory:')
  migrate(db, MANAGEMENT_MIGRATIONS)
  const m = createManagement(db, systemClock)
  const org = m.accounts.createOrganization('o')
  const user = m.accounts.createUser({ email: 'u@example.com', first_name: 'Ada', last_name: 'Lovelace' })
  m.accounts.addMember(org.id, user.id, 15)
  const project = m.accounts.createProject(org.id, 'p')
  return { m, db, user, project }
}

t.test("a feature's flag key is Django's slug of its name", async (t) => {
  const cases: Array<[string, string]> = [
    ['Hick bondoogling', 'hick-bondoogling'],
    ['  Ünïcode -- Feature!! _x_ ', 'unicode-feature-_x'],
    ['ﬁle Ωmega', 'file-mega'],
    ['a\x1cb\tc', 'a-b-c'],
    ['___', ''],
    ['Already-a_slug', 'already-a_slug'],
  ]
  for (const [name, slug] of cases) t.equal(slugify(name), slug, JSON.stringify(name))
})

t.test("documentation URLs follow Django's URLValidator", async (t) => {
  for (const url of ['https://docs.example.com/f?v=2#start', 'http://localhost:8000/x', 'ftp://10.0.0.1/file', 'https://[::1]/', 'HTTPS://Example.COM', 'https://xn--bcher-kva.example/']) {
    t.ok(isDjangoUrl(url), url)
  }
  for (const url of ['javascript:alert(1)', 'example.com', 'https://nodot', 'mailto:a@b.co', 'https://exa mple.com', 'https://-bad.com', 'http://x.com/\n', `https://x.io/${'a'.repeat(2048)}`]) {
    t.notOk(isDjangoUrl(url), url)
  }
})

t.test('enrollment replaces the legacy super condition and keeps everything else', async (t) => {
  const filters = { groups: [{ properties: [], rollout_percentage: 5 }], payloads: { true: '1' }, super_groups: [{ properties: [] }] }
  t.same(withEnrollment(filters, true), { groups: filters.groups, payloads: filters.payloads, feature_enrollment: true })
  t.same(withEnrollment({ ...filters, feature_enrollment: true }, null), { groups: filters.groups, payloads: filters.payloads, feature_enrollment: null })
  t.same(filters.super_groups, [{ properties: [] }], 'the stored filters are not modified')
})

t.test("bodies are read in PostHog's serializer order, the first broken field answered", async (t) => {
  t.match(refusal(() => readCreate({ name: 'x', documentation_url: 'nope' })), { code: 'required', attr: 'stage' }, 'stage comes before documentation_url')
  t.match(refusal(() => readCreate({ name: '', stage: 'nope' })), { code: 'blank', attr: 'name' })
  t.match(refusal(() => readCreate({ name: 'x', stage: 1 })), { code: 'invalid_choice', detail: '"1" is not a valid choice.' })
  t.match(refusal(() => readCreate({ name: 'x', stage: 'beta', _create_in_folder: {} })), { code: 'invalid', detail: 'Not a valid string.', attr: '_create_in_folder' })
  t.same(readCreate({ name: 7, stage: 'beta', feature_flag_id: '0' }), { name: '7', stage: 'beta', payload: {}, feature_flag_id: null }, 'numbers are names; flag 0 is no flag, as PostHog tests truthiness')
  t.same(readCreate({ name: 'x', stage: 'beta', feature_flag_id: ' 12 ' }).feature_flag_id, 12)
  t.same(readUpdate({ rollout_to_all: 'yes', payload: 0 }), { payload: {}, rollout_to_all: true }, 'read from the raw body by truthiness')
  t.same(readUpdate({ rollout_to_all: [] }), { rollout_to_all: false })
  t.same(readUpdate(null), { rollout_to_all: false }, 'an empty body changes nothing')
})

t.test('the public form names the flag by its current key and the assignee by name', async (t) => {
  const { m, user, project } = management()
  const feature = m.earlyAccess.create(project, { name: 'Sprocket', stage: 'beta' }, user.id)
  m.featureFlags.update(project, feature.feature_flag!.id, { key: 'sprocket-v2' }, user.id)
  t.same(m.earlyAccess.publicList(project.id, ['beta']), [
    { id: feature.id, name: 'Sprocket', description: '', stage: 'beta', documentationUrl: '', flagKey: 'sprocket-v2', payload: {}, assignee: { type: 'user', name: 'Ada Lovelace' } },
  ])
  const nameless = m.accounts.createUser({ email: 'x@example.com' })
  m.accounts.addMember(project.organization_id, nameless.id, 1)
  m.earlyAccess.update(project, feature.id, { assignee: { type: 'user', id: nameless.id } }, user.id)
  t.equal(m.earlyAccess.publicList(project.id, ['beta'])[0]!.assignee, null, 'a user without a name is no assignee, rather than a blank one')
  t.same(m.featureFlags.get(project, feature.feature_flag!.id, user.id).features.map((f) => f.id), [feature.id])
})

t.test('a flag write that fails stores no feature', async (t) => {
  const { m, db, user, project } = management()
  m.featureFlags.create(project, { key: 'taken' }, user.id)
  t.throws(() => m.earlyAccess.create(project, { name: 'Taken', stage: 'beta' }, user.id))
  t.equal((db.prepare('SELECT count(*) AS n FROM early_access_features').get() as { n: number }).n, 0)
  t.equal((db.prepare('SELECT count(*) AS n FROM feature_flags').get() as { n: number }).n, 1)
})
