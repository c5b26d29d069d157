/**
 * A CPU profile of the server is named by its thread's role: the server logs each worker thread's id as it
 * starts, which is the id V8 puts in the thread's `--cpu-prof` file name (bench/lib/profile.mjs threadRoles).
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, startServer } from '../../helpers/server.js'
import { testDir } from '../../helpers/temp.js'

interface Summary {
  path: string
  thread: number | null
  role: string | null
}

const { summariseProfiles, threadRoles, threadLabel } = (await import(join(ROOT, 'bench', 'lib', 'profile.mjs'))) as {
  summariseProfiles: (dir: string, root: string, limit: number, roles: Map<number, string>) => Summary[]
  threadRoles: (lines: string[]) => Map<number, string>
  threadLabel: (p: Summary) => string
}

/**
 * Whether the profile sampled a function (not a module's top level) of a file whose path ends with `file`
 * (and lies under `under`, from the project's root).
 */
function ran(path: string, file: string, functionName?: string, under = ''): boolean {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as { nodes: { callFrame: { functionName: string; url: string; lineNumber: number } }[] }
  const prefix = `file://${join(ROOT, under)}`
  return profile.nodes.some(
    ({ callFrame: f }) =>
      f.url.startsWith(prefix) && f.url.endsWith(file) && f.lineNumber > 0 && (functionName === undefined || f.functionName === functionName),
  )
}

t.test('threadRoles reads the thread starts among other lines, and the main thread is 0', async (t) => {
  const roles = threadRoles([
    '┌─ skylark first run',
    '{"level":"info","thread":"pool","threadId":1,"msg":"thread started"}',
    '{"level":"info","msg":"listening","port":1}',
    '{"level":"info","component":"consumer","thread":"insert","threadId":3,"msg":"thread started"}',
    'not json but "thread started"',
  ])
  t.same([...roles.entries()], [
    [0, 'main'],
    [1, 'pool'],
    [3, 'insert'],
  ])
  t.equal(threadLabel({ path: '', thread: 3, role: 'insert' }), 'insert thread 3')
  t.equal(threadLabel({ path: '', thread: 7, role: null }), 'thread 7')
})

t.test('each profile of a loaded server is named by the role of the thread that ran it', async (t) => {
  const profiles = testDir(t, 'skylark-profile-threads-')
  const server = await startServer({ nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profiles] })
  t.teardown(() => server.cleanup())
  const token = server.boot.project_api_key
  const total = 3000
  const statuses = new Set<number>()
  for (let b = 0; b < total / 100; b++) {
    const batch = Array.from({ length: 100 }, (_, i) => ({ event: 'step', distinct_id: `user-${b}-${i}`, properties: { $set: { n: i } } }))
    statuses.add((await server.request('POST', '/batch/', { body: { api_key: token, batch } })).status)
  }
  t.same([...statuses], [200], 'every batch accepted')
  let stored = 0
  for (let i = 0; i < 200 && stored < total; i++) {
    const res = await server.api('GET', `/api/projects/${server.boot.project_id}/events/?event=step&limit=1`)
    stored = res.body?.count ?? 0
    if (stored < total) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.equal(stored, total, 'every event stored')
  // A person property filter no person meets walks the project's 3,000 persons: asked 20 times, tens of
  // milliseconds of reads, which the main thread's profile would show had it run them.
  const absent = encodeURIComponent(JSON.stringify([{ key: 'absent', value: 'x', operator: 'exact', type: 'person' }]))
  for (let i = 0; i < 20; i++) {
    const res = await server.api('GET', `/api/projects/${server.boot.project_id}/persons/?properties=${absent}&search=nobody`)
    t.equal(res.body?.count, 0, 'no person matches')
  }
  t.equal(await server.stop(), 0)

  const roles = threadRoles(server.stdout)
  const summaries = summariseProfiles(profiles, ROOT, 15, roles)
  const byRole = new Map(summaries.map((s) => [s.role, s]))
  t.same(
    summaries.flatMap((s) => (s.role ? [s.role] : [])).sort(),
    ['consumer', 'fill', 'insert', 'main', 'person-query', 'query'],
    'one profile per thread of the service, each with a role (query: the events API reads above; person-query: the persons list; no pool: every body was small)',
  )
  // Any other thread (a module-hook thread, had tap's processinfo reached the server: plain-children.mjs keeps it out) must not run the service.
  for (const s of summaries.filter((s) => !s.role)) t.notOk(ran(s.path, '.js', undefined, 'dist/'), `thread ${s.thread} ran none of the service's code`)
  t.equal(byRole.get('main')?.thread, 0)
  t.ok(ran(byRole.get('main')!.path, 'src/http/server.js'), 'the main thread ran the HTTP front')
  t.ok(ran(byRole.get('consumer')!.path, 'src/ingestion/consumer/person-batch.js'), 'the consumer ran the person step')
  t.ok(ran(byRole.get('insert')!.path, 'src/storage/events/sqlite.js'), 'the insert thread ran the SQLite inserts')
  t.ok(ran(byRole.get('fill')!.path, 'src/ingestion/spool/filler.js', 'writeZerosSync'), 'the fill thread wrote zeros')
  // The query thread's own samples of those reads are too few to count on (a read here takes well under a
  // millisecond, the profiler's interval); that it started is in the roles above.
  t.notOk(ran(byRole.get('main')!.path, 'src/storage/events/sqlite.js'), 'the main thread ran no events.db read')
  for (const read of ['listPersons', 'countPersons']) t.notOk(ran(byRole.get('main')!.path, 'src/persons/listing.js', read), `the main thread ran no persons.db ${read}`)
})
