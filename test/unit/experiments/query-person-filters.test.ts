import t from 'tap'
import type { CapturedEvent } from '../../../src/ingestion/types.js'
import { exposureOf } from '../../../src/experiments/query/exposure.js'
import { planMetric } from '../../../src/experiments/query/metric.js'
import type { CohortSource } from '../../../src/management/index.js'
import { personFilterLookup } from '../../../src/experiments/query/person-filters.js'
import { compileSearchRegex } from '../../../src/flags/index.js'
import { StaticCohortWriter } from '../../../src/persons/index.js'
import { inPlaceScans } from '../../../src/persons/scans.js'
import type { SourceMath } from '../../../src/storage/events/index.js'
import { TEAM, ev, harness } from '../persons/fixtures.js'

/** persons.db with ten persons (two distinct ids each for the even ones), every third of the gold tier, the first four with billing seats. */
function personsWithTiers() {
  const h = harness()
  const events: CapturedEvent[] = []
  for (let i = 0; i < 10; i++) {
    events.push(ev('$identify', `user-${i}`, { $set: { tier: i % 3 === 0 ? 'gold' : 'basic', age: 20 + i, ...(i < 4 ? { billing: { seats: i + 1 } } : {}) } }))
    if (i % 2 === 0) events.push(ev('$identify', `user-${i}`, { $anon_distinct_id: `anon-${i}` }))
    // Companies (group type 0) co-0…co-4, their size 10 × i.
    if (i < 5) events.push(ev('$groupidentify', `user-${i}`, { $group_type: 'company', $group_key: `co-${i}`, $group_set: { size: 10 * i } }))
  }
  h.db.transaction(() => h.stage.process(events))()
  // A static cohort (1) of users 1 and 2.
  new StaticCohortWriter(h.db).replaceMembers(TEAM, 1, ['user-1', 'user-2'])
  return inPlaceScans(h.db, compileSearchRegex).listing
}

const noActions = () => null
const gold = { key: 'tier', operator: 'exact', value: 'gold', type: 'person' }

t.test("a metric's person filter reads as the distinct ids of the persons it matches now, every id of each", async (t) => {
  const persons = personsWithTiers()
  const metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'clicked', properties: [gold, { key: 'plan', value: 'pro' }] } }
  const lookup = await personFilterLookup(persons, null, TEAM, [metric])
  const [step] = planMetric(metric, noActions, lookup).steps
  const [personNode, eventNode] = step.properties as unknown as Array<Record<string, unknown>>
  t.same([...(personNode.distinctIds as string[])].sort(), ['anon-0', 'anon-6', 'user-0', 'user-3', 'user-6', 'user-9'])
  t.same(eventNode, { key: 'plan', operator: 'exact', value: 'pro' }, 'an event filter stays one')
  t.throws(() => planMetric(metric, noActions), { code: 'invalid', detail: 'Only event and HogQL property filters are supported in experiment metrics, not "person".' }, 'without persons.db: refused')
})

t.test('a HogQL filter on person properties reads as the distinct ids of the persons its expression holds for', async (t) => {
  const persons = personsWithTiers()
  const hogql = (key: string) => ({ key, type: 'hogql', value: null })
  const older = hogql("person.properties.tier = 'gold' and person.properties.age > 22")
  const metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'clicked', properties: [older, hogql("properties.plan in ('pro')")] } }
  const lookup = await personFilterLookup(persons, null, TEAM, [metric])
  const [step] = planMetric(metric, noActions, lookup).steps
  const [personNode, eventNode] = step.properties as unknown as Array<Record<string, unknown>>
  t.same([...(personNode.distinctIds as string[])].sort(), ['anon-6', 'user-3', 'user-6', 'user-9'], 'users 3, 6 and 9, every id of each')
  t.match(eventNode, { hogql: { op: '=' } }, 'one on event properties stays a condition')
  t.throws(() => planMetric(metric, noActions), { code: 'invalid', detail: /^HogQL filter "person.properties.tier = 'gold' and person.properties.age > 22": Person properties are not read here/ }, 'without persons.db')
  const mixed = { ...metric, source: { ...metric.source, properties: [hogql("person.properties.tier = 'gold' or properties.plan = 'pro'")] } }
  const mixedLookup = await personFilterLookup(persons, null, TEAM, [mixed])
  t.throws(() => planMetric(mixed, noActions, mixedLookup), { code: 'invalid', detail: /reads both the event \(its properties or fields\) and the person's properties/ })
})

