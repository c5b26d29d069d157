import t from 'tap'
import { hogqlQuantile } from '../../../src/storage/events/hogql-values.js'
import { compileSearchRegex } from '../../../src/flags/index.js'
import { evaluateHogql, hogqlContribution, hogqlFields, hogqlHolds, hogqlProperties, HogqlMathError, parseHogqlCondition, parseHogqlMath, type HogqlValue } from '../../../src/storage/events/hogql-math.js'

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
  for (const text of ['uniq(properties.plan)', 'uniqExact(properties.plan)', 'count(distinct properties.plan)', 'COUNT(DISTINCT properties.plan)', 'countDistinct(properties.plan)']) {
    t.match(parseHogqlMath(text), { aggregation: 'uniq', expr: { op: 'property', key: 'plan' } }, `${text}: the distinct values, exactly`)
  }
  t.match(parseHogqlMath("countIf(properties.plan = 'pro')"), { aggregation: 'count', expr: { op: 'call', fn: 'if', args: [{ op: '=' }, { value: 1 }, { op: 'null' }] } }, 'countIf(c) counts if(c, 1, null)')
  t.match(parseHogqlMath('quantile(0.9)(properties.amount)'), { aggregation: 'quantile', level: 0.9, expr: { op: 'property', key: 'amount' } }, 'a parametric quantile')
  t.match(parseHogqlMath('median(properties.amount)'), { aggregation: 'quantile', level: 0.5 }, 'median is the 0.5 quantile')
  t.match(parseHogqlMath('anyLast(properties.plan)'), { aggregation: 'last', expr: { op: 'property', key: 'plan' } }, "anyLast is the last in time, argMax(x, timestamp)'s")
  // ClickHouse's quantile (ReservoirSampler's quantileInterpolated): the index level × (n − 1), interpolated.
  t.same([hogqlQuantile([3, 1, 2], 0.5), hogqlQuantile([10, 20], 0.9), hogqlQuantile([4, 1, 3, 2], 0.25), hogqlQuantile([7], 0.3), hogqlQuantile([], 0.5), hogqlQuantile([1, 2], 1)], [2, 19, 1.75, 7, 0, 2])
  const uniq = parseHogqlMath('uniq(properties.a * 1)')
  t.same(['2', '-0', '0', 'x', null].map((a) => hogqlContribution(uniq, evaluateHogql(uniq.expr, () => a))), ['2', '0', '0', null, null], "uniq's keys: a number's text, −0 read as 0; null none")
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

t.test("comparisons are numeric when a side is a number, else text, and NULL-safe as PostHog prints them; and/or/not are three-valued", async (t) => {
  t.equal(value('properties.amount > 20', { amount: '25' }), 1)
  t.equal(value('properties.amount > 20', { amount: '100' }), 1, 'numerically, not as text')
  t.equal(value("properties.plan = 'pro'", { plan: 'pro' }), 1)
  t.equal(value("properties.plan != 'pro'", { plan: 'free' }), 1)
  t.equal(value("properties.plan < 'b'", { plan: 'a' }), 1)
  t.same([value("properties.plan = 'pro'", {}), value("properties.plan != 'pro'", {}), value('properties.n < 3', {}), value('properties.n >= 3', {})], [0, 1, 0, 0], "NULL equals no value, differs from every one, is neither less nor more (PostHog's ifNull(equals(…), 0), ifNull(notEquals(…), 1) …)")
  t.same([value('properties.a = properties.b', {}), value('properties.a != properties.b', {}), value('properties.a = properties.b', { a: 'x' })], [1, 0, 0], 'NULL equals NULL only')
  t.same([value('properties.a = null', {}), value('properties.a != null', { a: 'x' }), value('null = null')], [1, 1, 1], 'a NULL literal: isNull, isNotNull')
  t.equal(value('null and 0'), 0, 'false wins over unknown in and')
  t.equal(value('null and 1'), null)
  t.equal(value('null or 1'), 1, 'true wins over unknown in or')
  t.equal(value('null or 0'), null)
  t.equal(value('not null'), null)
  t.equal(value('not 0'), 1)
  t.equal(value('true and not false'), 1)
})

