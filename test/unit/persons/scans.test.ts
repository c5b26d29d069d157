/** The persons API's scanning reads give the same answer, to the byte, through their thread as in place. */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { compileSearchRegex } from '../../../src/flags/index.js'
import type { CapturedEvent } from '../../../src/ingestion/types.js'
import { DefinitionRecorder, personScanThread, StaticCohortWriter, type PersonScans } from '../../../src/persons/index.js'
import { inPlaceScans } from '../../../src/persons/scans.js'
import { openDatabase } from '../../../src/storage/index.js'
import { ROOT } from '../../helpers/server.js'
import { T0, TEAM, ev, harness, personsDb } from './fixtures.js'

// The thread runs the compiled entry, as the service does (`npm test` builds dist/ first).
const ENTRY = pathToFileURL(join(ROOT, 'dist', 'workers', 'person-query.js'))

function filledFile(dir: string): string {
  const file = join(dir, 'persons.db')
  const h = harness({ db: personsDb(file) })
  const recorder = new DefinitionRecorder(h.db)
  const events: CapturedEvent[] = []
  for (let i = 0; i < 60; i++) {
    events.push(ev('$identify', `user-${i}`, { $set: { email: `u${i}@${i % 3 ? 'example.com' : 'other.io'}`, plan: i % 2 ? 'pro' : 'free', age: 20 + i, 'quote"d': 'a\\b' } }))
    if (i % 4 === 0) events.push(ev('$identify', `user-${i}`, { $anon_distinct_id: `anon-${i}` }))
    events.push(ev('$groupidentify', `user-${i}`, { $group_type: 'company', $group_key: `co-${i % 7}`, $group_set: { name: `Co ${i % 7}`, size: i % 7 } }))
  }
  events.push(ev('$identify', 'user-1', { $anon_distinct_id: 'null' }))
  h.db.transaction(() => {
    recorder.observe(events, h.stage.process(events), T0)
    recorder.write()
  })()
  new StaticCohortWriter(h.db).replaceMembers(TEAM, 1, ['user-1', 'user-2', 'anon-4'])
  h.db.close()
  return file
}

