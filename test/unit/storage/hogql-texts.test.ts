/**
 * hogql-texts.ts's functions give current ClickHouse's answers (its documentation's examples and stateless tests), on a
 * real 18.16 server their SQL gives what the evaluation gives for random texts with multibyte characters and loose
 * bytes, and queries read them on both stores.
 */
import t from 'tap'
import { parseHogqlQuery } from '../../../src/storage/events/index.js'
import { evaluateHogql, type HogqlNode, type HogqlValue } from '../../../src/storage/events/hogql-math.js'
import { textFunctionSql, textFunctionValue, type TextFunction } from '../../../src/storage/events/hogql-texts.js'
import { hogqlTextSql, textBytes } from '../../../src/storage/events/hogql-values.js'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'
import { Rng, fuzzSeed } from '../fuzz/rng.js'

const clock = { now: Date.parse('2024-07-01T00:00:00Z'), zone: 'UTC' }
/** The values of constant columns, as the evaluation computes them. */
const row = (columns: string): HogqlValue[] => parseHogqlQuery(`select ${columns}`, clock).columns.map((c) => evaluateHogql(c.expr, () => null))

t.test("the functions give current ClickHouse's documented answers", async (t) => {
  t.same(row("leftPad('abc', 7, '*'), leftPad('abc', 7), leftPad('abc', 2, '*'), rightPad('abc', 7, '*'), rightPad('abc', 2), leftPad('abc', 8, 'xy'), leftPad('abc', 5, '')"), ['****abc', '    abc', 'ab', 'abc****', 'ab', 'xyxyxabc', '  abc'])
  t.same(row("repeat('abc', 10), repeat('abc', 0), repeat('abc', -3)"), ['abcabcabcabcabcabcabcabcabcabc', '', ''])
  t.same(row("concatWithSeparator('a', '1', '2', '3', '4'), concatWithSeparator(', ', 'x', 1.5, -0), concatWithSeparator('-'), concatWithSeparator('-', 'a', null)"), ['1a2a3a4', 'x, 1.5, -0', '', null])
  t.same(row("countSubstrings('', '.'), countSubstrings('aaa', ''), countSubstrings('.foobar.com.', '.'), countSubstrings('com.foo.com.bar.com', 'com'), countSubstrings('aaaa', 'aa')"), [0, 0, 3, 3, 2], '01590_countSubstrings')
  t.same(row("lengthUTF8('Здравствуй, мир!'), length('Здравствуй, мир!'), positionUTF8('Привет, мир!', 'мир'), position('Привет, мир!', 'мир'), positionUTF8('ab', '')"), [16, 29, 9, 15, 1])
  t.same(row("positionCaseInsensitive('Hello, world!', 'hello'), positionCaseInsensitive('aÄb', 'äB'), positionCaseInsensitive('aÄb', 'ÄB')"), [1, 0, 2], 'ASCII letters only fold')
  t.same(row("reverse('abc'), reverse('')"), ['cba', ''])
  t.same(row("format('{1} {0} {1}', 'World', 'Hello'), format('{} {}', 'Hello', 'World'), format('{{}}{}', 'x'), format('{}', 'a', null), format('-', 'a')"), ['Hello World Hello', 'Hello World', '{}x', null, '-'], 'format: numbered, in turn, braces doubled; NULL where a value is, read or not')
  t.same(row("countSubstringsCaseInsensitive('AAAA', 'aa'), countSubstringsCaseInsensitive('aBA ba', 'AB'), countSubstringsCaseInsensitive('ÄÄ', 'ä')"), [2, 1, 0], 'ASCII letters fold')
  t.same(row("appendTrailingCharIfAbsent('ab', '/'), appendTrailingCharIfAbsent('ab/', '/'), appendTrailingCharIfAbsent('', '/')"), ['ab/', 'ab/', ''])
  t.same(row("left('Hello', 3), left('Hello', -3), left('Hello', 0), right('Hello', 3), right('Hello', -3), right('Hello', 9), left('Hello', 9)"), ['Hel', 'He', '', 'llo', 'lo', 'Hello', 'Hello'])
  t.same(row("reverse('é'), lengthUTF8(reverse('é')), left('é', 1), lengthUTF8(left('é', 1))"), ['\uDCA9\uDCC3', 1, '\uDCC3', 1], 'bytes: a character cut or reversed keeps its bytes, counted where one begins')
})

