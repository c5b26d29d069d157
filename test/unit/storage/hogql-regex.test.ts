/**
 * HogQL's regex functions (match, extract, replaceRegexpOne, replaceRegexpAll) and operators (=~, =~*, !~, !~*) give
 * current ClickHouse's answers (PostHog's servers) on both stores: re2's leftmost-first match and groups, a dot that
 * takes a line break, ASCII `\w` and `\d`, a plain pattern replaced as text. What the stores can't run alike is
 * refused when the query is read.
 */
import t from 'tap'
import { compileSearchRegex } from '../../../src/flags/index.js'
import { parseHogqlMath, parseHogqlQuery } from '../../../src/storage/events/index.js'
import { parseHogqlCondition } from '../../../src/storage/events/hogql-read.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'

const TEAM = 7
const TEXTS: Record<string, Record<string, unknown>> = {
  d1: { s: 'https://www.x.io/a/b?q=1' },
  d2: { s: 'Sign Up now' },
  d3: { s: 'a\nb' },
  d4: { s: 'héllo wörld 42' },
  d5: { s: 'abc123def45' },
  d6: { s: '' },
  d7: {},
}
const clock = { now: Date.parse('2024-07-01T00:00:00Z'), zone: 'UTC', regex: compileSearchRegex }

/** Each expression over properties.s, its value for d1…d7. */
const CASES: Array<[string, unknown[]]> = [
  [String.raw`extract(properties.s, '[0-9]+')`, ['1', '', '', '42', '123', '', null]],
  [String.raw`extract(properties.s, '^https?://([^/]+)')`, ['www.x.io', '', '', '', '', '', null]],
  // 18.16 looks for the pattern's literal ("sign") case and all first; written so that it does not (searchPattern).
  [String.raw`extract(properties.s, '(?i)sign (\\w+)')`, ['', 'Up', '', '', '', '', null]],
  [String.raw`extract(properties.s, 'a.b')`, ['a/b', '', 'a\nb', '', '', '', null]],
  [String.raw`extract(properties.s, 'h(.)llo')`, ['', '', '', 'é', '', '', null]],
  // The first group, empty where it took no part.
  [String.raw`extract(properties.s, 'x|(\\d)')`, ['', '', '', '4', '1', '', null]],
  [String.raw`replaceRegexpAll(properties.s, '[0-9]', '#')`, ['https://www.x.io/a/b?q=#', 'Sign Up now', 'a\nb', 'héllo wörld ##', 'abc###def##', '', null]],
  // re2's \w is ASCII: é and ö end a word.
  [String.raw`replaceRegexpOne(properties.s, '(\\w+) (\\w+)', '\\2 \\1')`, ['https://www.x.io/a/b?q=1', 'Up Sign now', 'a\nb', 'héw lloörld 42', 'abc123def45', '', null]],
  [String.raw`replaceRegexpAll(properties.s, '\\s+', '_')`, ['https://www.x.io/a/b?q=1', 'Sign_Up_now', 'a_b', 'héllo_wörld_42', 'abc123def45', '', null]],
  [String.raw`replaceRegexpOne(properties.s, '^', '>')`, ['>https://www.x.io/a/b?q=1', '>Sign Up now', '>a\nb', '>héllo wörld 42', '>abc123def45', '>', null]],
  [String.raw`replaceRegexpOne(properties.s, 'b.', '[\\0\\\\]')`, ['https://www.x.io/a/[b?\\]q=1', 'Sign Up now', 'a\nb', 'héllo wörld 42', 'a[bc\\]123def45', '', null]],
  // A pattern without metacharacters is replaced as text, the replacement as written (current servers' shortcut).
  [String.raw`replaceRegexpAll(properties.s, 'o', '\\0')`, ['https://www.x.i\\0/a/b?q=1', 'Sign Up n\\0w', 'a\nb', 'héll\\0 wörld 42', 'abc123def45', '', null]],
  [`replaceRegexpAll(properties.s, '', 'x')`, ['https://www.x.io/a/b?q=1', 'Sign Up now', 'a\nb', 'héllo wörld 42', 'abc123def45', '', null]],
  [String.raw`properties.s =~ '^[a-z]+\\d'`, [0, 0, 0, 0, 1, 0, null]],
  [`properties.s =~* '^sign'`, [0, 1, 0, 0, 0, 0, null]],
  [`properties.s !~ 'o'`, [0, 0, 1, 0, 1, 1, null]],
  [`properties.s !~* 'W'`, [0, 0, 1, 0, 1, 1, null]],
  [String.raw`match(properties.s, '\\bw')`, [1, 0, 0, 1, 0, 0, null]],
]