t.test("the exposure config's person filters read alike, and one matching nobody matches no event", async (t) => {
  const persons = personsWithTiers()
  const older = { key: 'age', operator: 'gt', value: 27, type: 'person' }
  const nobody = { key: 'tier', operator: 'exact', value: 'platinum', type: 'person' }
  const criteria = { exposure_config: { kind: 'ExperimentEventExposureConfig', event: '$feature_flag_called', properties: [older, nobody] } }
  const lookup = await personFilterLookup(persons, null, TEAM, [criteria])
  const plan = exposureOf(criteria, 'k', ['control', 'test'], { teamId: TEAM, after: 0, before: 1 }, noActions, lookup)
  const nodes = plan.filter.properties!.slice(2) as Array<{ distinctIds: string[] }>
  t.same([...nodes[0].distinctIds].sort(), ['anon-8', 'user-8', 'user-9'])
  t.same(nodes[1].distinctIds, [])
})

t.test('a filter most persons meet reads as the events of none of the persons it fails; one splitting too many either way is a 400', async (t) => {
  const persons = personsWithTiers()
  const basic = { key: 'tier', operator: 'is_not', value: 'gold', type: 'person' }
  // 40 characters hold the gold tier's six ids (28), not the basic tier's fourteen.
  const lookup = (await personFilterLookup(persons, null, TEAM, [{ properties: [basic] }], 40))!
  const node = lookup.person({ key: 'tier', operator: 'is_not', value: 'gold' }) as { distinctIds: string[]; excluded?: boolean }
  t.equal(node.excluded, true)
  t.same([...node.distinctIds].sort(), ['anon-0', 'anon-6', 'user-0', 'user-3', 'user-6', 'user-9'])
  await t.rejects(personFilterLookup(persons, null, TEAM, [{ properties: [basic] }], 10), { code: 'invalid', detail: 'The person filter on tier splits too many persons to compute this query; narrow it.' })
})

