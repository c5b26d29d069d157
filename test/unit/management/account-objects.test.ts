import t from 'tap'
import { systemClock } from '../../../src/common/clock.js'
import { AppError } from '../../../src/common/errors.js'
import {
  MembershipLevel,
  bounceRule,
  createManagement,
  organizationBasic,
  organizationObject,
  organizationSlugs,
  parseProjectPatch,
  projectObject,
  projectUuid,
  requireProjectAdmin,
  teamBasic,
  userObject,
  type ProjectFacts,
} from '../../../src/management/index.js'
import { migrate, openDatabase } from '../../../src/storage/index.js'
import { MANAGEMENT_MIGRATIONS } from '../../../src/storage/sqlite/migrations/management.js'

function accounts() {
  const db = openDatabase(':memory:')
  migrate(db, MANAGEMENT_MIGRATIONS)
  const m = createManagement(db, systemClock)
  const org = m.accounts.createOrganization('Acme Inc.')
  const user = m.accounts.createUser({ email: 'ada@example.com', first_name: 'Ada' })
  m.accounts.addMember(org.id, user.id, MembershipLevel.owner)
  const project = m.accounts.createProject(org.id, 'Web')
  return { m, org, user, project }
}

const facts: ProjectFacts = {
  ingested: (id) => id === 1,
  groupTypes: () => [{ group_type: 'company', group_type_index: 0, name_singular: null, name_plural: null }],
}

t.test('a project is answered as the team it also is', async (t) => {
  const { project, org } = accounts()
  const uuid = projectUuid(project)
  t.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a version 5 UUID')
  t.equal(projectUuid(project), uuid, 'stable')
  t.not(projectUuid({ ...project, id: project.id + 1 }), uuid, 'distinct per project')
  t.same(teamBasic(project, facts), {
    id: project.id, uuid, organization: org.id, project_id: project.id, api_token: project.api_token, name: 'Web',
    completed_snippet_onboarding: false, has_completed_onboarding_for: null, ingested_event: true, is_demo: false, timezone: 'UTC', access_control: false,
  })
  const full = projectObject({ ...project, anonymize_ips: 1 }, MembershipLevel.member, facts)
  t.match(full, { anonymize_ips: true, effective_membership_level: 1, user_access_level: 'member', has_group_types: true, created_at: project.created_at })
  t.notOk('secret_api_token' in full, 'the secret key is never answered')
})

t.test('organisations get the slug of their name, a later namesake a suffixed one', async (t) => {
  const { m, org, user, project } = accounts()
  const namesake = m.accounts.createOrganization('ACME inc')
  const slugs = organizationSlugs(m.accounts.organizations())
  t.equal(slugs.get(org.id), 'acme-inc')
  t.equal(slugs.get(namesake.id), `acme-inc-${namesake.id.slice(0, 8)}`)
  t.equal(organizationSlugs([{ id: 'x', name: 'Łódź ☃', created_at: '' }]).get('x'), 'odz')
  t.match(organizationBasic(org, 'acme-inc', 15), { id: org.id, slug: 'acme-inc', membership_level: 15, is_active: true })
  const full = organizationObject(org, { facts, slug: 'acme-inc', membershipLevel: 15, memberCount: 1, projects: [project] })
  t.same(full.projects, [{ id: project.id, organization_id: org.id, name: 'Web' }])
  t.same(full.teams, [teamBasic(project, facts)])
  t.equal(full.updated_at, org.created_at)
  const me = userObject(user, { facts, team: project, organization: full, organizations: [] })
  t.match(me, { uuid: user.uuid, email: 'ada@example.com', first_name: 'Ada', is_staff: false, team: { id: project.id }, organization: { id: org.id }, is_organization_first_user: true })
  t.equal(userObject(user, { facts, team: null, organization: null, organizations: [] }).team, null)
})

