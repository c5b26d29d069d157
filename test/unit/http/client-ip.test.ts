import t from 'tap'
import { clientIp } from '../../../src/http/client-ip.js'
import type { RequestContext } from '../../../src/http/types.js'

const ctx = (forwarded: string | undefined, remoteAddress = '0000:0000:0000:0000:0000:ffff:c633:6407') =>
  ({ headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded }, remoteAddress }) as unknown as RequestContext

t.test("the client's address is the first X-Forwarded-For entry, read as PostHog's flag service reads it", async (t) => {
  const cases: Array<[string | undefined, string | null]> = [
    ['203.0.113.7', '203.0.113.7'],
    ['203.0.113.7, 10.0.0.1', '203.0.113.7'],
    [' 203.0.113.7 ,10.0.0.1', '203.0.113.7'],
    ['203.0.113.7:8080', '203.0.113.7'],
    ['2001:db8::1', '2001:db8::1'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    // not an address: the socket's (an IPv4-mapped IPv6 one, reported as IPv4)
    ['bogus, 8.8.8.8', '198.51.100.7'],
    ['unknown', '198.51.100.7'],
    ['', '198.51.100.7'],
    [undefined, '198.51.100.7'],
  ]
  for (const [forwarded, expected] of cases) t.equal(clientIp(ctx(forwarded)), expected, JSON.stringify(forwarded))
  t.equal(clientIp(ctx(undefined, '')), null, 'no socket address either')
})
