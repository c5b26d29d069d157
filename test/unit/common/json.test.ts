import t from 'tap'
import { copyObject, mergeObjects } from '../../../src/common/json.js'

t.test('copyObject gives an independent shallow copy with the same keys in the same order', async (t) => {
  const nested = { deep: 1 }
  const source = { b: 1, a: nested, c: null }
  const copy = copyObject(source)
  t.strictSame(Object.keys(copy), ['b', 'a', 'c'])
  t.equal(copy.a, nested, 'shallow')
  copy.d = 2
  t.notOk('d' in source, 'adding to the copy leaves the source alone')
})

t.test('copyObject keeps a JSON "__proto__" key as data, as a spread does', async (t) => {
  const source = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}')
  const copy = copyObject(source)
  t.equal(Object.getPrototypeOf(copy), Object.prototype, 'the prototype is unchanged')
  t.ok(Object.hasOwn(copy, '__proto__'))
  t.strictSame(JSON.stringify(copy), JSON.stringify({ ...source }))
})

t.test('mergeObjects is { ...base, ...over }: base keys first, over values win, neither input changes', async (t) => {
  const base = { a: 1, b: 2 }
  const over = JSON.parse('{"b": 3, "c": 4, "__proto__": {"x": 1}}')
  const merged = mergeObjects(base, over)
  t.strictSame(JSON.stringify(merged), JSON.stringify({ ...base, ...over }))
  t.equal(Object.getPrototypeOf(merged), Object.prototype)
  t.strictSame(base, { a: 1, b: 2 })
  t.strictSame(Object.keys(over), ['b', 'c', '__proto__'])
})