t.test('regex functions and operators give current ClickHouse answers on both stores', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { sqlite, clickhouse } = await bothEventStores(t, pageviewRows(TEAM, TEXTS), 'skylark_hogql_regex')
  for (const [expr, want] of CASES) {
    const plan = parseHogqlQuery(`SELECT ${expr} FROM events ORDER BY distinct_id`, clock)
    t.same((await sqlite.hogqlQuery(TEAM, plan)).map((row) => row[0]), want, `SQLite: ${expr}`)
    t.same((await clickhouse.hogqlQuery(TEAM, plan)).map((row) => row[0]), want, `ClickHouse: ${expr}`)
  }
})

t.test("re2's syntax where Rust's differs: \\< and {,m} are literals, (?U) swaps greed", { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { sqlite, clickhouse } = await bothEventStores(t, pageviewRows(TEAM, { d1: { s: '<a{,2}> aaa' } }), 'skylark_hogql_re2')
  const exprs = [String.raw`match(properties.s, '\\<a')`, String.raw`extract(properties.s, 'a{,2}')`, `extract(properties.s, '(?U) a+')`, `extract(properties.s, '(?U) a+?')`, String.raw`replaceRegexpOne(properties.s, '(?U)(a+)', '[\\1]')`]
  const want = [1, 'a{,2}', ' a', ' aaa', '<[a]{,2}> aaa']
  const plan = parseHogqlQuery(`SELECT ${exprs.join(', ')} FROM events`, clock)
  t.same((await sqlite.hogqlQuery(TEAM, plan))[0], want, 'SQLite')
  t.same((await clickhouse.hogqlQuery(TEAM, plan))[0], want, 'ClickHouse')
})

