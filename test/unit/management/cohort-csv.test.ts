/** Which persons an uploaded CSV names, as PostHog's `_calculate_static_by_csv` reads the file. */
import t from 'tap'
import { csvMembers } from '../../../src/management/index.js'

const read = (text: string) => csvMembers(new TextEncoder().encode(text))

t.test('one column is distinct ids, its first row too, unless its header names person ids or emails', async (t) => {
  t.same(read('\n ada \nbob\n\n'), { ids: ['ada', 'bob'], kind: 'distinct_id' }, 'blank lines skipped, ids trimmed')
  t.same(read('Person .id\n0190a1b2-0000-7000-8000-000000000001\n'), { ids: ['0190a1b2-0000-7000-8000-000000000001'], kind: 'person_id' }, "PostHog's export header")
  t.same(read('E-mail\nada@example.com\n'), { ids: ['ada@example.com'], kind: 'email' })
  t.same(read('distinct_id\nada\n'), { ids: ['distinct_id', 'ada'], kind: 'distinct_id' }, 'a distinct_id header alone is read as an id, as PostHog reads it')
})

t.test('with more columns, the person id column wins over distinct ids, and those over emails; short rows are skipped', async (t) => {
  t.same(read('email,Distinct-ID,name\nada@example.com,ada,Ada\nbob@example.com\n,,\ncy@example.com,cy\n'), { ids: ['ada', 'cy'], kind: 'distinct_id' })
  t.same(read('name,person_id,email\nAda,u1,ada@example.com\n'), { ids: ['u1'], kind: 'person_id' })
  t.same(read('name,EMAIL\n"Ada, Countess",ada@example.com\n'), { ids: ['ada@example.com'], kind: 'email' }, 'a quoted comma stays in its field')
})

t.test('an empty file, one without ids, one without an id column, or not UTF-8 is a 400 on csv', async (t) => {
  const refused = (file: Uint8Array | string, detail: string | RegExp) =>
    t.throws(() => (typeof file === 'string' ? read(file) : csvMembers(file)), { code: 'invalid', attr: 'csv', detail }, String(detail))
  refused('\n\n', 'CSV file is empty. Please upload a CSV file with at least one row of data.')
  refused('email\n \n', /^CSV file contains no valid person IDs, distinct IDs, or email addresses/)
  refused('name,plan\nAda,pro\n', /supported ID header: .* Found columns: name, plan$/)
  refused(new Uint8Array([0x61, 0xff, 0x0a]), 'CSV file encoding is not supported. Please save your file as UTF-8 and try again.')
})
