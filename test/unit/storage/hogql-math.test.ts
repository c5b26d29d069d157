import t from 'tap'
import { compileRegex } from '../../../src/flags/index.js'
import { evaluateHogql, hogqlContribution, hogqlHolds, hogqlProperties, HogqlMathError, parseHogqlCondition, parseHogqlMath, type HogqlValue } from '../../../src/storage/events/hogql-math.js'

/** Evaluates `text`'s expression on an event with these property texts (by path: `a.b` for properties.a.b). */
function value(text: string, props: Record<string, string | null> = {}): HogqlValue {
  return evaluateHogql(parseHogqlMath(text).expr, (path) => props[path.join('.')] ?? null)
}

t.test("the outermost aggregation is split off as PostHog's extract_aggregation_and_inner_expr splits it; none is a sum", async (t) => {
  t.match(parseHogqlMath('sum(properties.price)'), { aggregation: 'sum', expr: { op: 'property', key: 'price' } })
  t.match(parseHogqlMath('AVG(properties.price * 2)'), { aggregation: 'avg', expr: { op: '*' } }, 'aggregation names in any case')
  t.match(parseHogqlMath('min(properties.a)'), { aggregation: 'min' })
  t.match(parseHogqlMath('max(properties.a)'), { aggregation: 'max' })
  t.match(parseHogqlMath('count()'), { aggregation: 'count', expr: { op: 'number', value: 1 } }, 'count() counts every event')
  t.match(parseHogqlMath('properties.price - properties.cost'), { aggregation: 'sum', expr: { op: '-' } }, 'no aggregation: summed')
})

t.test('properties are read in every HogQL spelling, each once', async (t) => {
  t.same(hogqlProperties(parseHogqlMath("sum(properties.$revenue + properties.`net amount` + properties.\"tax\" + properties['fee'] + properties.$revenue)").expr), [
    ['$revenue'],
    ['net amount'],
    ['tax'],
    ['fee'],
  ])
  t.same(hogqlProperties(parseHogqlMath("properties.order.total + properties['order'].`total` + properties.order['tax rate'] + properties.order").expr), [['order', 'total'], ['order', 'tax rate'], ['order']], 'a path within objects, in any spelling, each once')
  t.equal(value('properties.order.total * 2', { 'order.total': '21' }), 42, 'a path is read as the reader gives it')
  t.throws(() => parseHogqlMath('properties.a.b.c.d.e'), /Property paths reach at most 4 keys deep here/)
  t.throws(() => parseHogqlMath('properties.a.'), /Expected a property name after "\."/)
})

t.test('arithmetic reads property texts as toFloat does, and a null operand makes the result null', async (t) => {
  t.equal(value('properties.price * properties.qty + 1', { price: '2.5', qty: '4' }), 11)
  t.equal(value('properties.a / properties.b', { a: '1', b: '4' }), 0.25)
  t.equal(value('-properties.a - -2', { a: '5' }), -3)
  t.equal(value('1 + 2 * 3 - 4 / 2'), 5, 'precedence')
  t.equal(value('(1 + 2) * 3'), 9)
  t.equal(value('properties.a + 1', { a: 'n/a' }), null, 'text that is no number')
  t.equal(value('properties.a + 1', {}), null, 'a missing property')
  t.equal(value('properties.a + 1', { a: 'Infinity' }), null, 'infinity is no number, as for math_property')
  t.equal(value('1 / 0'), Infinity, 'division by zero is a float division')
})

t.test('comparisons are numeric when a side is a number, else text; and/or/not are three-valued', async (t) => {
  t.equal(value('properties.amount > 20', { amount: '25' }), 1)
  t.equal(value('properties.amount > 20', { amount: '100' }), 1, 'numerically, not as text')
  t.equal(value("properties.plan = 'pro'", { plan: 'pro' }), 1)
  t.equal(value("properties.plan != 'pro'", { plan: 'free' }), 1)
  t.equal(value("properties.plan < 'b'", { plan: 'a' }), 1)
  t.equal(value("properties.plan = 'pro'", {}), null, 'null compared is null')
  t.equal(value('null and 0'), 0, 'false wins over unknown in and')
  t.equal(value('null and 1'), null)
  t.equal(value('null or 1'), 1, 'true wins over unknown in or')
  t.equal(value('null or 0'), null)
  t.equal(value('not null'), null)
  t.equal(value('not 0'), 1)
  t.equal(value('true and not false'), 1)
})