t.test('a cohort filter reads as its static members, or the persons its person conditions match; not_in as the others', async (t) => {
  const persons = personsWithTiers()
  const cohorts = new Map<number, CohortSource>([
    [1, { is_static: true, deleted: false, filters: null }],
    [2, { is_static: false, deleted: false, filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'tier', value: 'gold', type: 'person' }, { key: 'age', operator: 'gt', value: 25, type: 'person' }] }] } } }],
    [3, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'signed_up', event_type: 'events', type: 'behavioral', value: 'performed_event' }] } } }],
    [4, { is_static: true, deleted: true, filters: null }],
    // Nested: cohort 2 and younger than 29; one naming the static cohort (and 13 below); two naming each other.
    [5, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'id', value: 2, type: 'cohort' }, { key: 'age', operator: 'lt', value: 29, type: 'person' }] } } }],
    [6, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'id', value: 1, type: 'cohort' }] } } }],
    [7, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'id', value: 8, type: 'cohort' }] } } }],
    [8, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'id', value: 7, type: 'cohort' }] } } }],
    // Negated person conditions: gold and not older than 25; without a plan (nobody has one); a negated cohort.
    [10, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'tier', value: 'gold', type: 'person' }, { key: 'age', operator: 'gt', value: 25, type: 'person', negation: true }] } } }],
    [11, { is_static: false, deleted: false, filters: { properties: { type: 'OR', values: [{ key: 'plan', value: 'pro', type: 'person', negation: true }] } } }],
    [12, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'id', value: 2, type: 'cohort', negation: true }] } } }],
    [13, { is_static: false, deleted: false, filters: { properties: { type: 'OR', values: [{ key: 'id', value: 1, type: 'cohort' }, { type: 'AND', values: [{ key: 'tier', value: 'gold', type: 'person' }, { key: 'age', operator: 'gt', value: 28, type: 'person' }] }] } } }],
    // Basic and not in the static cohort (`not_in`); `not_in` and negated at once is one negation, as PostHog reads it.
    [14, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'id', value: 1, type: 'cohort', operator: 'not_in' }, { key: 'tier', value: 'basic', type: 'person' }] } } }],
    [15, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'id', value: 2, type: 'cohort', operator: 'not_in', negation: true }] } } }],
  ])
  const cohortById = (teamId: number, id: number) => (teamId === TEAM ? (cohorts.get(id) ?? null) : null)
  const leaf = (value: unknown, operator?: string) => ({ key: 'id', value, type: 'cohort', ...(operator ? { operator } : {}) })
  const lookup = (await personFilterLookup(persons, cohortById, TEAM, [[leaf(1), leaf('2'), leaf(2, 'not_in')]]))!
  const members = lookup.cohort(leaf(1)) as { distinctIds: string[] }
  t.same([...members.distinctIds].sort(), ['anon-2', 'user-1', 'user-2'], "the static members, each person's every id")
  const dynamic = lookup.cohort(leaf('2')) as { distinctIds: string[] }
  t.same([...dynamic.distinctIds].sort(), ['anon-6', 'user-6', 'user-9'], 'gold and older than 25')
  t.same(lookup.cohort(leaf(2, 'not_in')), { ...dynamic, excluded: true }, 'not_in: the events of none of them')
  const metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'clicked', properties: [leaf(1)] } }
  t.same(planMetric(metric, noActions, lookup).steps[0].properties, [members])
  await t.rejects(personFilterLookup(persons, cohortById, TEAM, [[leaf(3)]]), { code: 'invalid', detail: /^Cohort 3 has conditions skylark can't evaluate/ })
  await t.rejects(personFilterLookup(persons, cohortById, TEAM, [[leaf(4)]]), { code: 'invalid', detail: 'The cohort filter names cohort 4, which does not exist.' })
  const nested = (await personFilterLookup(persons, cohortById, TEAM, [[leaf(5)]]))!.cohort(leaf(5)) as { distinctIds: string[] }
  t.same([...nested.distinctIds].sort(), ['anon-6', 'user-6'], 'a dynamic cohort it names, read in its place: gold, 26 to 28')
  await t.rejects(personFilterLookup(persons, cohortById, TEAM, [[leaf(7)]]), { code: 'invalid', detail: /^Cohort 7 has conditions/ }, 'two cohorts naming each other')
  const ofStatic = (await personFilterLookup(persons, cohortById, TEAM, [[leaf(6), leaf(13)]]))!
  t.same([...(ofStatic.cohort(leaf(6)) as { distinctIds: string[] }).distinctIds].sort(), ['anon-2', 'user-1', 'user-2'], 'a static cohort it names: its members')
  t.same([...(ofStatic.cohort(leaf(13)) as { distinctIds: string[] }).distinctIds].sort(), ['anon-2', 'user-1', 'user-2', 'user-9'], 'or gold and older than 28')
  await t.rejects(personFilterLookup(persons, cohortById, TEAM, [[leaf(9)]]), { code: 'invalid', detail: 'The cohort filter names cohort 9, which does not exist.' })
  const negated = (await personFilterLookup(persons, cohortById, TEAM, [[leaf(10), leaf(11)]]))!
  t.same([...(negated.cohort(leaf(10)) as { distinctIds: string[] }).distinctIds].sort(), ['anon-0', 'user-0', 'user-3'], 'a negated person condition: gold, 25 or younger')
  t.equal((negated.cohort(leaf(11)) as { distinctIds: string[] }).distinctIds.length, 15, 'negating a property nobody has: every person, every id')
  const others = (await personFilterLookup(persons, cohortById, TEAM, [[leaf(12), leaf(14), leaf(15)]]))!
  const ids = (id: number) => [...(others.cohort(leaf(id)) as { distinctIds: string[] }).distinctIds].sort()
  t.equal(ids(12).length, 12, "a negated dynamic cohort: every id but its members' three")
  t.notOk(ids(12).some((id) => ['anon-6', 'user-6', 'user-9'].includes(id)))
  t.same(ids(14), ['anon-4', 'anon-8', 'user-4', 'user-5', 'user-7', 'user-8'], 'basic, and not a member of the static cohort')
  t.same(ids(15), ids(12))
  t.throws(() => lookup.cohort(leaf('x')), { code: 'invalid', detail: 'A cohort filter needs the id of a cohort as its value.' })
})

t.test("a breakdown by a person property reads each text it has now, with its persons' distinct ids", async (t) => {
  const persons = personsWithTiers()
  const metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'clicked' }, breakdownFilter: { breakdowns: [{ property: 'tier', type: 'person' }, { property: '$browser' }] } }
  const lookup = await personFilterLookup(persons, null, TEAM, [metric])
  const [tier, browser] = planMetric(metric, noActions, lookup).breakdowns as [{ groupTypeIndex: null; values: Array<{ text: string; ids: string[] }> }, string]
  t.equal(tier.groupTypeIndex, null)
  const byText = Object.fromEntries(tier.values.map((v) => [v.text, [...v.ids].sort()]))
  t.same(byText.gold, ['anon-0', 'anon-6', 'user-0', 'user-3', 'user-6', 'user-9'])
  t.equal(byText.basic.length, 9)
  t.equal(browser, '$browser', 'an event property stays one')
  const ages = (await personFilterLookup(persons, null, TEAM, [{ breakdowns: [{ property: 'age', type: 'person' }] }]))!.breakdown('age')
  t.ok(ages.values.some((v) => v.text === '23'), "a number's text as the event store writes it")
  t.throws(() => planMetric(metric, noActions), { code: 'invalid', detail: 'Breakdowns of type "person" are not supported in experiment metrics here; only event, person and group property breakdowns are.' }, 'without persons.db')
  await t.rejects(personFilterLookup(persons, null, TEAM, [metric], 20), { code: 'invalid', detail: 'The breakdown by the person property tier covers too many persons to compute this query.' })
})

