import t from 'tap'
import { MembershipLevel } from '../../../src/management/index.js'
import { flagServer, simpleFlag } from './fixture.js'

t.test('cross-project isolation', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server, flags } = f

  const flag = (await server.api('POST', flags, simpleFlag('private'))).body
  const cohort = (await server.api('POST', `${f.base}/cohorts/`, { name: 'Private cohort' })).body
  const otherOrg = f.m.accounts.createOrganization('Other org')
  const stranger = f.member(MembershipLevel.owner, ['*'], otherOrg.id)
  const strangerProject = f.m.accounts.createProject(otherOrg.id, 'Theirs')

  t.test('a key of another organisation gets 404 on every flag route, read and write', async (t) => {
    const role = f.m.roles.create(f.orgId, { name: 'R' }, null)
    const calls: Array<[string, string, unknown?]> = [
      ['GET', flags],
      ['POST', flags, simpleFlag('intruder')],
      ['GET', `${flags}${flag.id}/`],
      ['PATCH', `${flags}${flag.id}/`, { name: 'hacked' }],
      ['DELETE', `${flags}${flag.id}/`],
      ['GET', `${flags}activity/`],
      ['GET', `${flags}${flag.id}/activity/`],
      ['GET', `${flags}${flag.id}/role_access/`],
      ['POST', `${flags}${flag.id}/role_access/`, { role_id: role.id }],
      ['GET', `${f.base}/cohorts/`],
      ['POST', `${f.base}/cohorts/`, { name: 'x' }],
      ['GET', `${f.base}/cohorts/${cohort.id}/`],
      ['PATCH', `${f.base}/cohorts/${cohort.id}/`, { name: 'x' }],
    ]
    for (const [method, path, body] of calls) {
      const res = await stranger.call(method, path, body)
      t.equal(res.status, 404, `${method} ${path}`)
      t.equal(res.body.code, 'not_found')
    }
    const mine = await server.api('GET', `${flags}${flag.id}/`)
    t.equal(mine.body.name, '', 'nothing changed')
  })

  t.test('a flag id of another project is 404 under this project', async (t) => {
    const theirFlag = (await stranger.call('POST', `/api/projects/${strangerProject.id}/feature_flags/`, simpleFlag('theirs'))).body
    t.equal((await server.api('GET', `${flags}${theirFlag.id}/`)).status, 404)
    t.equal((await server.api('PATCH', `${flags}${theirFlag.id}/`, { name: 'x' })).status, 404)
    t.equal((await server.api('GET', `${flags}${theirFlag.id}/activity/`)).status, 404)
    const list = await stranger.call('GET', `/api/projects/${strangerProject.id}/feature_flags/`)
    t.same(list.body.results.map((r: { key: string }) => r.key), ['theirs'])
  })

  t.test('a key limited to other projects cannot reach this one', async (t) => {
    const other = f.m.accounts.createProject(f.orgId, 'Sibling')
    const owner = f.m.accounts.userByEmail('admin@skylark.local')!
    const scoped = f.m.keys.create({ userId: owner.id, label: 'scoped', scopes: ['*'], scopedTeams: [other.id] }).key
    t.equal((await server.api('GET', flags, undefined, scoped)).status, 404)
  })

  t.test('flags may not use cohorts of another project', async (t) => {
    const theirCohort = (await stranger.call('POST', `/api/projects/${strangerProject.id}/cohorts/`, { name: 'Theirs' })).body
    const res = await server.api('POST', flags, {
      key: 'uses-foreign-cohort',
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: theirCohort.id }] }] },
    })
    t.equal(res.status, 400)
    t.equal(res.body.code, 'cohort_does_not_exist')
  })
})