t.test('functions: toFloat, coalesce, ifNull, if, abs, floor, ceil, isNull, isNotNull', async (t) => {
  t.equal(value('toFloat(properties.a)', { a: '3.5' }), 3.5)
  t.equal(value('toFloat(properties.a)', { a: 'x' }), null)
  t.equal(value('coalesce(properties.a, properties.b, 7)', { b: '2' }), 2, 'a number choice reads its text operands as numbers')
  t.equal(value('coalesce(properties.a, properties.b)', { b: 'two' }), 'two', 'a text choice keeps the text')
  t.equal(value('ifNull(properties.a, 0)', {}), 0)
  t.equal(value("if(properties.plan = 'pro', properties.amount, 0)", { plan: 'pro', amount: '40' }), 40)
  t.equal(value("if(properties.plan = 'pro', properties.amount, 0)", { amount: '40' }), 0, 'a null condition is false')
  t.equal(value('abs(-2) + floor(1.7) + ceil(1.2)'), 5)
  t.equal(value('isNull(properties.a) + isNotNull(properties.b)', { b: '' }), 2, 'an empty text is not null')
  t.equal(value('IF(1, 2, 3)'), 2, 'function names in any case')
})

t.test("round() rounds as current ClickHouse rounds a Float64: scaled by 10^places, ties to even, the sign of zero kept", async (t) => {
  const rounded = (text: string, a?: string) => value(text, { a: a ?? null })
  t.same([rounded('round(2.5)'), rounded('round(3.5)'), rounded('round(-2.5)'), rounded('round(0.5)'), rounded('round(2.4999)')], [2, 4, -2, 0, 2], 'ties to even')
  t.ok(Object.is(rounded('round(-0.3)'), -0) && Object.is(rounded('round(-0.5)'), -0), '−0 where a negative value rounds to zero')
  // 2.675 is 2.67499999999999982… as a double, but times 100 it is 267.5 exactly: 268, even.
  t.same([rounded('round(2.675, 2)'), rounded('round(0.125, 2)'), rounded('round(properties.a, 1)', '0.25')], [2.68, 0.12, 0.2], 'places after the point')
  t.same([rounded('round(25, -1)'), rounded('round(35, -1)'), rounded('round(properties.a, -2)', '-150')], [20, 40, -200], 'negative places round to tens, hundreds')
  t.same([rounded('round(1.5, 25)'), rounded('round(12345, -25)')], [1.5, 0], 'past 10^19 the scale saturates at 2^64, as ClickHouse\'s')
  t.same([rounded('round(properties.a)', 'x'), rounded('round(properties.a)'), rounded('round(1 / 0)')], [null, null, Infinity], 'a text as toFloat reads it; null stays null')
  const refused = (text: string) => t.throws(() => parseHogqlMath(text), { constructor: HogqlMathError, message: /round\(\) takes its places as an integer literal/ }, text)
  refused('round(properties.a, 1.5)')
  refused('round(properties.a, properties.b)')
  refused('round(properties.a, 40000)')
  refused("round(properties.a, '2')")
})

t.test('functions of texts work on bytes as ClickHouse does: lower, upper, length, empty, notEmpty, startsWith, endsWith', async (t) => {
  t.equal(value('lower(properties.a)', { a: 'ÄBc' }), 'Äbc', 'ASCII letters only')
  t.equal(value('upper(properties.a)', { a: 'äbc' }), 'äBC')
  t.equal(value('length(properties.a)', { a: 'é1' }), 3, 'bytes')
  t.equal(value('empty(properties.a) + notEmpty(properties.b) * 2', { a: '', b: 'x' }), 3)
  t.equal(value("startsWith(properties.a, 'ab') + endsWith(properties.a, 'yz') * 2", { a: 'abxyz' }), 3)
  t.equal(value('length(properties.a)', {}), null, 'null in, null out')
  t.throws(() => parseHogqlMath('lower(1)'), { constructor: HogqlMathError, message: 'lower() takes texts, not numbers.' })
  t.throws(() => parseHogqlMath("startsWith(properties.a)"), { constructor: HogqlMathError, message: /startsWith\(\) takes 2 arguments, got 1/ })
  t.throws(() => parseHogqlMath("match(properties.a, 'x')"), { constructor: HogqlMathError, message: 'match() is read in HogQL filters only here, not in HogQL math.' })
  t.throws(() => parseHogqlMath('nope(1)'), { constructor: HogqlMathError, message: /^Unknown function nope\(\): HogQL math here takes (?!.*match)/ }, 'math does not offer match()')
})

