import t from 'tap'
import { pyFloatRepr, valueNames } from '../../../src/http/routes/value-names.js'

const names = (...texts: string[]) => valueNames(texts).map((v) => v.name)

t.test('floats are written as Python repr() writes them', async (t) => {
  const cases: Array<[number, string]> = [
    [1, '1.0'], [1.5, '1.5'], [-0, '-0.0'], [0.0001, '0.0001'], [0.00001, '1e-05'], [1e16, '1e+16'], [123456789012345680, '1.2345678901234568e+17'],
    [1e15, '1000000000000000.0'], [0.1 + 0.2, '0.30000000000000004'], [-2.5e-7, '-2.5e-07'], [Infinity, 'inf'], [Number.NaN, 'nan'],
  ]
  for (const [n, repr] of cases) t.equal(pyFloatRepr(n), repr, String(n))
})

t.test('stored texts are json.loads-ed where they parse, as PostHog reads them', async (t) => {
  t.same(names('12', '12.0', '1e3', ' 7 ', '12345678901234567890'), ['12', '12.0', '1000.0', '7', '12345678901234567890'], 'numbers keep int and float apart')
  t.same(names('true', 'false', 'null', 'NaN', '-Infinity'), ['true', 'false', 'None', 'nan', '-inf'])
  t.same(names('"quoted"', 'plain', '007', '{broken'), ['quoted', 'plain', '007', '{broken'], 'text that is not JSON stays as it is')
})

t.test('lists give one name per element, objects json.dumps with sorted keys', async (t) => {
  t.same(names('["a", ["b", [1, 2.5]], null, true]'), ['a', 'b', '1', '2.5', 'None', 'true'])
  t.same(names('{"z": [1, {"y": 2, "x": "ü"}], "a": null}'), ['{"a": null, "z": [1, {"x": "\\u00fc", "y": 2}]}'])
  const deep = '['.repeat(12) + '"x"' + ']'.repeat(12)
  t.same(names(deep), ['[["x"]]'], 'flattened ten lists deep, as PostHog')
})
