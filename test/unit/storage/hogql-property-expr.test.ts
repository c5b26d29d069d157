import t from 'tap'
import { propertyFiltersHogql } from '../../../src/storage/events/hogql-property-expr.js'

t.test("property filters read as PostHog's property_to_expr writes them", async (t) => {
  const hogql = (node: unknown) => propertyFiltersHogql(node, 'filters.properties')
  t.equal(hogql([{ key: 'plan', value: 'pro', type: 'event' }]), "(properties['plan'] = 'pro')", 'exact by default, a list of filters all holding')
  t.equal(hogql({ key: "it's", value: ['a', 1], operator: 'is_not' }), "properties['it\\'s'] NOT IN ('a', 1)", 'values of a list in IN; quotes escaped')
  t.equal(hogql({ key: 'email', value: '50%', operator: 'icontains', type: 'person' }), "toString(person.properties['email']) ILIKE '%50%%'", "icontains: the value's wildcards kept, as PostHog")
  t.equal(hogql({ key: 'u', value: ['a', 'b'], operator: 'not_regex' }), "(ifNull(NOT match(toString(properties['u']), 'a'), 1) AND ifNull(NOT match(toString(properties['u']), 'b'), 1))", 'a negative operator of many values: each, joined by AND')
  t.equal(hogql({ key: 'n', value: [1, 2], operator: 'between' }), "(properties['n'] >= 1 AND properties['n'] <= 2)")
  t.equal(hogql({ key: 'x', operator: 'is_not_set' }), "isNull(properties['x'])")
  t.equal(hogql({ key: '$elements_chain', value: 'a', operator: 'icontains' }), "toString(elements_chain) ILIKE '%a%'", 'the elements chain is its column')
  t.equal(hogql({ type: 'OR', values: [{ key: 'a', value: -1, operator: 'lt' }, { key: "event = 'x'", type: 'hogql' }] }), "(properties['a'] < (-1)) OR ((event = 'x'))")
  t.equal(hogql({ key: 'seats', value: 3, operator: 'gt', type: 'group', group_type_index: 1 }), "group_1.properties['seats'] > 3", "a group's property, of the event's group of that type")
  t.equal(hogql([{ key: 'id', value: 5, type: 'cohort' }, { key: 'id', value: '7', type: 'cohort', operator: 'not_in' }]), '(person_id IN COHORT 5) AND (person_id NOT IN COHORT 7)', "a cohort's persons")
  t.equal(hogql({ type: 'AND', values: [] }), '1', 'an empty group holds')
  t.equal(hogql({ key: 'a', value: [] }), '1', 'an empty list of values holds')
  for (const [node, message] of [
    [{ key: 'a', type: 'tree', value: 3 }, /has type "tree"/],
    [{ key: 'id', type: 'cohort', value: 'x' }, /a cohort filter: its value is the cohort's id/],
    [{ key: 'a', operator: 'semver_gt', value: '1.0' }, /operator "semver_gt" is not read/],
    [{ value: 1 }, /needs its key/],
    [{ key: 'a', type: 'group', value: 1 }, /a group filter: its group_type_index is 0 to 4/],
    [{ key: 'a', value: { b: 1 } }, /value must be a text, a number/],
    [{ key: 'a', value: [2, 1], operator: 'between' }, /between takes a list of two numbers \[min, max\], min first/],
    ['x', /must be a property filter or a group/],
  ] as const) {
    t.throws(() => hogql(node), message, JSON.stringify(node))
  }
})
