/**
 * The pure parts of shared experiment metrics: how a body is read (DRF's messages), what query is stored
 * (PostHog's uuid rules and metric checks), the event match of the list filter, which list a link counts
 * in, and how linked uuids join and leave an experiment's ordering lists.
 */
import t from 'tap'
import { readSavedMetricBody } from '../../../src/experiments/saved-metrics/input.js'
import { appendMissing, syncLinkedOrdering } from '../../../src/experiments/saved-metrics/ordering.js'
import { queryActionIds, queryNamesEvent } from '../../../src/experiments/action-refs.js'
import { queryToStore } from '../../../src/experiments/saved-metrics/query.js'
import { isPrimary } from '../../../src/experiments/saved-metrics/record.js'
import { uuidsByList } from '../../../src/experiments/saved-metrics/links.js'

const mean = (event: string) => ({ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event } })
const thrown = (fn: () => unknown) => {
  try {
    fn()
  } catch (error) {
    return error as { status: number; code: string; detail: string; attr: string | null }
  }
  return null
}
const anyName = () => {}

t.test('bodies are read field by field, in the serializer order, with DRF messages', async (t) => {
  t.same(readSavedMetricBody({ name: ' Rate ', description: null, query: mean('a'), tags: ['x'], id: 9, created_by: 1 }, true, anyName), {
    name: 'Rate',
    description: null,
    query: mean('a'),
    tags: ['x'],
  })
  t.same(readSavedMetricBody(undefined, false, anyName), {}, 'an empty PATCH changes nothing')
  t.match(thrown(() => readSavedMetricBody({ query: mean('a') }, true, anyName)), { code: 'required', attr: 'name' })
  t.match(thrown(() => readSavedMetricBody({ name: 'n' }, true, anyName)), { code: 'required', attr: 'query' })
  t.match(thrown(() => readSavedMetricBody({ name: ' ', query: mean('a') }, true, anyName)), { code: 'blank', attr: 'name' })
  t.match(thrown(() => readSavedMetricBody({ name: 'n', description: 'd'.repeat(401) }, false, anyName)), { code: 'max_length', attr: 'description' })
  t.match(thrown(() => readSavedMetricBody({ tags: [{}] }, false, anyName)), { code: 'invalid', attr: 'tags', detail: 'Not a valid string.' })
  t.match(thrown(() => readSavedMetricBody('x', false, anyName)), { attr: null, detail: 'Invalid data. Expected a dictionary, but got str.' })
  const taken = () => {
    throw new Error('taken')
  }
  t.throws(() => readSavedMetricBody({ name: 'n', query: null }, true, taken), /taken/, "the name's check comes before the next field")
})

t.test('a stored query: a uuid of its own for life, checked as inline metrics are', async (t) => {
  const fresh = queryToStore({ ...mean('a'), uuid: 'sent' }, null)
  t.match(fresh, { ...mean('a'), uuid: /^[0-9a-f-]{36}$/ })
  t.not(fresh.uuid, 'sent', 'a new metric never takes the uuid sent')
  t.equal(queryToStore(mean('b'), fresh).uuid, fresh.uuid, 'an edit keeps the stored uuid')
  t.match(thrown(() => queryToStore({ ...mean('b'), uuid: 'other' }, fresh)), { attr: null, detail: 'Saved metric UUID cannot be changed' })
  t.match(thrown(() => queryToStore({}, null)), { detail: 'Query is required to create a saved metric' })
  t.match(thrown(() => queryToStore([], fresh)), { detail: 'Query is required to create a saved metric' })
  t.match(thrown(() => queryToStore([1], null)), { detail: 'Invalid metric: must be a dict' })
  t.match(thrown(() => queryToStore({ kind: 'ExperimentMetric', metric_type: 'funnel', series: [] }, null)), { detail: /^Invalid metric: funnel metrics require at least one step/ })
  t.match(thrown(() => queryToStore({ kind: 'ExperimentMetric' }, null)), { detail: /^Invalid metric: \[\{'loc': \(\), 'type': 'union_tag_not_found'/ })
  // A stored query sent back as it is passes, whatever rule it would meet now.
  const stored = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [], uuid: 'u' }
  t.same(queryToStore({ ...stored }, stored), stored)
})

t.test('the event filter finds an EventsNode naming the event anywhere in the query', async (t) => {
  t.ok(queryNamesEvent(mean('a'), 'a'))
  t.ok(queryNamesEvent({ kind: 'ExperimentMetric', metric_type: 'funnel', series: [mean('x').source, { kind: 'EventsNode', event: 'b' }] }, 'b'))
  t.notOk(queryNamesEvent(mean('abc'), 'ab'), 'the whole name')
  t.notOk(queryNamesEvent({ kind: 'ActionsNode', event: 'a' }, 'a'), 'only EventsNodes')
  t.notOk(queryNamesEvent(null, 'a'))
})

t.test("an ActionsNode names its action's step events, its id read as PostHog's int() reads it", async (t) => {
  const steps = new Map([[7, ['a']]])
  for (const id of [7, 7.9, '7', ' 7 ', '+7', '0_7']) {
    t.ok(queryNamesEvent({ kind: 'ActionsNode', id }, 'a', steps), JSON.stringify(id))
    t.same([...queryActionIds({ series: [{ kind: 'ActionsNode', id }] })], [7], `${JSON.stringify(id)} is action 7`)
  }
  for (const id of ['7.0', '7a', '7_', '_7', '', null, [7]]) {
    t.notOk(queryNamesEvent({ kind: 'ActionsNode', id }, 'a', steps), JSON.stringify(id))
    t.same([...queryActionIds({ kind: 'ActionsNode', id })], [], `${JSON.stringify(id)} names no action`)
  }
  t.notOk(queryNamesEvent({ kind: 'ActionsNode', id: 7 }, 'b', steps), 'not an event of its steps')
  t.same([...queryActionIds([true, false, -0.5].map((id) => ({ kind: 'ActionsNode', id })))], [1, 0], 'booleans are 1 and 0, -0.5 is 0')
})

t.test('a link counts as primary unless its type says otherwise', async (t) => {
  t.ok(isPrimary(null))
  t.ok(isPrimary({}))
  t.ok(isPrimary({ type: 'primary' }))
  t.notOk(isPrimary({ type: 'secondary' }))
  t.notOk(isPrimary({ type: null }), "PostHog's `metadata.get('type', 'primary')` reads a null type as not primary")
  const metric = (uuid: string) => ({ id: 1, team_id: 1, name: 'n', description: null, query: { uuid }, tags: [], created_by_id: null, created_at: '', updated_at: '' })
  t.same(uuidsByList([{ metric: metric('p'), metadata: null }, { metric: metric('s'), metadata: { type: 'secondary' } }]), { primary: ['p'], secondary: ['s'] })
})

t.test('linked uuids join and leave the ordering lists', async (t) => {
  t.same(appendMissing(null, []), null, 'nothing to add leaves a null ordering null')
  t.same(appendMissing(null, ['s']), ['s'])
  t.same(appendMissing(['a', 's'], ['s', 't', 't']), ['a', 's', 't'])
  t.same(syncLinkedOrdering(['a', 'old', 'b'], ['old'], ['new']), ['a', 'b', 'new'])
  t.same(syncLinkedOrdering(['b', 'a'], ['a'], ['a']), ['b', 'a'], 'unchanged links leave the order as it is')
  t.same(syncLinkedOrdering(null, ['x'], []), [])
  t.same(syncLinkedOrdering(null, [], []), null)
})