t.test("HogQL math's person properties read as each text they have now, with its persons' distinct ids, as a person breakdown", async (t) => {
  const persons = personsWithTiers()
  const source = { kind: 'EventsNode', event: 'clicked', math: 'hogql', math_hogql: "sum(if(person.properties.tier = 'gold', person.properties.billing.seats, properties.amount))" }
  const metric = { kind: 'ExperimentMetric', metric_type: 'mean', source }
  const lookup = await personFilterLookup(persons, null, TEAM, [metric])
  const personsOf = (s: SourceMath) => (s.kind === 'hogql' ? (s.persons ?? []) : [])
  const read = personsOf(planMetric(metric, noActions, lookup).sources[0])
  const byText = (i: number) => Object.fromEntries(read[i].values.map((v) => [v.text, [...v.ids].sort()]))
  t.same(read.map((p) => p.path), [['tier'], ['billing', 'seats']], 'the paths the expression reads of the person')
  t.same(byText(0).gold, ['anon-0', 'anon-6', 'user-0', 'user-3', 'user-6', 'user-9'], 'every id of each person')
  t.same(byText(1), { 1: ['anon-0', 'user-0'], 2: ['user-1'], 3: ['anon-2', 'user-2'], 4: ['user-3'] }, 'a path within an object; persons without it are in none')
  const ratio = { kind: 'ExperimentMetric', metric_type: 'ratio', numerator: source, denominator: { ...source, math_hogql: 'count(person.properties.tier)' } }
  t.same(planMetric(ratio, noActions, await personFilterLookup(persons, null, TEAM, [ratio])).sources.map((s) => personsOf(s).length), [2, 1], "a ratio's sources each with theirs")
  await t.rejects(personFilterLookup(persons, null, TEAM, [metric], 20), { code: 'invalid', detail: 'The person property tier in math_hogql covers too many persons to compute this query.' })
  t.same(await personFilterLookup(persons, null, TEAM, [{ ...metric, source: { ...source, math_hogql: 'sum(person.properties.(' } }]).then((l) => l !== null), true, 'a text the planner refuses is left to it')
})

t.test("a breakdown by a group property reads each text it has now among the groups of its type, with their keys", async (t) => {
  const persons = personsWithTiers()
  const bySize = { property: 'size', type: 'group', group_type_index: 0 }
  const metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'clicked' }, breakdownFilter: { breakdowns: [bySize, { property: 'tier', type: 'person' }] } }
  const lookup = await personFilterLookup(persons, null, TEAM, [metric])
  const [size, tier] = planMetric(metric, noActions, lookup).breakdowns as Array<{ groupTypeIndex: number | null; values: Array<{ text: string; ids: string[] }> }>
  t.same([size.groupTypeIndex, size.values.map((v) => [v.text, v.ids]).sort()], [0, [['0', ['co-0']], ['10', ['co-1']], ['20', ['co-2']], ['30', ['co-3']], ['40', ['co-4']]]])
  t.equal(tier.groupTypeIndex, null, 'a person property beside it stays one')
  const none = (await personFilterLookup(persons, null, TEAM, [{ ...bySize, group_type_index: 2 }]))!.breakdown('size', 2)
  t.same(none, { groupTypeIndex: 2, values: [] }, 'a type without groups: every exposure in the null group')
  const unindexed = { ...metric, breakdownFilter: { breakdowns: [{ property: 'size', type: 'group' }] } }
  const unindexedLookup = await personFilterLookup(persons, null, TEAM, [unindexed])
  t.throws(() => planMetric(unindexed, noActions, unindexedLookup), { code: 'invalid', detail: 'A group breakdown needs a group_type_index from 0 to 4.' })
  await t.rejects(personFilterLookup(persons, null, TEAM, [metric], 8), { code: 'invalid', detail: 'The breakdown by the group property size covers too many groups to compute this query.' })
})