t.test('arguments are refused where the stores do not read them', async (t) => {
  const refused: Array<[string, RegExp]> = [
    ["select leftPad(event, -1) from events", /leftPad\(\) takes its length as an integer literal from 0 to 1000000/],
    ["select rightPad(event, properties.n) from events", /rightPad\(\) takes its length as an integer literal/],
    ["select leftPad(event, 3, event) from events", /leftPad\(\) takes its pad as a text literal/],
    ["select repeat(event, 1001) from events", /repeat\(\) takes its count as an integer literal up to 1000/],
    ['select substringUTF8(event, 1, 2) from events', /substringUTF8/],
    ["select concatWithSeparator(event, 'a') from events", /concatWithSeparator\(\) takes its separator as a text literal/],
    ["select appendTrailingCharIfAbsent(event, 'é') from events", /appendTrailingCharIfAbsent\(\) takes one ASCII character here/],
    ["select appendTrailingCharIfAbsent(event, right('é', 1)) from events", /appendTrailingCharIfAbsent\(\) takes its character as a text literal/],
    ["select countSubstrings(event, event) from events", /countSubstrings\(\) takes its needle as a text literal/],
    ['select lengthUTF8(1) from events', /lengthUTF8\(\) takes texts, not numbers/],
    ['select repeat(1, 2) from events', /repeat\(\) takes texts, not numbers, where it takes a text/],
    ['select left(event, properties.n) from events', /left\(\) takes its length as an integer literal/],
    ["select format('{} {0}', event, event) from events", /format\(\)'s pattern "\{\} \{0\}": \{\} and \{n\} are not mixed/],
    ["select format('{2}', event, event) from events", /it reads a value past its 2/],
    ["select format('{', event) from events", /a \{ is not closed/],
    ["select format('{}}', event) from events", /a \{ is not closed/],
    ["select format('}', event) from events", /a \} closes no \{/],
    ["select format('{x}', event) from events", /\{x\} is no number/],
    ['select format(event, event) from events', /format\(\) takes its pattern as a text literal/],
    ["select format('{}', 1) from events", /format\(\) takes texts, not numbers/],
    ['select right(event) from events', /right\(\) takes 2 arguments, got 1/],
  ]
  for (const [text, message] of refused) t.throws(() => parseHogqlQuery(text, clock), message, text)
  t.equal(parseHogqlQuery('select e.event from events e left join persons p on left(e.distinct_id, 2) = left(p.id, 2)', clock).join?.sides.length, 2, 'left( is a call, LEFT JOIN a join')
})

/** Texts of ASCII letters, multibyte characters and loose bytes (lead bytes without their continuation and the reverse). */
function randomText(rng: Rng): string {
  const pieces = ['a', 'B', 'c', 'Z', ' ', '/', '*', 'é', 'ñ', 'Ä', '€', '😀', 'мир', '\uDCC3', '\uDCA9', '\uDCE2', '\uDC82', '\uDCF0', '\uDC9F', '\uDCFF']
  return Array.from({ length: rng.int(9) }, () => rng.pick(pieces)).join('')
}

t.test("on ClickHouse 18.16 the written SQL gives the evaluation's answer", { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const server = await startClickHouse()
  t.teardown(() => server.destroy())
  const rng = new Rng(fuzzSeed(), 12)
  const texts = [...new Set(['', 'a', ...Array.from({ length: 600 }, () => randomText(rng))])]
  let n = 0
  const sql = { compile: (node: HogqlNode) => (node.op === 'text' ? hogqlTextSql(node.value) : 'x'), text: (node: HogqlNode) => (node.op === 'text' ? hogqlTextSql(node.value) : 'x'), fresh: () => `v_${n++}` }
  const column: HogqlNode = { op: 'field', type: 'text', field: 'event' } as HogqlNode
  const literal = (v: string | number): HogqlNode => (typeof v === 'string' ? { op: 'text', type: 'text', value: v } : { op: 'number', type: 'number', value: v })
  const calls: Array<[TextFunction, Array<string | number>]> = [
    ['lengthUTF8', []], ['reverse', []],
    ...['', 'a', 'é', '\uDCA9', 'мир', 'B'].flatMap((needle): Array<[TextFunction, Array<string | number>]> => [['positionUTF8', [needle]], ['positionCaseInsensitive', [needle]], ['countSubstrings', [needle]]]),
    ...[-1, 0, 1, 3].map((c): [TextFunction, Array<string | number>] => ['repeat', [c]]),
    ...[[0, ' '], [4, '*'], [7, 'xy'], [9, ''], [10, 'é']].flatMap(([l, p]): Array<[TextFunction, Array<string | number>]> => [['leftPad', [l, p]], ['rightPad', [l, p]]]),
    ['appendTrailingCharIfAbsent', ['/']], ['appendTrailingCharIfAbsent', ['a']],
    ['concatWithSeparator', ['-']], ['concatWithSeparator', [', ']],
    ...['', 'a', 'B', 'é', 'ab'].map((needle): [TextFunction, Array<string | number>] => ['countSubstringsCaseInsensitive', [needle]]),
    ['format', ['{}-{}']], ['format', ['{1}{{é}}{1}']], ['format', ['{0}']], ['format', ['none']],
  ]
  // Rows of Nullable(String), NULL last: hex() of each answer (NULL as 'N'), compared byte for byte.
  const rows = `arrayJoin([${texts.map((x) => `CAST(${hogqlTextSql(x)} AS Nullable(String))`).join(', ')}, NULL])`
  for (const [fn, rest] of calls) {
    const joins = fn === 'concatWithSeparator' || fn === 'format'
    const args = joins ? [literal(rest[0]), column, column] : [column, ...rest.map(literal)]
    const res = await fetch(server.url, { method: 'POST', body: `SELECT ifNull(hex(toString(${textFunctionSql(fn, args, sql)})), 'N') FROM (SELECT ${rows} AS x) FORMAT TSV` })
    const body = await res.text()
    t.ok(res.ok, body.slice(0, 200))
    const answers = body.replace(/\n$/, '').split('\n')
    const want = (x: string) => {
      const v = textFunctionValue(fn, joins ? [rest[0], x, x] : [x, ...rest])
      return textBytes(String(v)).toString('hex').toUpperCase()
    }
    const wrong = texts.filter((x, i) => answers[i] !== want(x)).map((x) => [x, answers[texts.indexOf(x)], want(x)])
    t.same(wrong.slice(0, 3), [], `${fn}(${rest.join(', ')}): ${texts.length} texts, ${wrong.length} differ`)
    t.equal(answers[texts.length], 'N', `${fn} of NULL is NULL`)
  }
})

t.test('queries read them on both stores', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const TEAM = 7
  const rows = pageviewRows(TEAM, { d1: { s: 'Straße/ä' }, d2: { s: 'x' }, d3: { s: '' }, d4: {} })
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_hogql_texts')
  const plan = parseHogqlQuery("SELECT left(properties.s, 3), right(properties.s, -2), lengthUTF8(properties.s), leftPad(properties.s, 4, '0'), repeat(properties.s, 2), concatWithSeparator('|', distinct_id, properties.s), countSubstrings(properties.s, 'ä'), positionCaseInsensitive(properties.s, 'STR') FROM events ORDER BY distinct_id", clock)
  const want = [
    ['Str', 'raße/ä', 8, 'Stra', 'Straße/äStraße/ä', 'd1|Straße/ä', 1, 1],
    ['x', '', 1, '000x', 'xx', 'd2|x', 0, 0],
    ['', '', 0, '0000', '', 'd3|', 0, 0],
    [null, null, null, null, null, null, null, null],
  ]
  t.same(await sqlite.hogqlQuery(TEAM, plan), want, 'SQLite')
  t.same(await clickhouse.hogqlQuery(TEAM, plan), want, 'ClickHouse')
  const grouped = parseHogqlQuery("SELECT rightPad(left(distinct_id, 1), 3, '.') AS k, count() FROM events WHERE lengthUTF8(properties.s) > 0 GROUP BY k", clock)
  t.same(await sqlite.hogqlQuery(TEAM, grouped), [['d..', 2]], 'SQLite: grouped')
  t.same(await clickhouse.hogqlQuery(TEAM, grouped), [['d..', 2]], 'ClickHouse: grouped')
})