t.test('functions: toFloat, coalesce, ifNull, if, multiIf, nullIf, abs, floor, ceil, isNull, isNotNull, greatest, least', async (t) => {
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
  t.same([value('greatest(1, null, 3, 2)'), value('least(properties.a, 2)', { a: '-5' }), value('least(null, properties.a)')], [3, -5, null], 'greatest and least leave nulls out (current ClickHouse), read texts as numbers beside a number')
  t.same([value("greatest('b', 'ab', properties.a)"), value("least('b', 'ab')")], ['b', 'ab'], 'of texts alone, they compare texts')
  t.throws(() => parseHogqlMath('greatest(1)'), /greatest\(\) takes 2 to 64 arguments, got 1/)
  const tier = "multiIf(properties.a > 100, 'gold', properties.a > 10, 'silver', 'basic')"
  t.same([value(tier, { a: '500' }), value(tier, { a: '50' }), value(tier, { a: '5' }), value(tier)], ['gold', 'silver', 'basic', 'basic'], 'multiIf: the first condition that holds (null does not) chooses')
  t.same([value("multiIf(properties.a = 'x', 2, properties.b)", { b: '7' }), value('multiIf(0, 1, null)')], [7, null], "multiIf's values of one type: a text among numbers read as one")
  t.same([value("nullIf(properties.a, '')", { a: '' }), value("nullIf(properties.a, '')", { a: 'x' }), value('nullIf(properties.a, 0)', { a: '0.0' }), value('nullIf(properties.a, null)', { a: 'x' })], [null, 'x', null, 'x'], 'nullIf: null where the two are equal (as numbers beside a number)')
  t.throws(() => parseHogqlMath('multiIf(1, 2)'), /multiIf\(\) takes conditions and values in pairs/)
  t.throws(() => parseHogqlMath('nullIf(1)'), /nullIf\(\) takes 2 arguments, got 1/)
  const calls = ["equals(properties.a, 'x')", "notEquals(properties.a, 'x')", 'less(properties.a, 2)', 'greaterOrEquals(properties.a, 2)', "like(properties.a, 'x%')", "notILike(properties.a, 'X%')"]
  t.same(calls.map((c) => value(c, { a: 'xy' })), [0, 1, 0, 0, 1, 0], "PostHog's comparison functions read as their operators")
  const operators = ["properties.a = 'x'", "properties.a != 'x'", 'properties.a < 2', 'properties.a >= 2', "properties.a like 'x%'", "properties.a not ilike 'X%'"]
  for (const a of [undefined, 'x', '3']) t.same(calls.map((c) => value(c, a === undefined ? {} : { a })), operators.map((o) => value(o, a === undefined ? {} : { a })), `as the operators, of ${a ?? 'NULL'}`)
  t.throws(() => parseHogqlMath('equals(1)'), /equals\(\) takes 2 arguments, got 1/)
})

