import t, { type Test } from 'tap'
import { compileRegex, enableLinearRegex } from '../../../src/flags/regex/index.js'
import { compileOperator } from '../../../src/flags/operators.js'
import { FANCY_STEP_LIMIT, MAX_WORK } from '../../../src/flags/regex/engine.js'

/** null = the pattern is invalid for Rust/fancy_regex (both operators are then false). */
function test(pattern: string, input: string): boolean | null {
  const re = compileRegex(pattern)
  return re === null ? null : re.test(input)
}

type Row = [pattern: string, input: string, expected: boolean | null]

function rows(t: Test, list: Row[]): void {
  for (const [p, s, expected] of list) t.equal(test(p, s), expected, `/${p}/ on ${JSON.stringify(s.length > 40 ? s.slice(0, 40) + '…' : s)}`)
}

t.test('Rust regex syntax', async (t) => {
  t.test('searches unanchored like Regex::find', async (t) =>
    rows(t, [
      ['\\.com$', 'value2.com', true],
      ['\\.com$', '.com343tfvalue5', false],
      ['', 'anything', true],
      ['a|', 'zzz', true],
      ['^b$', 'a\nb\nc', false],
      ['(?m)^b$', 'a\nb\nc', true],
      ['(?m)^b$', 'a\r\nb\r\nc', false],
      ['(?mR)^b$', 'a\r\nb\r\nc', true],
      ['.', '\n', false],
      ['.', '\r', true],
      ['(?s).', '\n', true],
      ['\\Aab\\z', 'ab', true],
      ['x{2}', 'xx', true],
      ['a{1,20}b', 'aaab', true],
      ['^[0-9a-f]{32}$', 'a'.repeat(32), true],
      ['^[0-9a-f]{32}$', 'a'.repeat(31), false],
      ['(?x) a b  # a comment', 'ab', true],
      ['(?:ab)+$', 'xabab', true],
      ['(?i-s:A.)', 'a\n', false],
      ['(?-i)a', 'A', false],
    ]))

  t.test('rejects what regex-syntax rejects', async (t) =>
    rows(t, [
      ['?*', 'value', null],
      ['a**', 'a', null],
      ['a{3,1}', 'aaa', null],
      ['[', 'x', null],
      ['(', 'x', null],
      [')', 'x', null],
      ['\\y', 'y', null],
      ['[z-a]', 'z', null],
      ['(?P<n>a)(?P<n>b)', 'ab', null],
      ['\\p{NoSuchProperty}', 'x', null],
      ['(?<=a+)b', 'aab', null],
      ['(?)', 'x', null],
      ['(?i-)', 'x', null],
      ['(?z)', 'x', null],
      // Names that only Object.prototype knows are unknown names, as in Rust.
      ['\\b{constructor}x', 'x', null],
      ['\\b{__proto__}', 'x', null],
      ['\\p{constructor}', 'c', null],
    ]))

  // fancy_regex parses the pattern itself before regex-syntax sees it (PostHog builds every flag regex with
  // fancy_regex::RegexBuilder): a `{` that starts no quantifier is a literal, as in PCRE and Oniguruma.
  t.test('reads a brace that starts no quantifier as a literal, as fancy_regex does', async (t) =>
    rows(t, [
      ['{', 'x{y', true],
      ['{', 'xy', false],
      ['a{', 'a{', true],
      ['a{', 'a', false],
      ['/api/{version}/', '/api/{version}/x', true],
      ['/api/{version}/', '/api/v1/x', false],
      ['a{ 2 }', 'a{ 2 }', true],
      ['a{ 2 }', 'aa', false],
      ['x{}', 'x{}', true],
      ['(a|{)', '{', true],
      // one quantifier a piece: a second counted one is literal text
      ['a{2}{3}', 'aa{3}', true],
      ['a{2}{3}', 'aaaaaa', false],
      ['a*{2}', '{2}', true],
      ['a{1000}{1000}', 'a{1000}', false],
      ['(?i){x', '{X', true],
      // `{,m}` and `{,}` count from 0
      ['a{,3}b', 'xaab', true],
      ['^a{,3}b$', 'aaaab', false],
      ['^a{,}b$', 'b', true],
      ['(?x)^a{ 2 , 3 }$', 'aaa', true],
    ]))

  t.test('refuses a quantifier on what cannot repeat, and after a quantifier, as fancy_regex 0.17 does', async (t) =>
    rows(t, [
      ['^*', 'x', null],
      ['\\b+', 'x', null],
      ['(?=a)*', 'a', null],
      ['^{2}', 'x', null],
      ['(?:)*', 'x', null],
      ['(?:^)*', 'x', null],
      ['(?i){2}', 'x', null],
      ['a*?*', 'a', null],
      // a lazy and a possessive mark together: an atomic lazy repeat, which commits to its first (shortest) try
      ['^a{1,3}?+b$', 'aab', false],
      ['^a{1,3}?+ab$', 'aab', true],
      ['()*', 'x', true],
      ['(^)*x', 'x', true],
    ]))

  t.test('has Python backreferences by name', async (t) =>
    rows(t, [
      ['(?P<n>a)(?P=n)', 'aa', true],
      ['(?P<n>a)(?P=n)', 'ab', false],
      ['(?P=n)(?P<n>a)', 'aa', null],
      ['(?P<n>a)(?P=m)', 'aa', null],
    ]))

  t.test('has Unicode classes and case folding by default', async (t) =>
    rows(t, [
      ['^.$', '😀', true],
      ['^..$', '😀', false],
      ['\\d', '٣', true],
      ['(?-u)\\d', '٣', false],
      ['\\w+', 'é', true],
      ['(?-u)\\w', 'é', false],
      ['\\bfoo\\b', 'a foo b', true],
      ['\\bfoo\\b', 'afoo', false],
      ['\\bé', ' é', true],
      ['\\p{Greek}', 'α', true],
      ['\\p{Lu}', 'a', false],
      ['(?i)\\p{Lu}', 'a', true],
      ['\\pL', 'x', true],
      ['\\P{L}', 'x', false],
      ['\\p{sc=Latin}', 'x', true],
      ['\\x{1F600}', '😀', true],
      ['\\u00e9', 'é', true],
      ['(?i)HELLO', 'say hello', true],
      ['(?i)[a-c]x', 'BX', true],
      ['(?i)[^a]', 'A', false],
      ['(?i)k', '\u212a', true],
      ['(?i)s', 'ſ', true],
      ['(?i)i', 'ı', false],
      ['(?i)straße', 'STRASSE', false],
      ['(?i:a)b', 'Ab', true],
      ['(?i:a)b', 'AB', false],
    ]))

  t.test('supports nested classes, set operations and POSIX classes', async (t) =>
    rows(t, [
      ['[[:alpha:]]+', 'abc', true],
      // regex-syntax reads `[:name:]` with an unknown name as a nested class: `[[:loower:]]` is `[:elorw]`.
      ['[[:loower:]]', 'w', true],
      ['[[:loower:]]', ':', true],
      ['[[:loower:]]', 'a', false],
      ['[[:^loower:]]', '^', true],
      ['[[:constructor:]]', 'c', true],
      ['[[:constructor:]]', 'a', false],
      ['[[:^digit:]]', '5', false],
      ['[a-z&&[^aeiou]]', 'e', false],
      ['[a-z&&[^aeiou]]', 'x', true],
      ['[\\w--\\d]', '5', false],
      ['[a-c~~b-d]', 'b', false],
      ['[a-c~~b-d]', 'a', true],
      ['[]a]', ']', true],
      ['[a-]', '-', true],
      ['\\-', '-', true],
      ['[\\[\\]]', '[', true],
    ]))

  t.test('supports the fancy_regex extensions PostHog enabled in 2026', async (t) =>
    rows(t, [
      ['(a)\\1', 'aa', true],
      ['(a)\\1', 'ab', false],
      ['(\\w+)\\s\\1', 'hello hello', true],
      ['(?<w>ab)\\k<w>', 'abab', true],
      ['(?i)(a)\\1', 'aA', true],
      ['foo(?=bar)', 'foobar', true],
      ['foo(?!bar)', 'foobar', false],
      ['(?<=\\$)\\d+', 'cost $42', true],
      ['(?<!\\$)\\b\\d+', '$4', false],
      ['^(?=.*\\d)(?=.*[a-z]).{8,}$', 'passw0rdx', true],
      ['^(?=.*\\d)(?=.*[a-z]).{8,}$', 'password', false],
      ['(?>a+)b', 'aaab', true],
      ['(?>a+)a', 'aaa', false],
      ['a++a', 'aaa', false],
      ['\\<foo\\>', 'a foo b', true],
      ['\\b{start}foo', 'xfoo', false],
    ]))
})