t.test('a project PATCH body, field by field as DRF reads it', async (t) => {
  const { m, org, project } = accounts()
  m.accounts.createProject(org.id, 'Mobile')
  const refusal = (body: unknown) => {
    try {
      parseProjectPatch(body, project, m.accounts)
      return null
    } catch (error) {
      return error as AppError
    }
  }
  t.same(parseProjectPatch({ name: ' Shop ', anonymize_ips: 'on', uuid: 'ignored', nonsense: 1 }, project, m.accounts), { name: 'Shop', anonymize_ips: true })
  t.same(parseProjectPatch({ name: 'Web' }, project, m.accounts), { name: 'Web' }, 'its own name')
  t.match(refusal({ name: ' mobile ' }), { status: 409, code: 'conflict', detail: 'There is already a project called "mobile" in this organization. Choose a different name.' })
  t.match(refusal({ name: 5 }), null, 'a number is a string to DRF')
  t.match(refusal({ name: true }), { code: 'invalid', attr: 'name', detail: 'Not a valid string.' })
  t.match(refusal({ anonymize_ips: 2 }), { code: 'invalid', attr: 'anonymize_ips' })
  t.match(refusal([]), { code: 'invalid', detail: 'Invalid data. Expected a dictionary, but got list.' })
  const filters = [
    { key: 'email', operator: 'not_icontains', value: '@acme.com', type: 'person' },
    { key: '$host', operator: 'is_not', value: ['localhost', '127.0.0.1'], type: 'event' },
  ]
  t.same(parseProjectPatch({ test_account_filters: filters }, project, m.accounts), { test_account_filters: JSON.stringify(filters) }, 'event and person filters, kept as given')
  t.same(parseProjectPatch({ test_account_filters: [] }, project, m.accounts), { test_account_filters: '[]' })
  const invalid = (value: unknown, why: string) =>
    t.match(refusal({ test_account_filters: value }), { code: 'invalid', attr: 'test_account_filters', detail: `Must provide an array of valid property filters. ${why}` }, JSON.stringify(value))
  invalid('email', 'Expected a list, got str.')
  invalid(null, 'Expected a list, got NoneType.')
  invalid([{ key: 'email' }], 'skylark keeps event, person and cohort filters here, not null (test_account_filters[0]).')
  invalid([filters[0], { key: 'x', value: 3, type: 'group', group_type_index: 0 }], 'skylark keeps event, person and cohort filters here, not "group" (test_account_filters[1]).')
  const cohort = { key: 'id', value: 3, type: 'cohort', operator: 'not_in' }
  t.same(parseProjectPatch({ test_account_filters: [cohort] }, project, m.accounts), { test_account_filters: JSON.stringify([cohort]) }, 'a cohort, not_in')
  invalid([{ key: 'id', value: 'internal', type: 'cohort' }], "A cohort filter's value is a cohort id (test_account_filters[0]).")
  invalid([{ key: 'id', value: 3, type: 'cohort', operator: 'exact' }], "A cohort filter's operator is in or not_in (test_account_filters[0]).")
  invalid([{ type: 'person', value: 'x' }], 'A filter needs a key (test_account_filters[0]).')
  invalid([{ key: 'email', operator: 'sounds_like', type: 'person' }], 'Unknown operator "sounds_like" (test_account_filters[0]).')
  invalid([{ key: 'email', value: { a: 1 }, type: 'person' }], "A filter's value must be a scalar or a list of them (test_account_filters[0]).")
  invalid([5], 'Every filter must be an object (test_account_filters[0]).')
  t.same(parseProjectPatch({ timezone: 'Europe/Berlin' }, project, m.accounts), { timezone: 'Europe/Berlin' })
  t.same(parseProjectPatch({ timezone: 'Asia/Kolkata' }, project, m.accounts), { timezone: 'Asia/Kolkata' }, 'a current name Intl lists under its old one (Asia/Calcutta)')
  for (const [value, shown] of [['Europe/Berlinn', 'Europe/Berlinn'], ['europe/berlin', 'europe/berlin'], ['', ''], ['+01:00', '+01:00'], [5, '5'], [true, 'True'], [['UTC'], "['UTC']"]] as const) {
    t.match(refusal({ timezone: value }), { code: 'invalid_choice', attr: 'timezone', detail: `"${shown}" is not a valid choice.` }, JSON.stringify(value))
  }
  t.match(refusal({ timezone: null }), { code: 'null', attr: 'timezone', detail: 'This field may not be null.' })
  t.doesNotThrow(() => requireProjectAdmin({ name: 'x' }, MembershipLevel.admin))
  t.doesNotThrow(() => requireProjectAdmin({}, MembershipLevel.member))
  let denied: unknown = null
  try {
    requireProjectAdmin({ anonymize_ips: false }, MembershipLevel.member)
  } catch (error) {
    denied = error
  }
  t.match(denied, { status: 403, detail: 'Only project admins can modify these settings: anonymize_ips' })
  t.throws(() => requireProjectAdmin({ timezone: 'UTC' }, MembershipLevel.member), { message: 'Only project admins can modify these settings: timezone' })
})

