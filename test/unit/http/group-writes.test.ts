/** POST groups/'s body, read as PostHog's CreateGroupSerializer reads it, and the distinct id of the groups API's events. */
import t from 'tap'
import { refusal } from '../../helpers/refusal.js'
import { projectDistinctId, readGroupCreate } from '../../../src/http/routes/group-writes.js'

const refused = (body: unknown) => refusal(() => readGroupCreate(body))

t.test('a valid body: DRF coercions, trimmed key, empty properties as {}', async (t) => {
  t.same(readGroupCreate({ group_type_index: 0, group_key: 'acme', group_properties: { a: 1 } }), { index: 0, key: 'acme', properties: { a: 1 } })
  t.same(readGroupCreate({ group_type_index: '2', group_key: '  acme\n' }), { index: 2, key: 'acme', properties: {} }, 'digits and whitespace as DRF reads them')
  t.same(readGroupCreate({ group_type_index: 3.0, group_key: 42 }).key, '42', 'a number key is its text')
  t.equal(readGroupCreate({ group_type_index: '1.00', group_key: 'k' }).index, 1)
  for (const empty of [null, undefined, false, 0, '', []]) {
    t.same(readGroupCreate({ group_type_index: 0, group_key: 'k', group_properties: empty }).properties, {}, `${JSON.stringify(empty)} is no properties, as create_group reads it`)
  }
  t.equal(readGroupCreate({ group_type_index: 0, group_key: 'k'.repeat(400) }).key.length, 400)
  t.equal(readGroupCreate({ group_type_index: 0, group_key: '🦜'.repeat(400) }).key, '🦜'.repeat(400), 'the 400 are characters, as Python counts them')
})

t.test('refusals name the first field in error, with DRF codes and messages', async (t) => {
  const cases: Array<[unknown, string, string, string | null]> = [
    [[1], 'parse_error', 'The body must be a JSON object.', null],
    [{}, 'required', 'This field is required.', 'group_type_index'],
    [{ group_key: 'k' }, 'required', 'This field is required.', 'group_type_index'],
    [{ group_type_index: null, group_key: 'k' }, 'null', 'This field may not be null.', 'group_type_index'],
    [{ group_type_index: 'x', group_key: 'k' }, 'invalid', 'A valid integer is required.', 'group_type_index'],
    [{ group_type_index: 1.5, group_key: 'k' }, 'invalid', 'A valid integer is required.', 'group_type_index'],
    [{ group_type_index: true, group_key: 'k' }, 'invalid', 'A valid integer is required.', 'group_type_index'],
    [{ group_type_index: 2 ** 31, group_key: 'k' }, 'max_value', 'Ensure this value is less than or equal to 2147483647.', 'group_type_index'],
    [{ group_type_index: -(2 ** 31) - 1, group_key: 'k' }, 'min_value', 'Ensure this value is greater than or equal to -2147483648.', 'group_type_index'],
    [{ group_type_index: '1'.repeat(1001), group_key: 'k' }, 'max_string_length', 'String value too large.', 'group_type_index'],
    [{ group_type_index: 0 }, 'required', 'This field is required.', 'group_key'],
    [{ group_type_index: 0, group_key: '   ' }, 'blank', 'This field may not be blank.', 'group_key'],
    [{ group_type_index: 0, group_key: true }, 'invalid', 'Not a valid string.', 'group_key'],
    [{ group_type_index: 0, group_key: ['k'] }, 'invalid', 'Not a valid string.', 'group_key'],
    [{ group_type_index: 0, group_key: 'k'.repeat(401) }, 'max_length', 'Ensure this field has no more than 400 characters.', 'group_key'],
    [{ group_type_index: 0, group_key: 'a\u0000b' }, 'null_characters_not_allowed', 'Null characters are not allowed.', 'group_key'],
    [{ group_type_index: 0, group_key: 'a\ud800b' }, 'surrogate_characters_not_allowed', 'Surrogate characters are not allowed: U+D800.', 'group_key'],
    [{ group_type_index: 0, group_key: 'k', group_properties: [1] }, 'not_a_dict', 'Expected a dictionary of items but got type "list".', 'group_properties'],
    [{ group_type_index: 0, group_key: 'k', group_properties: 'plan' }, 'not_a_dict', 'Expected a dictionary of items but got type "str".', 'group_properties'],
  ]
  for (const [body, code, detail, attr] of cases) t.same(refused(body), { code, detail, attr }, JSON.stringify(body))
  t.equal(refused({ group_type_index: 0, group_key: '\ud83e\udd9c' }), null, 'a surrogate pair is a character')
})

t.test("the groups API's events carry one uuid per project", async (t) => {
  t.match(projectDistinctId(1), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  t.equal(projectDistinctId(1), projectDistinctId(1))
  t.not(projectDistinctId(1), projectDistinctId(2))
})