t.test('every scanning read answers through the thread what it answers in place', async (t) => {
  const file = filledFile(t.testdir())
  const db = openDatabase(file, { readonly: true })
  const direct = inPlaceScans(db, compileSearchRegex)
  const started: number[] = []
  const threaded = personScanThread({ file, entry: ENTRY, onThreadStart: (id) => started.push(id) })
  t.teardown(async () => {
    await threaded.close()
    db.close()
  })
  const plan = [{ key: 'plan', operator: 'exact' as const, value: 'pro' }]
  const seen = { kind: 1, groupTypeIndex: -1, names: null, numerical: false, featureFlag: null, search: [], excluded: [], excludeCore: false, eventNames: ['$identify'], onlySeen: false }
  const reads: Array<[string, (s: PersonScans) => Promise<unknown>]> = [
    ['listPersons', (s) => s.listing.listPersons(TEAM, { limit: 20, offset: 5 })],
    ['listPersons filtered', (s) => s.listing.listPersons(TEAM, { properties: plan, search: 'example', limit: 10, offset: 0 })],
    ['listPersons by a regex', (s) => s.listing.listPersons(TEAM, { properties: [{ key: 'email', operator: 'regex', value: '^u1\\d@' }], limit: 20, offset: 0 })],
    ['groupKeysMatching by a regex', (s) => s.listing.groupKeysMatching(TEAM, 0, [{ key: 'name', operator: 'not_regex', value: '[0-4]$' }], 1_000)],
    ['listPersons matching none', (s) => s.listing.listPersons(TEAM, { properties: [{ key: 'absent', operator: 'exact', value: 'x' }], limit: 10, offset: 0 })],
    ['countPersons', (s) => s.listing.countPersons(TEAM, { properties: plan })],
    ['distinctIdsMatching', (s) => s.listing.distinctIdsMatching(TEAM, plan, 1_000)],
    ['distinctIdsMatching past its bound', (s) => s.listing.distinctIdsMatching(TEAM, plan, 20)],
    ['distinctIdsMatching, the persons failing', (s) => s.listing.distinctIdsMatching(TEAM, plan, 1_000, true)],
    ['distinctIdsInCohort', (s) => s.listing.distinctIdsInCohort(TEAM, 1, 1_000)],
    ['distinctIdsInCohort, the others', (s) => s.listing.distinctIdsInCohort(TEAM, 1, 1_000, true)],
    ['distinctIdsByProperty', (s) => s.listing.distinctIdsByProperty(TEAM, 'plan', 10_000)],
    ['distinctIdsByProperty past its bound', (s) => s.listing.distinctIdsByProperty(TEAM, 'plan', 50)],
    ['groupKeysByProperty', (s) => s.listing.groupKeysByProperty(TEAM, 0, 'size', 1_000)],
    ['groupKeysByProperty past its bound', (s) => s.listing.groupKeysByProperty(TEAM, 0, 'size', 10)],
    ['groupKeysMatching', (s) => s.listing.groupKeysMatching(TEAM, 0, [{ key: 'size', operator: 'gt', value: 2 }], 1_000)],
    ['groupKeysMatching, the groups failing', (s) => s.listing.groupKeysMatching(TEAM, 0, [{ key: 'size', operator: 'gt', value: 2 }], 1_000, true)],
    ['listGroups', (s) => s.listing.listGroups(TEAM, 0, 5, 1, { search: 'co' })],
    ['countGroups', (s) => s.listing.countGroups(TEAM, 0)],
    ['listIngestionWarnings', (s) => s.listing.listIngestionWarnings(TEAM, 10, 0)],
    ['countIngestionWarnings', (s) => s.listing.countIngestionWarnings(TEAM)],
    ['groupPropertyDefinitions', (s) => s.groups.propertyDefinitions(TEAM)],
    ['groupPropertyValues', (s) => s.groups.propertyValues(TEAM, 0, 'name', 'co')],
    ['personsOf', (s) => s.groups.personsOf(TEAM, ['anon-4', 'user-4', 'user-9'])],
    ['eventDefinitions', (s) => s.definitions.events(TEAM, { search: [], kind: 'all', names: null, excluded: [], seenAfter: null, order: [] }, { limit: 10, offset: 0 })],
    ['propertyDefinitions', (s) => s.definitions.properties(TEAM, seen, { limit: 10, offset: 0 })],
  ]
  for (const [name, read] of reads) {
    const here = await read(direct)
    t.equal(JSON.stringify(await read(threaded)), JSON.stringify(here), name)
  }
  t.ok((await direct.listing.listPersons(TEAM, { properties: plan, search: 'example', limit: 10, offset: 0 })).length > 0, 'the filtered fixture matches')
  t.equal(await direct.listing.listIngestionWarnings(TEAM, 10, 0).then((w) => w.length), 1, 'the fixture has a warning')
  t.same((await direct.listing.distinctIdsInCohort(TEAM, 1, 1_000))?.sort(), ['anon-4', 'user-1', 'user-2', 'user-4'], "the static cohort's members, each person's every id")
  t.same((await direct.listing.distinctIdsByProperty(TEAM, 'plan', 10_000))?.map((v) => [v.text, v.ids.length]).sort(), [['free', 45], ['pro', 30]], "each plan's persons' ids (the free ones' every fourth with an anon id too)")
  t.equal(await direct.listing.distinctIdsByProperty(TEAM, 'plan', 50), null, 'past its bound')
  t.same((await direct.listing.groupKeysByProperty(TEAM, 0, 'size', 1_000))?.map((v) => [v.text, v.ids]).sort(), [0, 1, 2, 3, 4, 5, 6].map((i) => [String(i), [`co-${i}`]]), "each size's companies, a number's text as the event store writes it")
  t.same(await direct.listing.groupKeysByProperty(TEAM, 1, 'size', 1_000), [], 'a type without groups')
  t.equal(await direct.listing.groupKeysByProperty(TEAM, 0, 'size', 10), null, 'past its bound')
  t.same((await direct.listing.groupKeysMatching(TEAM, 0, [{ key: 'size', operator: 'gt', value: 2 }], 1_000))?.sort(), ['co-3', 'co-4', 'co-5', 'co-6'])
  t.same((await direct.listing.groupKeysMatching(TEAM, 0, [{ key: 'size', operator: 'gt', value: 2 }], 1_000, true))?.sort(), ['co-0', 'co-1', 'co-2'])
  t.same((await direct.listing.listPersons(TEAM, { properties: [{ key: 'email', operator: 'regex', value: '^u1\\d@' }], limit: 20, offset: 0 })).map((p) => p.properties.email).sort(), [10, 11, 12, 13, 14, 15, 16, 17, 18, 19].map((i) => `u${i}@${i % 3 ? 'example.com' : 'other.io'}`), 'a regex person filter: a search of the text')
  t.same((await direct.listing.groupKeysMatching(TEAM, 0, [{ key: 'name', operator: 'not_regex', value: '[0-4]$' }], 1_000))?.sort(), ['co-5', 'co-6'])
  t.equal(started.length, 1, 'one thread answered them all')
})

t.test('a persons.db that cannot be opened fails each read with why, and the thread reads it once it exists', async (t) => {
  const dir = t.testdir()
  const threaded = personScanThread({ file: join(dir, 'persons.db'), entry: ENTRY })
  t.teardown(() => threaded.close())
  await t.rejects(threaded.listing.countPersons(TEAM), { message: /unable to open|directory does not exist|no such file/i })
  filledFile(dir)
  t.equal(await threaded.listing.countPersons(TEAM), 60)
})
