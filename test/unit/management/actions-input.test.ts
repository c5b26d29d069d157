/**
 * Actions' input rules, below HTTP: the body read in PostHog's ActionSerializer order with DRF's messages
 * (steps with their own field rules, white space kept where PostHog keeps it, unknown step keys ignored,
 * regexes the store could not run refused), the blank-name rule, and the list's lenient query.
 */
import t from 'tap'
import { readAction, readListQuery } from '../../../src/management/actions/input.js'
import { toStep } from '../../../src/management/actions/record.js'
import { refusal } from '../../helpers/refusal.js'

const STEP_KEYS = ['event', 'properties', 'selector', 'tag_name', 'text', 'text_matching', 'href', 'href_matching', 'url', 'url_matching']

t.test('a body is read field by field with the values PostHog stores', async (t) => {
  t.same(readAction({ name: '  user signed up ', description: 'Test', tags: [' B ', 'a', 'b'], post_to_slack: 'true', id: 4, team_id: 9, is_action: false }), {
    name: 'user signed up',
    description: 'Test',
    tags: ['a', 'b'],
    post_to_slack: true,
  })
  t.same(readAction(null), {}, 'no body: nothing to change')
  t.same(readAction({ name: null, pinned_at: '' }), { name: null, pinned_at: null }, 'a null name is allowed, a blank pin unpins')
  t.same(readAction({ deleted: 1 }), { deleted: true })
})

t.test('steps keep what was sent and the dataclass fills the rest, url_matching contains by default', async (t) => {
  const fields = readAction({ steps: [{ text: 'sign up', selector: ' div > button ', url: '/signup', isNew: 'asdf' }, { event: 'test_event ', url: null, url_matching: null }] })
  t.same(fields.steps, [{ selector: 'div > button', text: 'sign up', url: '/signup' }, { event: 'test_event ', url: null, url_matching: null }])
  const unset = Object.fromEntries(STEP_KEYS.map((k) => [k, null]))
  t.same(toStep(fields.steps![0]!), { ...unset, selector: 'div > button', text: 'sign up', url: '/signup', url_matching: 'contains' })
  t.same(Object.keys(toStep({})), STEP_KEYS, "PostHog's field order")
  t.equal(toStep(fields.steps![1]!).url_matching, null, 'null sent stays null')
  t.same(readAction({ steps: [{ text: '  ', tag_name: ' a ' }] }).steps, [{ tag_name: ' a ', text: '  ' }], 'text and tag_name keep their spaces')
  t.same(readAction({ steps: [{ properties: [{ key: '$browser', value: 'Chrome' }] }] }).steps, [{ properties: [{ key: '$browser', value: 'Chrome' }] }])
})

t.test('the first broken field in serializer order is the one answered, with DRF messages', async (t) => {
  t.same(refusal(() => readAction({ name: '' })), { code: 'blank', detail: 'This field may not be blank.', attr: 'name' })
  t.same(refusal(() => readAction({ name: '   ' })), { code: 'blank', detail: 'This field may not be blank.', attr: 'name' })
  t.same(refusal(() => readAction({ name: 'x'.repeat(401) })), { code: 'max_length', detail: 'Ensure this field has no more than 400 characters.', attr: 'name' })
  t.same(refusal(() => readAction({ description: null })), { code: 'null', detail: 'This field may not be null.', attr: 'description' })
  t.same(refusal(() => readAction({ post_to_slack: 'maybe' })), { code: 'invalid', detail: 'Must be a valid boolean.', attr: 'post_to_slack' })
  t.same(refusal(() => readAction({ slack_message_format: 'x'.repeat(1201) })), { code: 'max_length', detail: 'Ensure this field has no more than 1200 characters.', attr: 'slack_message_format' })
  t.same(refusal(() => readAction({ steps: { event: 'x' } })), { code: 'not_a_list', detail: 'Expected a list of items but got type "dict".', attr: 'steps' })
  t.same(refusal(() => readAction({ steps: ['x'] })), { code: 'invalid', detail: 'Invalid data. Expected a dictionary, but got str.', attr: 'steps.0' })
  t.same(refusal(() => readAction({ steps: [{}, { event: '' }] })), { code: 'blank', detail: 'This field may not be blank.', attr: 'steps.1.event' })
  t.same(refusal(() => readAction({ steps: [{ selector: '  ' }] })), { code: 'blank', detail: 'This field may not be blank.', attr: 'steps.0.selector' })
  t.same(refusal(() => readAction({ steps: [{ url_matching: 'startswith' }] })), { code: 'invalid_choice', detail: '"startswith" is not a valid choice.', attr: 'steps.0.url_matching' })
  t.same(refusal(() => readAction({ steps: [{ properties: ['x'] }] })), { code: 'not_a_dict', detail: 'Expected a dictionary of items but got type "str".', attr: 'steps.0.properties.0' })
  t.same(refusal(() => readAction({ steps: [{ text: true }] })), { code: 'invalid', detail: 'Not a valid string.', attr: 'steps.0.text' })
  t.same(refusal(() => readAction([1])), { code: 'invalid', detail: 'Invalid data. Expected a dictionary, but got list.', attr: null })
})

t.test('a regex the store could not compile is refused where the step asks for a regex, and only there', async (t) => {
  for (const field of ['url', 'href', 'text'] as const) {
    const bad = { event: '$pageview', [field]: '/shardlibrary/\\d+\\', [`${field}_matching`]: 'regex' }
    t.match(refusal(() => readAction({ steps: [bad] })), { code: 'invalid', attr: `steps.0.${field}` }, field)
    t.match(refusal(() => readAction({ steps: [{ ...bad, [field]: '(?<=/)shop' }] })), { attr: `steps.0.${field}` }, `${field}: re2 has no look-behind`)
    t.ok(readAction({ steps: [{ ...bad, [field]: '/shardlibrary/\\d+' }] }), `${field}: a valid regex passes`)
    for (const mode of ['exact', 'contains']) t.ok(readAction({ steps: [{ ...bad, [`${field}_matching`]: mode }] }), `${field}: ${mode} is not a regex`)
  }
})

t.test("the list's query is read as leniently as PostHog reads it", async (t) => {
  t.same(readListQuery(new URLSearchParams()), { search: null, createdByIds: [], tags: [], ordering: null })
  t.same(readListQuery(new URLSearchParams('search=ALph&created_by=1,x, 2&tags=["billing","beta"]&ordering=-created_by')), {
    search: 'ALph',
    createdByIds: [1, 2],
    tags: ['billing', 'beta'],
    ordering: { field: 'created_by', descending: true },
  })
  t.same(readListQuery(new URLSearchParams('tags=nope&ordering=id')), { search: null, createdByIds: [], tags: [], ordering: null }, 'unreadable filters filter nothing')
})