t.test("CASE reads as PostHog's parser reads it (if, multiIf, a subject's transform as `=`s), BETWEEN as two comparisons that read NULL as 0", async (t) => {
  const tier = "CASE WHEN properties.a > 100 THEN 'gold' WHEN properties.a > 10 THEN 'silver' ELSE 'basic' END"
  t.same([value(tier, { a: '500' }), value(tier, { a: '50' }), value(tier)], ['gold', 'silver', 'basic'], 'the first WHEN that holds (null does not) chooses')
  const plan = "case properties.plan when 'pro' then 2 when null then -1 else 0 end"
  t.same([value(plan, { plan: 'pro' }), value(plan), value(plan, { plan: 'free' })], [2, -1, 0], "a subject is compared with each WHEN, NULL finding NULL (transform's)")
  t.equal(value("CASE WHEN 1 THEN 'a' ELSE 'b' END"), 'a', 'one WHEN is an if')
  t.throws(() => parseHogqlMath("CASE WHEN properties.a = 'x' THEN 1 END"), /CASE takes an ELSE here/, "without ELSE, as PostHog's multiIf refuses it")
  t.throws(() => parseHogqlMath('CASE ELSE 1 END'), /CASE takes at least one WHEN … THEN … here/)
  t.throws(() => parseHogqlMath('CASE WHEN 1 THEN 2 ELSE 3'), /Expected END at the end/)
  t.throws(() => parseHogqlMath('CASE WHEN 1 2 ELSE 3 END'), /Expected THEN before 2/)
  const between = (text: string, n: string | null) => value(text, n === null ? {} : { a: n })
  t.same(['0.5', '1', '2', '3', '3.5', null].map((n) => between('properties.a BETWEEN 1 AND 3', n)), [0, 1, 1, 1, 0, 0], 'BETWEEN takes both bounds; NULL reads 0')
  t.same(['0.5', '2', '3.5', null].map((n) => between('properties.a NOT BETWEEN 1 AND 3', n)), [1, 0, 1, 0], "NOT BETWEEN is the comparisons' or, NULL reading 0 too (not the negation of BETWEEN's 0)")
  t.equal(value("properties.a BETWEEN 1 AND 3 AND properties.b = 'x'", { a: '2', b: 'x' }), 1, "BETWEEN's AND binds to it, the next AND joins conditions")
  t.equal(value('properties.a BETWEEN null AND 3', { a: '2' }), 0, 'a NULL bound reads 0')
  // 611 nodes: what is read more than once is bounded, as nullIf's first argument.
  const large = `concat(${Array.from({ length: 10 }, () => `concat(${Array(60).fill('properties.a').join(', ')})`).join(', ')})`
  t.throws(() => parseHogqlMath(`${large} BETWEEN 'a' AND 'b'`), /The left side of BETWEEN is too large here: it is read twice/)
  t.throws(() => parseHogqlMath(`CASE ${large} WHEN 'a' THEN 1 WHEN 'b' THEN 2 ELSE 0 END`), /CASE's subject is too large here for its WHENs/)
  t.equal(value(`CASE ${large} WHEN 'a' THEN 1 ELSE 0 END`, { a: 'x' }), 0, 'once is within the bound')
})

t.test("`a ?? b` is ifNull(a, b), `c ? a : b` if(c, a, b) and `a || b` concat(a, b), bound as PostHog's grammar binds them", async (t) => {
  const same = (text: string, spelled: string, name: string) => t.same(parseHogqlMath(text), parseHogqlMath(spelled), `${text}: ${name}`)
  same('properties.a ?? properties.b ?? 0', 'ifNull(ifNull(properties.a, properties.b), 0)', '?? from the left')
  same("properties.a ?? 'x' = 'y'", "ifNull(properties.a, 'x' = 'y')", 'comparisons bind tighter than ??')
  same("not properties.a ?? 0", 'not ifNull(properties.a, 0)', '?? binds tighter than NOT')
  same("properties.a = 1 or properties.b = 2 ? 'x' : 'y'", "if(properties.a = 1 or properties.b = 2, 'x', 'y')", 'the condition is all of OR')
  same("properties.a > 1 ? 'x' : properties.a > 0 ? 'y' : 'z'", "if(properties.a > 1, 'x', if(properties.a > 0, 'y', 'z'))", 'the else reads right to left')
  same("properties.a ? properties.b ? 1 : 2 : 3", 'if(properties.a, if(properties.b, 1, 2), 3)', 'a ternary within the then')
  same("properties.a > 1 ? 'x' : 'y' or 'z' = 'z'", "if(properties.a > 1, 'x', 'y' or 'z' = 'z')", 'the else is all of OR')
  t.same([value("properties.a ?? 'none'"), value("properties.a ?? 'none'", { a: 'v' }), value("properties.a > 2 ? 'big' : 'small'", { a: '3' }), value("properties.a > 2 ? 'big' : 'small'")], ['none', 'v', 'big', 'small'], 'a null condition takes the else')
  same("properties.a || '-' || 1 + 2", "concat(concat(properties.a, '-'), 1) + 2", '|| is concat, of +\'s precedence, from the left')
  t.same([value("properties.a || '/' || properties.b", { a: 'x' }), value("1 + 2 || 'x'")], ['x/', '3x'], "concat's reading: NULL as ''")
  same("in(properties.a, ('x', 'y')) + notIn(properties.b, ['z'])", "(properties.a in ('x', 'y')) + (properties.b not in ['z'])", "PostHog's in() and notIn() are IN's")
  same("properties?.a?.b + person?.properties?.c", 'properties.a.b + person.properties.c', '?. reads as .: a path of a NULL object is NULL either way')
  t.throws(() => parseHogqlMath("properties.a ? 'x'"), /Expected ":" at the end/)
  t.throws(() => parseHogqlMath("properties.a ?? "), /The expression ends too early/)
  t.throws(() => parseHogqlMath(`${Array(200).fill('properties.a').join(' ?? ')}`), /nests deeper than 64 levels/)
})

t.test("ClickHouse's names of PostHog's casts read as toInt and toFloat, a narrower integer type's range its own", async (t) => {
  const of = (text: string, a: string | null) => value(text, a === null ? {} : { a })
  t.same(['-128', '127', '128', '-129', '2.9', 'x', null].map((a) => of('toInt8(properties.a)', a)), [-128, 127, null, null, null, null, null], "toInt8: Int8's range, else NULL (a text's integer digits only, as toInt)")
  t.same([of('toUInt8(properties.a)', '255'), of('toUInt8(properties.a)', '-1'), of('toUInt16(2.9)', null), of('toInt32(properties.a)', '3000000000'), of('toUInt32(properties.a)', '3000000000')], [255, null, 2, null, 3e9], 'a number truncated, as toInt')
  t.same([of('toInt64(properties.a)', '12'), of('toInt64OrNull(properties.a)', '1.5'), of('toInt64OrZero(properties.a)', 'x'), of('toIntOrZero(properties.a)', null)], [12, null, 0, 0], 'Int64: toInt, -OrZero reading NULL as 0')
  t.same([of('toFloat64(properties.a)', '1.5'), of('toFloatOrNull(properties.a)', 'x'), of('toFloat64OrZero(properties.a)', 'x'), of('toFloatOrZero(properties.a)', '2')], [1.5, null, 0, 2], 'Float64: toFloat')
  t.throws(() => parseHogqlMath('toInt32(1, 2)'), /toInt32\(\) takes 1 argument, got 2/)
})

t.test("% and intDiv divide as ClickHouse's Float64 does; sqrt, exp, log, pow, sign and trunc as its functions", async (t) => {
  t.same([value('7 % 3'), value('-7 % 3'), value('7.5 % 2'), value('-7.25 % 2.5'), value('properties.a % 4', { a: '10' })], [1, -1, 1.5, -2.25, 2], 'the remainder has the sign of the dividend: a − trunc(a / b) · b')
  t.same([value('1 + 7 % 3 * 2'), value('10 % 4 % 3')], [3, 2], '% binds as * and /, from the left')
  t.same([value('intDiv(7, 2)'), value('intDiv(-7, 2)'), value('intDiv(7.9, 1)'), value('modulo(9, 4)')], [3, -3, 7, 1], 'intDiv truncates toward zero; modulo is %')
  t.same([value('5 % 0'), value('intDiv(5, 0)'), value('intDiv(-5, 0)')], [Number.NaN, Infinity, -Infinity], 'a zero divisor: NaN and ±∞, as Float64 (integers fail the query in ClickHouse)')
  t.same([value('moduloOrZero(5, 0)'), value('intDivOrZero(5, 0)'), value('intDivOrZero(properties.a, 0)'), value('moduloOrZero(7, 4)')], [0, 0, null, 3], '-OrZero: 0 for a zero divisor, null for a null operand')
  t.same([value('sign(-2.5)'), value('sign(0)'), value('sign(3)'), value('sign(properties.a)', { a: 'x' }), value('sign(0 / 0)')], [-1, 0, 1, null, 0], 'sign: −1, 0 or 1; NaN is 0')
  t.same([value('sqrt(16)'), value('exp(0)'), value('ln(1)'), value('log(exp(1))'), value('log2(8)'), value('log10(1000)'), value('trunc(-2.7)')], [4, 1, 0, 1, 3, 3, -2], 'ln is log, the natural logarithm')
  t.same([value('pow(2, 10)'), value('power(properties.a, 0.5)', { a: '9' }), value('pow(1, 0 / 0)'), value('pow(0 / 0, 0)'), value('pow(-1, 1 / 0)'), value('pow(-8, 1 / 3)')], [1024, 3, 1, 1, 1, Number.NaN], "power is pow; C's pow where JavaScript's ** differs")
  t.same([value('sqrt(-1)'), value('log(0)'), value('pow(properties.a, 2)')], [Number.NaN, -Infinity, null], 'outside their domain NaN or −∞; null stays null')
  t.throws(() => parseHogqlMath('intDiv(1)'), /intDiv\(\) takes 2 arguments, got 1/)
  t.throws(() => parseHogqlMath('pow(1, 2, 3)'), /pow\(\) takes 2 arguments, got 3/)
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

t.test('functions of texts work on bytes as ClickHouse does: lower, upper, length, empty, notEmpty, startsWith, endsWith, trims, position, replacements', async (t) => {
  t.same([value('trim(properties.a)', { a: ' \tx y  ' }), value('trimLeft(properties.a)', { a: '  x ' }), value('trimRight(properties.a)', { a: '  x ' })], ['\tx y', 'x ', '  x'], 'the trims remove spaces only')
  t.same([value("position(properties.a, 'b')", { a: 'aÄbc' }), value("position(properties.a, '')", { a: 'abc' }), value("position(properties.a, 'z')", { a: 'abc' })], [4, 1, 0], 'position counts bytes from 1; 0 where absent')
  t.same([value("replaceAll(properties.a, '.', '$1')", { a: 'a.b.c' }), value("replaceOne(properties.a, '.', '')", { a: 'a.b.c' }), value("replaceAll(properties.a, '', 'x')", { a: 'abc' })], ['a$1b$1c', 'ab.c', 'abc'], 'replacements of literals; an empty pattern replaces nothing')
  t.throws(() => parseHogqlMath("replaceAll(properties.a, properties.b, 'x')"), /replaceAll\(\) takes its pattern and replacement as text literals/)
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

t.test('sumIf, avgIf, minIf and maxIf aggregate the value where the condition holds, as countIf counts: if(c, x, null), a null condition holding not', async (t) => {
  for (const name of ['sum', 'avg', 'min', 'max']) {
    const math = parseHogqlMath(`${name}If(properties.amount, properties.plan = 'pro')`)
    t.match(math, { aggregation: name, expr: { op: 'call', fn: 'if', type: 'text', args: [{ op: '=' }, { op: 'property', key: 'amount' }, { op: 'null' }] } }, `${name}If`)
    const add = (plan: string | null, amount: string) => hogqlContribution(math, evaluateHogql(math.expr, (path) => (path[0] === 'plan' ? plan : amount)))
    t.same([add('pro', '3'), add('free', '3'), add(null, '3'), add('pro', 'x')], [3, null, null, null], `${name}If: what an event adds`)
  }
  t.match(parseHogqlMath('SUMIF(2, 1 > 0)'), { aggregation: 'sum', expr: { type: 'number', args: [{ op: '>' }, { value: 2 }, { op: 'null' }] } }, 'names in any case; a number stays one')
  t.match(parseHogqlMath('any(properties.amount * 2)'), { aggregation: 'any', expr: { op: '*' } }, 'any() of the value')
})

t.test("substring(s, offset, length) as ClickHouse's: bytes, offset 1-based, counted from the end when negative, none at 0, a negative length ending that many bytes before the end", async (t) => {
  const cut = (args: string, a: string | null = 'abcdef') => value(`substring(properties.a, ${args})`, { a })
  t.same([cut('2, 99'), cut('0, 99'), cut('-2, 99'), cut('7, 99'), cut('-10, 99')], ['bcdef', '', 'ef', '', 'abcdef'], 'to the end')
  t.same([cut('2, 3'), cut('-3, 2'), cut('0, 3'), cut('2, 0'), cut('1, 100'), cut('-10, 6'), cut('-10, 3')], ['bcd', 'de', '', '', 'abcdef', 'ab', ''], 'at most length bytes; an offset before the start counts its bytes toward the length')
  t.same([cut('2, -1'), cut('2, -2'), cut('2, -10'), cut('-3, -1'), cut('-3, -3'), cut('-10, -4')], ['bcde', 'bcd', '', 'de', '', 'ab'], 'a negative length ends |length| bytes before the end')
  t.same([cut('1, 9', null), cut('1, 9', ''), value('substring(null, 2, 1)')], [null, '', null], 'null in, null out')
  t.same([value("length(substring('é', 1, 1))"), value("substring('éa', 2, 9) = substring('èa', 2, 9)"), value("substring('é', 1, 1) < 'é'")], [1, 0, 1], 'a character cut is kept as its bytes: one byte, told apart from another, ordered as bytes')
  t.equal(value("concat(substring(properties.a, 1, 1), substring(properties.a, 2, 9))", { a: 'é' }), 'é', 'bytes put back together are the character again')
  t.same([value("startsWith(properties.a, substring(properties.a, 1, 1))", { a: 'é' }), value("position(properties.a, substring(properties.a, 3, 1))", { a: 'xé' }), value("endsWith('é', substring('é', -1, 1))")], [1, 3, 1], 'a cut byte is found among the bytes of the text')
  const refused = (text: string, message: RegExp) => t.throws(() => parseHogqlMath(text), { constructor: HogqlMathError, message }, text)
  refused('substring(properties.a, properties.b, 1)', /substring\(\) takes its offset and length as integer literals from -1000000000000000 to 1000000000000000/)
  refused('substring(properties.a, 1.5, 1)', /substring\(\) takes its offset and length as integer literals/)
  refused('substring(properties.a, 1, 1e16)', /substring\(\) takes its offset and length as integer literals/)
  refused('substring(12345, 2, 1)', /substring\(\) takes texts, not numbers/)
  refused('substring(properties.a, 2)', /substring\(\) takes 3 arguments, got 2/)
  // PostHog's HogQL maps neither ClickHouse's aliases nor, of substringUTF8, what 18.16 computes as current servers do.
  for (const name of ['substr', 'mid', 'substringUTF8']) refused(`${name}(properties.a, 1, 2)`, new RegExp(`Unknown function ${name}\\(\\)`))
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
  refused('quantileTDigest(0.9)(properties.a)', /quantileTDigest\(\) is not supported/)
  refused('quantileExactExclusive(1)(properties.a)', /quantileExactExclusive\(\) takes its level as a number above 0 and below 1/)
  refused('quantile(1.5)(properties.a)', /quantile\(\) takes its level as a number from 0 to 1/)
  refused('quantile(properties.a)', /quantile\(\) takes its level as a number from 0 to 1/)
  refused('quantile(0.9)', /quantile\(level\) takes the expression after its level/)
  refused('uniqCombined(properties.a)', /uniqCombined\(\) is not supported/)
  refused('sum(distinct properties.a)', /sum\(distinct \.\.\.\) is not supported in HogQL math here; count\(distinct \.\.\.\) is/)
  refused('anyHeavy(properties.a)', /anyHeavy\(\) is not supported in HogQL math here; sum, avg, min, max, any, anyLast, count, countIf, sumIf, avgIf, minIf, maxIf, anyIf, uniq, uniqIf, uniqExact, uniqExactIf, uniqHLL12, uniqHLL12If, uniqTheta, uniqThetaIf, countDistinct, countDistinctIf, median, quantile\(level\), medianExact, medianExactLow, medianExactHigh, quantileExact\(level\), quantileExactLow\(level\), quantileExactHigh\(level\), quantileExactInclusive\(level\), quantileExactExclusive\(level\) and their -If are\./)
  refused('uniqCombined(properties.a)', /uniqCombined\(\) is not supported/)
  refused('sumIf(properties.a)', /sumif\(\) takes a value and a condition, as in sumIf\(properties.amount, properties.plan = 'pro'\), got 1 arguments/)
  refused('avgIf(properties.a, 1, 2)', /avgif\(\) takes a value and a condition/)
  refused('any(properties.a, properties.b)', /any\(\) takes one argument here, got 2/)
  refused('1 + maxIf(properties.a, 1)', /maxIf\(\) can only be the outermost call/)
  refused('countIf(properties.a, 1)', /countif\(\) takes one argument here, got 2/)
  refused('sum(properties.a) + 1', /must be the whole expression/)
  refused('1 + sum(properties.a)', /can only be the outermost call/)
  refused('sum(properties.a, properties.b)', /takes one argument/)
  refused('sum()', /needs an argument/)
  refused('person.id', /Of the person, skylark reads its properties \(person.properties.<key>\) in HogQL math/)
  refused('timestamp', /Unknown field "timestamp": skylark reads event properties \(properties.<key>\), person properties \(person.properties.<key>\), event and distinct_id in HogQL math/)
  refused('properties.a like properties.b', /LIKE takes its pattern as a text literal/)
  refused('lower(properties.a) + splitByChar(properties.a)', /splitByChar\(\) takes 2 to 3 arguments, got 1/)
  refused('lower(properties.a) + regexpExtract(properties.a)', /Unknown function regexpExtract\(\)/)
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

t.test("HogQL math reads the person's properties (person.properties.<key>, paths within them) beside the event's, each from its own holder", async (t) => {
  const math = parseHogqlMath("avg(if(person.properties.plan = 'pro', properties.amount, 0) + person.properties.ltv.usd)")
  t.match(math.expr, { op: '+', args: [{ fn: 'if', args: [{ args: [{ op: 'property', key: 'plan', person: true }] }, { op: 'property', key: 'amount' }] }, { op: 'property', key: 'ltv', nested: ['usd'], person: true }] })
  t.same(hogqlProperties(math.expr, 'event'), [['amount']], "the event's paths")
  t.same(hogqlProperties(math.expr, 'person'), [['plan'], ['ltv', 'usd']], "the person's paths")
  t.same(hogqlProperties(math.expr), [['plan'], ['amount'], ['ltv', 'usd']], 'both, for a reader of one holder (a filter)')
  const event = { plan: 'free', amount: '30' }
  const person = { plan: 'pro', 'ltv.usd': '12' }
  const read = (path: readonly string[], ofPerson: boolean) => ((ofPerson ? person : event) as Record<string, string>)[path.join('.')] ?? null
  t.equal(evaluateHogql(math.expr, read), 42, "the person's plan decides, not the event's of the same name")
  t.equal(evaluateHogql(parseHogqlMath('sum(person.properties.ltv)').expr, () => null), null, 'a person without it (or no person): null, which adds nothing')
  t.match(parseHogqlMath("sum(person.properties['a b'].c)"), { expr: { op: 'property', key: 'a b', nested: ['c'], person: true } }, 'a quoted key and a path')
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
  t.same([value("properties.code like 'a%'", {}), value("properties.code not like 'a%'", {})], [0, 1], 'a missing property is like nothing')
  t.equal(value("properties.plan in ('pro', 'team')", { plan: 'team' }), 1)
  t.equal(value("properties.plan IN ['pro', 'team']", { plan: 'free' }), 0, 'a list in brackets, IN in capitals')
  t.equal(value("properties.plan not in ('pro')", { plan: 'free' }), 1)
  t.same([value("properties.plan in ('pro')", {}), value("properties.plan not in ('pro')", {})], [0, 1], 'a missing property is in no list')
  t.equal(value('properties.n in (1, 2.5)', { n: '2.50' }), 1, 'a number in the list compares numbers')
  t.equal(value("properties.a = 1 and properties.b not in ('x', 'y') or properties.c like 'z%'", { a: '1', b: 'w' }), 1, 'and binds tighter than or')
})

t.test("a HogQL filter is a condition: an event passes where it is a number other than 0, never on null", async (t) => {
  const holds = (text: string, props: Record<string, string | null> = {}) => hogqlHolds(parseHogqlCondition(text), (path) => props[path.join('.')] ?? null)
  t.equal(holds("properties.$browser = 'Chrome'", { $browser: 'Chrome' }), true)
  t.equal(holds("properties.$browser = 'Chrome'", { $browser: 'Firefox' }), false)
  t.equal(holds("properties.$browser != 'Chrome'", {}), true, 'a missing property differs from any value')
  t.equal(holds('toFloat(properties.$browser)', {}), false, 'null passes nothing')
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
  const math = parseHogqlMath("sum(if(event = 'purchase', properties.amount, 0) + length(distinct_id))")
  t.same(hogqlFields(math.expr), ['event', 'distinct_id'], 'math reads the fields too')
  t.equal(evaluateHogql(math.expr, () => '40', null, (field) => (field === 'event' ? 'purchase' : 'u-1')), 43)
  t.throws(() => hogqlHolds(parseHogqlCondition("event = 'b'"), () => null), /no value was given for the field event/, 'without fields it fails rather than guess')
  t.match(parseHogqlCondition("person.properties.`e mail` like '%@x.io'"), { op: 'like', args: [{ op: 'property', key: 'e mail', person: true }] }, "a person's property")
  refused("replaceRegexpAll(properties.a, 'x', 'y') = ''", /replaceRegexpAll\(\) is read in HogQL queries only here, not in HogQL filters\./)
  refused("regexpExtract(properties.a, 'x') = ''", /Unknown function regexpExtract\(\): HogQL filters here take toFloat.*, match, toString, toInt, concat, round, greatest, least, trim, trimLeft, trimRight, position, replaceAll, replaceOne, substring, array, splitByChar, splitByString, arrayElement, has, indexOf, countEqual, hasAny, hasAll, arrayStringConcat, arraySort, arrayReverseSort, arrayReverse, arraySlice, arrayDistinct, arrayMap, arrayFilter, arraySum, arrayExists, arrayAll, arrayCount, arrayFirst, arrayLast, protocol, domain, domainWithoutWWW, topLevelDomain, path, pathFull, queryString, fragment, queryStringAndFragment, extractURLParameter, cutWWW, cutQueryString, cutFragment, cutQueryStringAndFragment, decodeURLComponent, port, cutURLParameter, lengthUTF8, positionUTF8, positionCaseInsensitive, reverse, repeat, leftPad, rightPad, concatWithSeparator, appendTrailingCharIfAbsent, countSubstrings, countSubstringsCaseInsensitive, format, multiIf, nullIf, left, right, equals, notEquals, less, greater, lessOrEquals, greaterOrEquals, like, ilike, notLike, notILike, toInt64, toInt64OrNull, toIntOrZero, toInt64OrZero, toFloat64, toFloatOrNull, toFloat64OrNull, toFloatOrZero, toFloat64OrZero, toInt8, toInt16, toInt32, toUInt8, toUInt16, toUInt32\./)
  refused("match(properties.a, concat('x', properties.b))", /match\(\) takes its pattern as a text literal/)
  refused("concat('x') = 'x'", /concat\(\) takes 2 to 64 arguments, got 1/)
  const literal = (text: string) => (parseHogqlCondition(`properties.a = ${text}`) as { args: Array<{ value?: string }> }).args[1].value
  t.same([literal(String.raw`'\d'`), literal(String.raw`'a\nb'`), literal(String.raw`'a\0b'`), literal(String.raw`'it\'s'`), literal("'it''s'"), literal(String.raw`'\\'`)], ['\\d', 'a\nb', 'ab', "it's", "it's", '\\'], "HogQL's escapes: unknown ones kept, \\0 dropped")
  const matches = (text: string, a: string | null) => hogqlHolds(parseHogqlCondition(text), () => a, compileSearchRegex)
  t.same([matches("match(properties.a, 'b+c')", 'abbc'), matches("match(properties.a, '^b')", 'abbc'), matches("not match(properties.a, '^b')", null)], [true, false, false], 'match(): a search; null for a missing text')
  t.same([matches("match(properties.a, 'a.b')", 'a\nb'), matches("match(properties.a, '(?-s)a.b')", 'a\nb')], [true, false], "match()'s dot takes a line break, as ClickHouse's re2 with dot_nl")
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