t.test("a project's modifiers: the bounce rate's two, merged into what the project has, as TeamSerializer.validate_modifiers", async (t) => {
  const { m, project } = accounts()
  const patch = (body: unknown, on = project) => parseProjectPatch(body, on, m.accounts)
  const refusal = (body: unknown) => {
    try {
      patch(body)
      return null
    } catch (error) {
      return error as AppError
    }
  }
  t.same(bounceRule(project), { seconds: 10, mode: 'count_pageviews' }, "PostHog's defaults until set")
  t.same(projectObject(project, 8, facts).modifiers, null)
  const set = patch({ modifiers: { bounceRateDurationSeconds: 30 } })
  t.same(set, { modifiers: '{"bounceRateDurationSeconds":30}' })
  const updated = m.accounts.updateProject(project.id, set)
  t.same(bounceRule(updated), { seconds: 30, mode: 'count_pageviews' })
  t.same(projectObject(updated, 8, facts).modifiers, { bounceRateDurationSeconds: 30 })
  const merged = m.accounts.updateProject(project.id, patch({ modifiers: { bounceRatePageViewMode: 'uniq_page_screen_autocaptures' } }, updated))
  t.same(projectObject(merged, 8, facts).modifiers, { bounceRateDurationSeconds: 30, bounceRatePageViewMode: 'uniq_page_screen_autocaptures' }, 'a PATCH adds to what was set')
  t.same(bounceRule(merged), { seconds: 30, mode: 'uniq_page_screen_autocaptures' })
  const unset = m.accounts.updateProject(project.id, patch({ modifiers: { bounceRateDurationSeconds: null } }, merged))
  t.same(bounceRule(unset), { seconds: 10, mode: 'uniq_page_screen_autocaptures' }, 'a key set to null falls back to the default')
  t.same(bounceRule(m.accounts.updateProject(project.id, patch({ modifiers: { bounceRateDurationSeconds: 1.5 } }, unset))).seconds, 1.5, 'a fraction of a second is kept')
  const cleared = m.accounts.updateProject(project.id, patch({ modifiers: null }, unset))
  t.same(projectObject(cleared, 8, facts).modifiers, null, 'null clears them all')
  t.same(bounceRule(cleared), { seconds: 10, mode: 'count_pageviews' })

  t.match(refusal({ modifiers: [] }), { code: 'invalid', attr: 'modifiers', detail: 'Must provide a dictionary or None.' })
  t.match(refusal({ modifiers: 'x' }), { code: 'invalid', attr: 'modifiers', detail: 'Must provide a dictionary or None.' })
  for (const seconds of ['30', true, {}]) {
    t.match(refusal({ modifiers: { bounceRateDurationSeconds: seconds } }), { code: 'invalid', attr: 'modifiers__bounceRateDurationSeconds', detail: 'Must be a number.' }, JSON.stringify(seconds))
  }
  for (const seconds of [0.5, 0, -1, 120.5, 121]) {
    t.match(refusal({ modifiers: { bounceRateDurationSeconds: seconds } }), { code: 'invalid', attr: 'modifiers__bounceRateDurationSeconds', detail: 'Must be between 1 and 120 seconds.' }, String(seconds))
  }
  t.same(patch({ modifiers: { bounceRateDurationSeconds: 120 } }), { modifiers: '{"bounceRateDurationSeconds":120}' }, '120 itself is allowed')
  t.match(refusal({ modifiers: { bounceRatePageViewMode: 'count_screens' } }), { code: 'invalid', attr: 'modifiers', detail: 'Invalid modifier key.' })
  t.match(refusal({ modifiers: { personsOnEventsMode: 'disabled' } }), {
    code: 'unsupported',
    attr: 'modifiers__personsOnEventsMode',
    detail: 'skylark keeps only bounceRateDurationSeconds and bounceRatePageViewMode of the modifiers.',
  })
})
