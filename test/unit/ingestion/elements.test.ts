import t from 'tap'
import { storedElements } from '../../../src/ingestion/consumer/elements.js'

t.test('an $elements_chain is stored as sent and leaves the properties', async (t) => {
  const chain = 'button.btn:nth-child="1"nth-of-type="1"text="Buy"'
  t.same(storedElements({ $elements_chain: chain, plan: 'pro' }), { chain, properties: { plan: 'pro' } })
  t.same(storedElements({ plan: 'pro' }), { chain: '', properties: null }, 'neither key: nothing to do')
  t.same(storedElements({ $elements_chain: '', $elements: [] }), { chain: '', properties: {} }, 'empty ones leave too')
})

t.test('an older client’s $elements become the chain PostHog builds', async (t) => {
  // PostHog's own vector (ingestion tests): one element with text and positions.
  t.same(storedElements({ $elements: [{ tag_name: 'div', nth_child: 1, nth_of_type: 2, $el_text: 'text' }], a: 1 }), {
    chain: 'div:nth-child="1"nth-of-type="2"text="text"',
    properties: { a: 1 },
  })
  const link = { tag_name: 'a', $el_text: 'Buy "now"', attr__class: 'primary btn', attr__href: '/buy', attr__id: 'cta', nth_child: 2, nth_of_type: 1 }
  t.equal(
    storedElements({ $elements: [link, { tag_name: 'body' }] }).chain,
    'a.btn.primary:attr__class="primary btn"attr__href="/buy"attr__id="cta"attr_id="cta"href="/buy"nth-child="2"nth-of-type="1"text="Buy \\"now\\""' +
      ';body:nth-child="0"nth-of-type="0"',
    'classes sorted, attributes by name, quotes escaped, missing positions 0',
  )
  t.equal(storedElements({ $elements: [{ tag_name: 'p', attr__class: ['b', 'a"'], $el_text: 'x'.repeat(500) }] }).chain, `p.a.b:attr__class="a\\",b"nth-child="0"nth-of-type="0"text="${'x'.repeat(400)}"`, 'a class list (shown sorted, as PostHog sorts it in place), text cut at 400')
})

t.test('$elements PostHog cannot convert leave the event as it came, with no chain', async (t) => {
  for (const elements of ['div', [{ tag_name: 'a', $el_text: 5 }], [{ attr__class: 7 }], [{ attr__title: null }]]) {
    t.same(storedElements({ $elements: elements, a: 1 }), { chain: '', properties: null }, JSON.stringify(elements))
  }
  t.same(storedElements({ $elements: { not: 'a list' } }), { chain: '', properties: {} }, 'an object without a length is no elements')
})