t.test('what the stores would run apart is refused when the query is read', async (t) => {
  const refused = (expr: string, message: RegExp) => t.throws(() => parseHogqlQuery(`SELECT ${expr} FROM events`, clock), { message }, expr)
  refused(String.raw`extract(properties.s, '(?=a)')`, /extract\(\)'s pattern "\(\?=a\)" is one skylark's stores can't run/)
  refused(String.raw`replaceRegexpAll(properties.s, '(a)\\1', '')`, /can't run/)
  refused(`extract(properties.s, '(')`, /can't run/)
  refused(String.raw`replaceRegexpAll(properties.s, '\\s*', '')`, /can match an empty text, which ClickHouse servers replace differently by version/)
  refused(String.raw`replaceRegexpOne(properties.s, '(a)', '\\2')`, /names \\2, but the pattern has 1 capturing group\./)
  refused(String.raw`replaceRegexpOne(properties.s, 'a', '\\1')`, /names \\1, but the pattern has 0 capturing groups/)
  refused(`extract(properties.s, properties.p)`, /extract\(\) takes its pattern as a text literal/)
  refused(`replaceRegexpAll(properties.s, 'a', properties.p)`, /takes its pattern and replacement as text literals/)
  refused(`properties.s =~ properties.p`, /match\(\) takes its pattern as a text literal/)
  refused(`extract(1, 'a')`, /takes texts, not numbers/)
  t.throws(() => parseHogqlCondition("extract(properties.s, 'a') = 'a'"), { message: /extract\(\) is read in HogQL queries only here, not in HogQL filters/ })
  t.throws(() => parseHogqlMath("properties.s =~ 'a'"), { message: /match\(\) is read in HogQL filters only here, not in HogQL math/ })
  t.match(parseHogqlCondition("properties.s !~* 'a'"), { op: 'not', args: [{ op: 'call', fn: 'match', args: [{}, { value: '(?i)a' }] }] }, 'a filter reads the operators as match()')
})

t.test("the search engine reads patterns as ClickHouse's re2: a dot takes a line break, classes and word bounds are ASCII", async (t) => {
  const test = (pattern: string, text: string) => compileSearchRegex(pattern)?.test(text)
  t.same([test('a.b', 'a\nb'), test('^\\w+$', 'héllo'), test('\\d', '٣'), test('\\s', '\u000b'), test('\\s', '\u00a0'), test('(?i)É', 'é'), test('\\bé', ' é')], [true, false, false, false, false, true, false])
  const found = compileSearchRegex('(b)(x)?')!.find('😀ab')
  t.same([...found!], [3, 4, 3, 4, -1, -1], 'offsets of the text (UTF-16), -1 for a group that took no part')
  const ab = compileSearchRegex('a(b)')!
  t.same([ab.find('😀ab😀ab', 0), ab.find('😀ab😀ab', 4), ab.find('😀ab😀ab', 8), ab.find('xab', 1)].map((m) => m && [...m]), [[2, 4, 3, 4], [6, 8, 7, 8], null, [1, 3, 2, 3]], 'from a match\'s end on, then in another text')
  t.equal(compileSearchRegex('(?=a)')!.find('a'), undefined, 'a fancy pattern is refused, not searched')
  // Each refused by 18.16's re2 ("cannot compile"); `(?<n>` is read by current servers' re2, `(?P<n>` by both.
  t.same(['(?x)a', '(?u)a', '(?R)a', '\\ha', '\\e', '[a&&b]', '[a--b]', '[[a]b]', '(?<n>a)'].filter((p) => compileSearchRegex(p) !== null), [], "what re2 lacks is no pattern of the stores'")
  t.ok(compileSearchRegex('(?P<n>a)') !== null)
})

t.test("Unicode classes and quoted text read as 18.16's re2 reads them", async (t) => {
  const test = (pattern: string, text: string) => compileSearchRegex(pattern)?.test(text)
  // Each refused by 18.16's re2: a property re2 lacks, a name in another case or a short alias, a key=value form.
  const refused = ['\\p{Alphabetic}', '\\p{latin}', '\\p{Latn}', '\\p{Script=Latin}', '\\p{Cn}', '\\p{LC}', '\\p{L&}', '\\pl', '\\p{Unknown}', '\\p{Zinh}', '[\\Qa\\E]']
  t.same(refused.filter((p) => compileSearchRegex(p) !== null), [])
  // Figures read from 18.16's match(): its \pC leaves out unassigned code points (U+0378), and takes private use.
  t.same(
    [test('^\\p{Greek}+$', 'αβ'), test('\\p{Thai}', 'a'), test('\\p{Old_Italic}', 'a'), test('\\p{^Lu}', 'a'), test('\\PL', 'a'), test('(?i)\\p{Lu}', 'a'), test('^\\pC$', '\u0378'), test('^\\pC$', '\ue000'), test('^\\p{Any}$', '\u0378')],
    [true, false, false, true, false, true, false, true, true],
  )
  // \Q…\E: literals up to \E or the end; a quantifier after it repeats the last one.
  t.same(
    [test('^\\Qa.b\\E$', 'a.b'), test('^\\Qa.b\\E$', 'axb'), test('^\\Qa.b', 'a.b'), test('^\\Qab\\E+$', 'abb'), test('^\\Qab\\E+$', 'abab'), test('(?i)^\\Qab\\E$', 'AB'), test('^\\Qa\\\\b\\E$', 'a\\\\b')],
    [true, false, true, true, false, true, true],
  )
})
