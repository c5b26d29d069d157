import t from 'tap'
import { pageEnvelope, parsePage } from '../../../src/common/pagination.js'

t.test('parsePage', async (t) => {
  t.same(parsePage(new URLSearchParams('')), { limit: 100, offset: 0 }, 'defaults to 100')
  t.same(parsePage(new URLSearchParams('limit=5000&offset=7')), { limit: 1000, offset: 7 }, 'caps limit at 1000')
  t.same(parsePage(new URLSearchParams('limit=0')), { limit: 1, offset: 0 })
  t.throws(() => parsePage(new URLSearchParams('limit=-1')), { code: 'invalid_input', attr: 'limit' })
  t.throws(() => parsePage(new URLSearchParams('offset=abc')), { code: 'invalid_input', attr: 'offset' })
})

t.test('pageEnvelope links', async (t) => {
  const q = new URLSearchParams('search=x&limit=10&offset=10')
  const env = pageEnvelope('https://h.example', '/api/x/', q, { limit: 10, offset: 10 }, 25, [1])
  t.equal(env.next, 'https://h.example/api/x/?search=x&limit=10&offset=20')
  t.equal(env.previous, 'https://h.example/api/x/?search=x&limit=10', 'first page drops offset')
  const last = pageEnvelope('https://h.example', '/api/x/', q, { limit: 10, offset: 20 }, 25, [])
  t.equal(last.next, null)
  const first = pageEnvelope('https://h.example', '/api/x/', new URLSearchParams(''), { limit: 10, offset: 0 }, 5, [])
  t.same([first.next, first.previous, first.count], [null, null, 5])
})