t.test('a group property filter reads as the keys of the groups of its type it matches now; most of them, as the ones it fails', async (t) => {
  const persons = personsWithTiers()
  const big = { key: 'size', operator: 'gte', value: 20, type: 'group', group_type_index: 0 }
  const metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'clicked', properties: [big] } }
  const lookup = await personFilterLookup(persons, null, TEAM, [metric])
  const [node] = planMetric(metric, noActions, lookup).steps[0].properties as unknown as Array<{ groupTypeIndex: number; groupKeys: string[]; excluded?: boolean }>
  t.same({ ...node, groupKeys: [...node.groupKeys].sort() }, { groupTypeIndex: 0, groupKeys: ['co-2', 'co-3', 'co-4'], excluded: undefined })
  // 8 characters hold two keys: the three big companies are too many, the two that fail are not (co-0: size 0).
  const failing = (await personFilterLookup(persons, null, TEAM, [[big]], 8))!.group(big) as unknown as { groupKeys: string[]; excluded?: boolean }
  t.same([[...failing.groupKeys].sort(), failing.excluded], [['co-0', 'co-1'], true])
  const none = { ...big, group_type_index: 3 }
  t.same((await personFilterLookup(persons, null, TEAM, [[none]]))!.group(none), { groupTypeIndex: 3, groupKeys: [], excluded: undefined }, 'a type without groups: no key')
  t.throws(() => lookup!.group({ ...big, group_type_index: 7 }), { code: 'invalid', detail: 'A group filter needs a group_type_index from 0 to 4.' })
  t.throws(() => planMetric(metric, noActions), { code: 'invalid', detail: 'Only event and HogQL property filters are supported in experiment metrics, not "group".' }, 'without persons.db')
})

t.test("regex person, group and cohort filters read as the persons (groups) whose property's text the pattern finds", async (t) => {
  const persons = personsWithTiers()
  const ids = (node: unknown) => [...((node as { distinctIds?: string[]; groupKeys?: string[] }).distinctIds ?? (node as { groupKeys: string[] }).groupKeys)].sort()
  const goldish = { key: 'tier', operator: 'regex', value: 'ol', type: 'person' }
  const notYoung = { key: 'age', operator: 'not_regex', value: '[0-4]$', type: 'person' }
  const midSize = { key: 'size', operator: 'regex', value: '^[12]0$', type: 'group', group_type_index: 0 }
  const metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'clicked', properties: [goldish, notYoung, midSize, { key: 'id', value: 2, type: 'cohort' }] } }
  const cohorts = new Map<number, CohortSource>([[2, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'tier', operator: 'regex', value: '^g', type: 'person' }] } } }]])
  const lookup = await personFilterLookup(persons, (_, id) => cohorts.get(id) ?? null, TEAM, [metric])
  const [gold, older, companies, cohort] = planMetric(metric, noActions, lookup).steps[0].properties!
  t.same(ids(gold), ['anon-0', 'anon-6', 'user-0', 'user-3', 'user-6', 'user-9'], 'a search of the text: gold')
  t.same(ids(older), ['anon-6', 'anon-8', 'user-5', 'user-6', 'user-7', 'user-8', 'user-9'], 'not_regex: ages 25 to 29')
  t.same(ids(companies), ['co-1', 'co-2'], "the companies of size 10 and 20, a number's text")
  t.same(ids(cohort), ids(gold), "a dynamic cohort's regex condition")
  const bad = { ...metric, source: { ...metric.source, properties: [{ ...goldish, value: '(?=g)' }] } }
  t.throws(() => planMetric(bad, noActions, lookup), { code: 'invalid', detail: /can't run the regex "\(\?=g\)"/ }, 'a person filter with a pattern the stores cannot all run')
  t.throws(() => lookup!.group({ ...midSize, value: '(a)\\1' }), { code: 'invalid', detail: /A group filter's regex "\(a\)\\\\1" is one skylark's stores can't run/ }, 'a group filter with one')
  cohorts.set(3, { is_static: false, deleted: false, filters: { properties: { type: 'AND', values: [{ key: 'tier', operator: 'regex', value: '(?<=g)old', type: 'person' }] } } })
  await t.rejects(personFilterLookup(persons, (_, id) => cohorts.get(id) ?? null, TEAM, [[{ key: 'id', value: 3, type: 'cohort' }]]), { code: 'invalid', detail: /^Cohort 3 has conditions skylark can't evaluate/ }, 'a cohort with one')
})
