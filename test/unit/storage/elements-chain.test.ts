import t from 'tap'
import { storedElements } from '../../../src/ingestion/consumer/elements.js'
import { chainToElements } from '../../../src/storage/events/elements-chain.js'

const none = { text: null, tag_name: null, attr_class: null, href: null, attr_id: null, nth_child: null, nth_of_type: null, attributes: {} }

t.test('a chain reads back as the elements it was built from, in order', async (t) => {
  const link = { tag_name: 'a', $el_text: 'Buy "now"', attr__class: 'primary btn', attr__href: '/buy?a=1;b=2', attr__id: 'cta', nth_child: 2, nth_of_type: 1 }
  const { chain } = storedElements({ $elements: [link, { tag_name: 'body' }] })
  t.same(chainToElements(chain), [
    {
      ...none,
      text: 'Buy \\"now\\"',
      tag_name: 'a',
      attr_class: ['btn', 'primary'],
      href: '/buy?a=1;b=2',
      attr_id: 'cta',
      nth_child: 2,
      nth_of_type: 1,
      attributes: { attr__class: 'primary btn', attr__href: '/buy?a=1;b=2', attr__id: 'cta' },
      order: 0,
    },
    { ...none, tag_name: 'body', nth_child: 0, nth_of_type: 0, order: 1 },
  ], 'quotes stay escaped and a ; inside quotes does not split, as PostHog reads it')
})

t.test('odd chains read as PostHog reads them, never throwing', async (t) => {
  t.same(chainToElements(''), [])
  t.same(chainToElements('div'), [{ ...none, tag_name: 'div', order: 0 }], 'no attributes')
  t.same(chainToElements('a.x..y:nth-child="z"'), [{ ...none, tag_name: 'a', attr_class: ['x', 'y'], order: 0 }], 'empty classes dropped; an unreadable position is null')
  t.same(chainToElements('span:title=""text="hi"'), [{ ...none, tag_name: 'span', attributes: { title: '"text=' }, order: 0 }], 'an empty value swallows what follows, as the value pattern does')
  const long = `button:text="go";${'div:nth-child="1";'.repeat(1500)}`
  const cut = chainToElements(long)
  t.ok(cut.length < 1501 && cut[0].tag_name === 'button', `a chain over 16,384 characters keeps its first elements (${cut.length})`)
})