t.test('hostile patterns', async (t) => {
  const long = 'a'.repeat(100_000)
  const cases: [string, string, string][] = [
    ['nested quantifier on ASCII input', '(a+)+$', long + '!'],
    ['nested quantifier on non-ASCII input', '(a+)+$', 'é' + long + '!'],
    ['alternation blow-up', '(a|aa)+$', long + '!'],
    ['overlapping classes', '(\\w+\\d?)+x', long],
    ['large counted repetition', '(a{1,40}){1,40}$', long + '!'],
    ['case-insensitive nested', '(?i)(A+)+$', long + '!'],
    ['look-ahead over a catastrophic body', '(?=(a+)+$)x', long + '!'],
    ['backreference', '(\\w+)+\\1$', long + '!'],
  ]
  // Steps, not milliseconds: a clock fails on a loaded machine rather than on slow code. FANCY_STEP_LIMIT
  // (2 million steps) is the smallest budget an engine here grants a search; a backtracking engine without
  // memoisation or a budget would take far more than that on any of these.
  for (const [name, pattern, input] of cases) {
    t.test(`stay within ${FANCY_STEP_LIMIT.toLocaleString('en')} steps: ${name}`, async (t) => {
      const meter = { steps: 0 }
      const result = compileRegex(pattern)!.test(input, meter)
      t.ok(meter.steps <= FANCY_STEP_LIMIT, `${meter.steps} steps`)
      t.not(result, true, 'no match (or no answer) for this input')
    })
  }

  t.test('give no answer past the budget, which both operators read as false', async (t) => {
    const input = 'a'.repeat(30_000) + '!'
    const meter = { steps: 0 }
    t.equal(compileRegex('(?=(a+)+$)x')!.test(input, meter), null)
    t.ok(meter.steps > 0 && meter.steps <= FANCY_STEP_LIMIT, `gave up after ${meter.steps} steps`)
    t.equal(compileOperator('regex', '(?=(a+)+$)x', 'UTC')(input, 0), false)
    t.equal(compileOperator('not_regex', '(?=(a+)+$)x', 'UTC')(input, 0), false)
  })

  t.test('refuse pattern × input products too large to search quickly', async (t) => {
    const many = compileRegex(`(?:${Array.from({ length: 2000 }, (_, i) => `dom${i}\\.com`).join('|')})$`)!
    const refused = { steps: 0 }
    t.equal(many.test('x'.repeat(10_000), refused), null)
    t.equal(refused.steps, 0, 'refused before any search')
    const short = { steps: 0 }
    t.equal(many.test('me@dom1999.com', short), true, 'short inputs still run')
    t.ok(short.steps > 0 && short.steps <= MAX_WORK, `${short.steps} steps`)
  })
})

t.test('enableLinearRegex', async (t) => {
  t.test('is idempotent and enables the l flag', async (t) => {
    enableLinearRegex()
    enableLinearRegex()
    t.ok(new RegExp('a+', 'l').test('aa'))
    t.equal(compileRegex('^[a-z]+@example\\.com$')!.asciiEngine, 'linear')
    t.equal(compileRegex('(a)\\1')!.asciiEngine, 'own')
  })
})
