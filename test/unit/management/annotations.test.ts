/**
 * Annotations' input rules, below HTTP: the body read in PostHog's serializer order with DRF's messages, what
 * a blank emoji and tags become, how an insight pk is refused, and the list's query (scope aliases, date
 * bounds, search terms, the truthy spellings).
 */
import t from 'tap'
import { readAnnotation, readListQuery } from '../../../src/management/annotations/index.js'
import { refusal } from '../../helpers/refusal.js'

t.test('a body is read field by field with the values PostHog stores', async (t) => {
  t.same(readAnnotation({ content: '  v1.2 deployed\n', date_marker: '2024-05-01 12:30+0200', creation_type: 'GIT', scope: 'organization', id: 5, created_by: 1 }), {
    content: 'v1.2 deployed',
    date_marker: '2024-05-01T10:30:00.000Z',
    creation_type: 'GIT',
    scope: 'organization',
  })
  t.same(readAnnotation(null), {}, 'no body: nothing to change')
  t.same(readAnnotation({ content: null, date_marker: null, dashboard_id: null, dashboard_item: null, hidden_in_user_interface: null }), {
    content: null,
    date_marker: null,
    dashboard_id: null,
    hidden_in_user_interface: null,
  })
  t.same(readAnnotation({ emoji: '' }), { emoji: null }, 'a blank emoji is none')
  t.same(readAnnotation({ emoji: '👨‍👩‍👦' }), { emoji: '👨‍👩‍👦' }, 'a joined emoji is a few code points')
  t.same(readAnnotation({ deleted: 'true', hidden_in_user_interface: 0 }), { deleted: true, hidden_in_user_interface: false }, "DRF's boolean spellings")
  t.same(readAnnotation({ dashboard_id: '7' }), { dashboard_id: 7 })
  t.same(readAnnotation({ tags: [' Release ', 'release', 'A'] }), { tags: ['a', 'release'] }, 'tags trimmed, lower-case, once each')
})

t.test('the first broken field in serializer order is the one answered, with DRF messages', async (t) => {
  t.same(refusal(() => readAnnotation({ scope: 'x', content: 'y'.repeat(8193) })), { code: 'max_length', detail: 'Ensure this field has no more than 8192 characters.', attr: 'content' })
  t.same(refusal(() => readAnnotation({ date_marker: 5 })), {
    code: 'invalid',
    detail: 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
    attr: 'date_marker',
  })
  t.same(refusal(() => readAnnotation({ creation_type: 'BOT' })), { code: 'invalid_choice', detail: '"BOT" is not a valid choice.', attr: 'creation_type' })
  t.same(refusal(() => readAnnotation({ scope: true })), { code: 'invalid_choice', detail: '"True" is not a valid choice.', attr: 'scope' })
  t.same(refusal(() => readAnnotation({ scope: null })), { code: 'null', detail: 'This field may not be null.', attr: 'scope' })
  t.same(refusal(() => readAnnotation({ deleted: null })), { code: 'null', detail: 'This field may not be null.', attr: 'deleted' })
  t.same(refusal(() => readAnnotation({ content: 'a\u0000b' })), { code: 'null_characters_not_allowed', detail: 'Null characters are not allowed.', attr: 'content' })
  t.same(refusal(() => readAnnotation({ emoji: '🚀'.repeat(17) })), { code: 'max_length', detail: 'Ensure this field has no more than 16 characters.', attr: 'emoji' })
  t.same(refusal(() => readAnnotation({ tags: Array.from({ length: 101 }, (_, i) => `t${i}`) })), { code: 'max_length', detail: 'Ensure this field has no more than 100 elements.', attr: 'tags' })
  t.same(refusal(() => readAnnotation({ tags: ['ok', 'x'.repeat(256)] })), { code: 'max_length', detail: 'Ensure this field has no more than 255 characters.', attr: 'tags.1' })
  t.same(refusal(() => readAnnotation({ tags: { a: 1 } })), { code: 'not_a_list', detail: 'Expected a list of items but got type "dict".', attr: 'tags' })
  t.same(refusal(() => readAnnotation('text')), { code: 'invalid', detail: 'Invalid data. Expected a dictionary, but got str.', attr: null })
})

t.test('an insight is refused as a missing or mistyped pk, since there are none', async (t) => {
  t.same(refusal(() => readAnnotation({ dashboard_item: 42 })), { code: 'does_not_exist', detail: 'Invalid pk "42" - object does not exist.', attr: 'dashboard_item' })
  t.same(refusal(() => readAnnotation({ dashboard_item: ' 42 ' })), { code: 'does_not_exist', detail: 'Invalid pk " 42 " - object does not exist.', attr: 'dashboard_item' })
  t.same(refusal(() => readAnnotation({ dashboard_item: 'abc' })), { code: 'incorrect_type', detail: 'Incorrect type. Expected pk value, received str.', attr: 'dashboard_item' })
  t.same(refusal(() => readAnnotation({ dashboard_item: false })), { code: 'incorrect_type', detail: 'Incorrect type. Expected pk value, received bool.', attr: 'dashboard_item' })
  t.same(refusal(() => readAnnotation({ dashboard_item: [1] })), { code: 'incorrect_type', detail: 'Incorrect type. Expected pk value, received list.', attr: 'dashboard_item' })
})

t.test("the list's query, as PostHog's viewset reads it", async (t) => {
  const q = (s: string) => readListQuery(new URLSearchParams(s))
  t.same(q(''), { scope: null, dateFrom: null, dateTo: null, hidden: null, emojiOnly: false, search: [] })
  t.equal(q('scope=insight').scope, 'dashboard_item')
  t.equal(q('scope=').scope, null, 'an empty scope is no filter')
  t.same(refusal(() => q('scope=Project')), { code: 'invalid', detail: 'Invalid scope: Project', attr: null })
  t.same(q('date_from=2024-01-01&date_to=2024-01-02T03:04:05%2B01:00'), { ...q(''), dateFrom: '2024-01-01T00:00:00.000Z', dateTo: '2024-01-02T02:04:05.000Z' })
  t.same(refusal(() => q('date_to=tomorrow')), { code: 'invalid', detail: 'Invalid date range: date_to must be a valid ISO 8601 date', attr: null })
  t.same(refusal(() => q('date_from=2024-01-02&date_to=2024-01-01')), { code: 'invalid', detail: 'Invalid date range: date_from must be before date_to', attr: null })
  t.same(q('search=%20v1.2,%20deployed%00%20').search, ['v1.2', 'deployed'])
  for (const yes of ['true', 'TRUE', '1', 'yes']) t.equal(q(`hidden_in_user_interface=${yes}`).hidden, true, yes)
  for (const no of ['false', '0', 'banana', '']) t.equal(q(`hidden_in_user_interface=${no}`).hidden, false, no)
  t.equal(q('is_emoji=1').emojiOnly, true)
  t.equal(q('is_emoji=no').emojiOnly, false)
})
