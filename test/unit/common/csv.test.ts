import t from 'tap'
import { csvOf, parseCsv } from '../../../src/common/csv.js'

t.test('nested objects and lists become dotted columns, in the order they first appear', async (t) => {
  const rows = [
    { id: 'a', distinct_ids: ['x', 'y'], properties: { plan: 'pro', seen: { at: 3 } } },
    { id: 'b', distinct_ids: ['z'], properties: { email: 'b@example.com' }, extra: null },
  ]
  t.equal(
    csvOf(rows),
    'id,distinct_ids.0,distinct_ids.1,properties.plan,properties.seen.at,properties.email,extra\r\n' +
      'a,x,y,pro,3,,\r\n' +
      'b,z,,,,b@example.com,\r\n',
  )
})

t.test("values are written as Python's csv module writes them, quoted only where needed", async (t) => {
  t.equal(csvOf([{ yes: true, no: false, none: null, n: 2.5, text: 'say "hi", then\nleave' }]), 'yes,no,none,n,text\r\nTrue,False,,2.5,"say ""hi"", then\nleave"\r\n')
  t.equal(csvOf([{ 'a,b': 1 }]), '"a,b"\r\n1\r\n', 'a column name too')
})

t.test('empty lists and objects give no column; no rows, no text', async (t) => {
  t.equal(csvOf([{ id: 1, tags: [], properties: {} }]), 'id\r\n1\r\n')
  t.equal(csvOf([]), '')
})

t.test("CSV text reads back as Python's csv.reader reads each line: quoted fields, doubled quotes, empty lines empty", async (t) => {
  t.same(parseCsv('a,b\r\n"c, d","say ""hi"""\n\nlast'), [['a', 'b'], ['c, d', 'say "hi"'], [], ['last']])
  t.same(parseCsv('one\n'), [['one']], 'a final line break ends the last row')
  t.same(parseCsv(',x'), [['', 'x']])
})
