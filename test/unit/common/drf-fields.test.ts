/** DRF's IntegerField and CharField as PostHog's serializers run them: what they take, and each refusal's code and message. */
import t from 'tap'
import { drfInteger, drfText } from '../../../src/common/drf-fields.js'
import { refusal } from '../../helpers/refusal.js'

t.test('IntegerField takes integral numbers, digit strings and a .0 tail, as int() after DRF strips it', async (t) => {
  const read = (v: unknown) => drfInteger(v, 'n')
  t.equal(read(7), 7)
  t.equal(read(' -12 '), -12)
  t.equal(read('3.0'), 3)
  t.equal(read('3.'), 3)
  t.equal(read('+4.000 '), 4)
  t.equal(drfInteger(null, 'n', { nullable: true }), null)
  for (const bad of ['3.5', '3.01', '1e3', '', 'x', true, [1], {}, 1.5]) {
    t.same(refusal(() => read(bad)), { code: 'invalid', detail: 'A valid integer is required.', attr: 'n' }, JSON.stringify(bad))
  }
  t.same(refusal(() => read('1'.repeat(1001))), { code: 'max_string_length', detail: 'String value too large.', attr: 'n' })
  t.same(refusal(() => read(null)), { code: 'null', detail: 'This field may not be null.', attr: 'n' })
  t.same(refusal(() => drfInteger('0.0', 'n', { min: 1 })), { code: 'min_value', detail: 'Ensure this value is greater than or equal to 1.', attr: 'n' })
})

t.test('CharField trims, counts code points, then refuses NUL and lone surrogates in that order', async (t) => {
  t.equal(drfText('  a b \n', 's'), 'a b')
  t.equal(drfText(' a ', 's', { trim: false }), ' a ')
  t.equal(drfText(12, 's'), '12')
  t.equal(drfText('🦜'.repeat(3), 's', { maxLength: 3 }), '🦜🦜🦜', 'a surrogate pair is one character')
  t.equal(drfText('', 's', { allowBlank: true }), '')
  const cases: Array<[unknown, { maxLength?: number }, string, string]> = [
    [' ', {}, 'blank', 'This field may not be blank.'],
    [true, {}, 'invalid', 'Not a valid string.'],
    [{}, {}, 'invalid', 'Not a valid string.'],
    ['abcd', { maxLength: 3 }, 'max_length', 'Ensure this field has no more than 3 characters.'],
    ['a\u0000b', {}, 'null_characters_not_allowed', 'Null characters are not allowed.'],
    ['a\udfffb', {}, 'surrogate_characters_not_allowed', 'Surrogate characters are not allowed: U+DFFF.'],
    ['a\u0000\ud800cd', { maxLength: 3 }, 'max_length', 'Ensure this field has no more than 3 characters.'],
  ]
  for (const [value, options, code, detail] of cases) t.same(refusal(() => drfText(value, 's', options)), { code, detail, attr: 's' }, JSON.stringify(value))
})