t.test("what an event adds: count counts values that are not null, the others add toFloat's finite number", async (t) => {
  const add = (text: string, v: HogqlValue) => hogqlContribution(parseHogqlMath(text), v)
  t.equal(add('count(properties.a)', 'x'), 1)
  t.equal(add('count(properties.a)', null), null)
  t.equal(add('sum(properties.a)', 'x'), null)
  t.equal(add('sum(properties.a)', '2'), 2)
  t.equal(add('sum(1 / 0)', Infinity), null)
})

t.test('what skylark cannot compute is refused by name; bad text never throws anything but HogqlMathError', async (t) => {
  const refused = (text: string, message: RegExp) => t.throws(() => parseHogqlMath(text), { constructor: HogqlMathError, message }, text)
  refused('quantile(0.9)(properties.a)', /quantile\(\) is not supported/)
  refused('uniq(properties.a)', /uniq\(\) is not supported/)
  refused('count(distinct properties.a)', /count\(distinct/)
  refused('sum(properties.a) + 1', /must be the whole expression/)
  refused('1 + sum(properties.a)', /can only be the outermost call/)
  refused('sum(properties.a, properties.b)', /takes one argument/)
  refused('sum()', /needs an argument/)
  refused('person.properties.email', /Unknown field "person"/)
  refused('properties.a like properties.b', /LIKE takes its pattern as a text literal/)
  refused("sum(if(event = 'a', 1, 0))", /The field event is read in HogQL filters only here, not in HogQL math/)
  refused('lower(properties.a) + replaceAll(properties.a)', /Unknown function replaceAll\(\)/)
  refused('lower(properties.a) + match(properties.a)', /match\(\) is read in HogQL filters only/)
  refused('if(1, 2)', /if\(\) takes 3 arguments, got 2/)
  refused("properties.a + 'x", /Unterminated string/)
  refused('properties.a ; 1', /Unexpected character ";"/)
  refused('(1 + 2', /Expected "\)"/)
  refused('1 2', /Unexpected 2 after the expression/)
  refused('', /empty/)
  refused('('.repeat(100) + '1' + ')'.repeat(100), /nests deeper than 64/)
  refused('-'.repeat(100) + '1', /nests deeper than 64/)
  refused('not '.repeat(100) + '1', /nests deeper than 64/)
  refused('1' + ' + 1'.repeat(100), /nests deeper than 64/)
  t.equal(value('1' + ' + 1'.repeat(40)), 41, 'a chain within the limit')
  for (const junk of ['*', ')', 'properties', 'properties[1]', 'properties.', '`x`', '1 +', 'sum(', ',', '[', "'a' 'b'"]) {
    t.throws(() => parseHogqlMath(junk), HogqlMathError, JSON.stringify(junk))
  }
})

t.test('like and ilike match texts with % and _ (\\ escapes); in is = against any item; not before either negates it', async (t) => {
  t.equal(value("properties.url like '%/pricing%'", { url: 'https://x.io/pricing?a=1' }), 1)
  t.equal(value("properties.url like '%/PRICING%'", { url: 'https://x.io/pricing' }), 0, 'like is case-sensitive')
  t.equal(value("properties.url ilike '%/PRICING%'", { url: 'https://x.io/pricing' }), 1)
  t.equal(value("properties.code like 'a_c'", { code: 'abc' }), 1)
  t.equal(value("properties.code like 'a\\\\_c'", { code: 'abc' }), 0, 'an escaped _ is itself')
  t.equal(value("properties.code like 'a\\\\_c'", { code: 'a_c' }), 1)
  t.equal(value("properties.code not like 'a%'", { code: 'abc' }), 0)
  t.equal(value("properties.code not ilike 'A%'", { code: 'xbc' }), 1)
  t.equal(value("properties.code like 'a%'", {}), null, 'a missing property: null')
  t.equal(value("properties.plan in ('pro', 'team')", { plan: 'team' }), 1)
  t.equal(value("properties.plan IN ['pro', 'team']", { plan: 'free' }), 0, 'a list in brackets, IN in capitals')
  t.equal(value("properties.plan not in ('pro')", { plan: 'free' }), 1)
  t.equal(value("properties.plan not in ('pro')", {}), null, 'a missing property passes neither in nor not in')
  t.equal(value('properties.n in (1, 2.5)', { n: '2.50' }), 1, 'a number in the list compares numbers')
  t.equal(value("properties.a = 1 and properties.b not in ('x', 'y') or properties.c like 'z%'", { a: '1', b: 'w' }), 1, 'and binds tighter than or')
})

t.test("a HogQL filter is a condition: an event passes where it is a number other than 0, never on null", async (t) => {
  const holds = (text: string, props: Record<string, string | null> = {}) => hogqlHolds(parseHogqlCondition(text), (path) => props[path.join('.')] ?? null)
  t.equal(holds("properties.$browser = 'Chrome'", { $browser: 'Chrome' }), true)
  t.equal(holds("properties.$browser = 'Chrome'", { $browser: 'Firefox' }), false)
  t.equal(holds("properties.$browser != 'Chrome'", {}), false, 'null passes nothing, != included')
  t.equal(holds('toFloat(properties.amount)', { amount: '3' }), true, 'a number other than 0')
  t.equal(holds('properties.amount - 3', { amount: '3' }), false)
  t.equal(holds('true'), true)
  t.equal(holds('null'), false)
  const refused = (text: string, message: RegExp) => t.throws(() => parseHogqlCondition(text), { constructor: HogqlMathError, message }, text)
  refused("properties.plan", /a text, not a condition/)
  refused("coalesce(properties.plan, 'x')", /a text, not a condition/)
  refused('count() > 1', /Aggregations such as count\(\) are not allowed in HogQL filters/)
  refused('sum(properties.a)', /Aggregations such as sum\(\) are not allowed/)
  refused('timestamp = 1', /Unknown field "timestamp": skylark reads event properties \(properties.<key>\), person properties \(person.properties.<key>\), event and distinct_id in HogQL filters/)
  t.match(parseHogqlCondition("distinct_id = 'a' and `event` = 'b'"), { op: 'and', args: [{ args: [{ op: 'field', type: 'text', field: 'distinct_id' }] }, { args: [{ op: 'field', field: 'event' }] }] }, 'the fields, quoted or not')
  t.equal(hogqlHolds(parseHogqlCondition("event = 'b'"), () => null, null, (field) => (field === 'event' ? 'b' : 'x')), true, "a field's value comes from the reader's")
  t.throws(() => hogqlHolds(parseHogqlCondition("event = 'b'"), () => null), /no value was given for the field event/, 'without fields it fails rather than guess')
  t.match(parseHogqlCondition("person.properties.`e mail` like '%@x.io'"), { op: 'like', args: [{ op: 'property', key: 'e mail', person: true }] }, "a person's property")
  refused("replaceAll(properties.a, 'x', 'y') = ''", /Unknown function replaceAll\(\): HogQL filters here take toFloat.*, match, toString, toInt, concat, round\./)
  refused("match(properties.a, concat('x', properties.b))", /match\(\) takes its pattern as a text literal/)
  refused("concat('x') = 'x'", /concat\(\) takes 2 to 64 arguments, got 1/)
  const literal = (text: string) => (parseHogqlCondition(`properties.a = ${text}`) as { args: Array<{ value?: string }> }).args[1].value
  t.same([literal(String.raw`'\d'`), literal(String.raw`'a\nb'`), literal(String.raw`'a\0b'`), literal(String.raw`'it\'s'`), literal("'it''s'"), literal(String.raw`'\\'`)], ['\\d', 'a\nb', 'ab', "it's", "it's", '\\'], "HogQL's escapes: unknown ones kept, \\0 dropped")
  const matches = (text: string, a: string | null) => hogqlHolds(parseHogqlCondition(text), () => a, compileRegex)
  t.same([matches("match(properties.a, 'b+c')", 'abbc'), matches("match(properties.a, '^b')", 'abbc'), matches("not match(properties.a, '^b')", null)], [true, false, false], 'match(): a search; null for a missing text')
  t.throws(() => hogqlHolds(parseHogqlCondition("match(properties.a, 'b')"), () => 'b'), /no regex engine/, 'without an engine it fails rather than guess')
  refused("properties.n like 1", /LIKE compares texts, not numbers/)
  refused("properties.n in 'a'", /Expected a list after IN/)
  refused("properties.n in ('a',", /ends too early/)
  refused('', /empty/)
  refused("properties.a in (" + "'x', ".repeat(10) + "'y'", /Expected "," or "\)" in the IN list at the end/)
  const list = (n: number) => `(${Array.from({ length: n }, (_, i) => `'v${i}'`).join(', ')})`
  t.equal(holds(`properties.a in ${list(1000)}`, { a: 'v999' }), true, 'a long list nests no deeper')
  refused(`properties.a in ${list(1001)}`, /The IN list is too long here: at most 1000 items/)
  refused(`coalesce(properties.a, properties.b) in ${list(400)}`, /The IN list is too long/)
})