t.test('cohorts API', async (t) => {
  const f = await flagServer()
  t.teardown(() => f.close())
  const { server } = f
  const cohorts = `${f.base}/cohorts/`
  const tree = { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'email', value: '@x.com', operator: 'icontains', type: 'person' }] }] } }

  t.test('POST creates, GET lists and retrieves', async (t) => {
    const res = await server.api('POST', cohorts, { name: 'X users', description: 'd', filters: tree, bogus: 1 })
    t.equal(res.status, 201)
    t.match(res.body, { id: Number, name: 'X users', description: 'd', is_static: false, deleted: false, count: null, created_by: { email: 'admin@skylark.local' } })
    t.same(res.body.filters, tree)
    const list = await server.api('GET', cohorts)
    t.equal(list.body.count, 1)
    t.equal(list.body.results[0].id, res.body.id)
    t.equal((await server.api('GET', `${cohorts}${res.body.id}/`)).body.name, 'X users')
    t.equal((await server.api('GET', `${cohorts}424242/`)).status, 404)
  })

  t.test('PATCH changes and soft-deletes', async (t) => {
    const created = (await server.api('POST', cohorts, { name: 'Temp' })).body
    const renamed = await server.api('PATCH', `${cohorts}${created.id}/`, { name: 'Renamed' })
    t.equal(renamed.body.name, 'Renamed')
    const deleted = await server.api('PATCH', `${cohorts}${created.id}/`, { deleted: true })
    t.equal(deleted.body.deleted, true)
    const list = await server.api('GET', cohorts)
    t.notOk(list.body.results.some((c: { id: number }) => c.id === created.id))
  })

  t.test('malformed filters are refused', async (t) => {
    const res = await server.api('POST', cohorts, { name: 'Bad', filters: { properties: { type: 'XOR', values: [] } } })
    t.match(res.body, { type: 'validation_error', attr: 'filters' })
    const typed = await server.api('POST', cohorts, { name: 'Bad', is_static: 'yes' })
    t.match(typed.body, { type: 'validation_error', attr: 'is_static' })
    const ref = await server.api('POST', cohorts, { name: 'Bad', filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: 999 }] } } })
    t.match(ref.body, { type: 'validation_error', attr: 'filters', detail: 'Invalid Cohort ID in filter' })
  })

  t.test('a cohort cannot reference itself through another', async (t) => {
    const a = (await server.api('POST', cohorts, { name: 'A' })).body
    const b = (await server.api('POST', cohorts, { name: 'B', filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: a.id }] } } })).body
    const loop = await server.api('PATCH', `${cohorts}${a.id}/`, { filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: b.id }] } } })
    t.equal(loop.status, 400)
    t.equal(loop.body.detail, 'Cohorts cannot reference other cohorts in a loop.')
  })

  t.test('behavioural cohorts are kept but refused by flags', async (t) => {
    const behavioural = await server.api('POST', cohorts, {
      name: 'Purchasers',
      filters: { properties: { type: 'AND', values: [{ key: 'purchase', type: 'behavioral', value: 'performed_event', event_type: 'events' }] } },
    })
    t.equal(behavioural.status, 201)
    const flag = await server.api('POST', `${f.base}/feature_flags/`, {
      key: 'for-purchasers',
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: behavioural.body.id }] }] },
    })
    t.equal(flag.status, 400)
    t.same(flag.body, {
      type: 'validation_error',
      code: 'behavioral_cohort_found',
      detail: "Cohort 'Purchasers' with filters on events cannot be used in feature flags.",
      attr: 'filters',
    })
  })

  t.test('flags show the name of the cohorts they use', async (t) => {
    const cohort = (await server.api('POST', cohorts, { name: 'Named', filters: tree })).body
    const flag = await server.api('POST', `${f.base}/feature_flags/`, {
      key: 'cohort-flag',
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort.id }], rollout_percentage: 100 }] },
    })
    t.equal(flag.status, 201)
    t.equal(flag.body.filters.groups[0].properties[0].cohort_name, 'Named')
  })

  t.test("the list narrows by type, by part of the name and to cohorts flags can use, as PostHog's does", async (t) => {
    const events = { type: 'OR', values: [{ type: 'AND', values: [{ key: 'signup', type: 'behavioral', value: 'performed_event', event_type: 'events' }] }] }
    const names = async (query: string) => {
      const res = await server.api('GET', `${cohorts}?limit=2&${query}`)
      const all = [...res.body.results]
      for (let next = res.body.next; next; ) {
        const page = await server.api('GET', new URL(next).pathname + new URL(next).search)
        all.push(...page.body.results)
        next = page.body.next
      }
      return { count: res.body.count as number, names: all.map((c: { name: string }) => c.name).filter((n: string) => n.startsWith('L·')) }
    }
    const fixed = (await server.api('POST', cohorts, { name: 'L·Fixed list', is_static: true })).body
    const signups = (await server.api('POST', cohorts, { name: 'L·Signups', filters: { properties: events } })).body
    await server.api('POST', cohorts, { name: 'L·Wraps signups', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'id', type: 'cohort', value: signups.id }] }] } } })
    await server.api('POST', cohorts, { name: 'L·Wraps fixed', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'id', type: 'cohort', value: fixed.id }] }] } } })
    await server.api('POST', cohorts, { name: 'L·Events but static', is_static: true, filters: { properties: events } })
    await server.api('POST', cohorts, { name: 'L·Plain', filters: tree })

    t.same((await names('type=static')).names, ['L·Events but static', 'L·Fixed list'])
    t.same((await names('type=dynamic')).names, ['L·Plain', 'L·Wraps fixed', 'L·Wraps signups', 'L·Signups'])
    t.same((await names('search=WRAPS')).names, ['L·Wraps fixed', 'L·Wraps signups'], 'search ignores case')
    const usable = await names('hide_behavioral_cohorts=TRUE')
    t.same(usable.names, ['L·Plain', 'L·Events but static', 'L·Wraps fixed', 'L·Fixed list'])
    t.equal((await names('hide_behavioral_cohorts=false&type=other')).names.length, 6, 'unknown values change nothing')
    t.equal((await names('search=l·&hide_behavioral_cohorts=true')).count, 4, 'count is of the narrowed list')
  })

  t.test('cohort scopes', async (t) => {
    const reader = f.member(MembershipLevel.member, ['cohort:read'])
    t.equal((await reader.call('GET', cohorts)).status, 200)
    const denied = await reader.call('POST', cohorts, { name: 'no' })
    t.equal(denied.status, 403)
    t.equal(denied.body.detail, "API key missing required scope 'cohort:write'")
    t.equal((await f.member(MembershipLevel.member, ['feature_flag:write']).call('GET', cohorts)).status, 403)
  })
})
