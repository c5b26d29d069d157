import t from 'tap'
import { COOKIELESS_SENTINEL, cookielessHash, dayOf, dayZone, hashToDeviceId, hashToDistinctId, isDayValid, rootDomain, statelessSessionId, stripHashInputs } from '../../../src/persons/cookieless.js'

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/58.0.3029.110 Safari/537.3'
const SALT = 'AQIDBAUGBwgJCgsMDQ4PEA=='
const BASE = { teamId: 1, ip: '1.2.3.4', rootDomain: 'example.com', userAgent: CHROME, n: 0, hashExtra: '' }

t.test("the hash is PostHog's, bit for bit: its shared vectors (rust/common/cookieless/src/test_cases.json)", async (t) => {
  const vectors: Array<[string, Partial<typeof BASE>, string]> = [
    [SALT, {}, 'jZfBjkLcdjlQTVmIKIhC3Q=='],
    ['BBBBBBBBBBBBBBBBBBBBBA==', {}, '+enbKKNpXkdkAyA7u+VkRA=='],
    [SALT, { teamId: 3000 }, 'BiC9Zpcr2Ctyc6mvZh4+lg=='],
    [SALT, { ip: '5.6.7.8' }, 'kmHSjAz71inr4axAIDUN1A=='],
    [SALT, { rootDomain: 'other.com' }, 'HSTgvTovdKSCZxOWE0fiOA=='],
    [SALT, { userAgent: 'Smart Fridge' }, 'sjSJh5qV4gsbEAc2DG6w7g=='],
    [SALT, { n: 1 }, 'igaaEDUIUxmCqAaPyFWP7Q=='],
    [SALT, { hashExtra: 'Sphinx of Black Quartz, Judge My Vow. This is a pretty long extra string - it is exactly 100 chars!!' }, 'lPLnR7N4qR683u8oyGmTGg=='],
    [SALT, { hashExtra: "Sphinx of Black Quartz, Judge My Vow. This is a pretty long extra string - it is exactly 100 chars!!! Actually no, it's longer, to make sure that this is truncated properly" }, 'lPLnR7N4qR683u8oyGmTGg=='],
    ['ymdOUMYgo0sM6RlAEjs6qQ==', { ip: '127.0.0.1', rootDomain: '127.0.0.1:3000', userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:136.0) Gecko/20100101 Firefox/136.0' }, '/R98LDV5ssv0VIx1j8n8aQ=='],
  ]
  for (const [salt, change, expected] of vectors) {
    t.equal(cookielessHash(Buffer.from(salt, 'base64'), { ...BASE, ...change }).toString('base64'), expected, JSON.stringify(change))
  }
  const hash = Buffer.from('jZfBjkLcdjlQTVmIKIhC3Q==', 'base64')
  t.equal(hashToDistinctId(hash), 'cookieless_jZfBjkLcdjlQTVmIKIhC3Q')
  t.equal(hashToDeviceId(hash), 'cookielessd_jZfBjkLcdjlQTVmIKIhC3Q')
  t.throws(() => cookielessHash(Buffer.alloc(8), BASE), 'a salt is 16 bytes')
  t.equal(COOKIELESS_SENTINEL, '$posthog_cookieless')
})

t.test("the root domain is PostHog's: its shared host vectors", async (t) => {
  const cases: Array<[string, string]> = [
    ['https://test.example.com/foo', 'example.com'],
    ['https://test.example.co.uk/foo', 'example.co.uk'],
    ['http://localhost:3000', '127.0.0.1:3000'],
    ['http://127.0.0.1:3000', '127.0.0.1:3000'],
    ['http://127.0.0.1:3000/foo', '127.0.0.1:3000'],
    ['http://127.0.0.1:3000#foo', '127.0.0.1:3000'],
    ['1.2.3.4', '1.2.3.4'],
    ['1.2.3.4:5000', '1.2.3.4:5000'],
    ['example.co.uk', 'example.co.uk'],
    ['sub.example.com', 'example.com'],
    ['http://example.com:8000', 'example.com:8000'],
    ['https://user:pass@example.com', 'example.com'],
    ['https://example.com?param=value', 'example.com'],
    ['https://example.com#fragment', 'example.com'],
    ['localhost', '127.0.0.1'],
    ['', ''],
    ['example.com:8080', 'example.com:8080'],
    ['sub.example.co.uk:8080', 'example.co.uk:8080'],
    ['2001:0db8:85a3:0000:0000:8a2e:0370:7334', '[2001:db8:85a3::8a2e:370:7334]'],
    ['http://[2001:0db8:85a3:0000:0000:8a2e:0370:7334]', '[2001:db8:85a3::8a2e:370:7334]'],
    ['[2001:0db8:85a3:0000:0000:8a2e:0370:7334]:8080', '[2001:db8:85a3::8a2e:370:7334]:8080'],
    ['http://[2001:0db8:85a3::8a2e:0370:7334]:8080', '[2001:db8:85a3::8a2e:370:7334]:8080'],
    ['[::1]', '[::1]'],
    ['[::1]:8080', '[::1]:8080'],
    ['::1', '[::1]'],
    ['not a url', 'not a url'],
  ]
  for (const [host, expected] of cases) t.equal(rootDomain(host), expected, host)
})

t.test("an event's day is read in its own zone, else the project's, else UTC (PostHog's vectors)", async (t) => {
  const at = (iso: string) => Date.parse(iso)
  t.equal(dayOf(at('2024-12-31T10:00:00Z'), dayZone('Europe/London', 'UTC')), '2024-12-31')
  t.equal(dayOf(at('2025-01-01T10:00:00Z'), dayZone('Not/A/Timezone', 'UTC')), '2025-01-01')
  t.equal(dayOf(at('2025-01-01T20:30:01Z'), dayZone('Asia/Tehran', 'UTC')), '2025-01-02')
  t.equal(dayOf(at('2025-01-01T12:00:00Z'), dayZone('Pacific/Tongatapu', 'UTC')), '2025-01-02')
  t.equal(dayOf(at('2025-01-01T02:59:00Z'), dayZone('America/Sao_Paulo', 'UTC')), '2024-12-31')
  t.equal(dayOf(at('2025-01-01T10:59:00Z'), dayZone('Pacific/Midway', 'UTC')), '2024-12-31')
  t.equal(dayOf(at('2025-01-01T10:59:00Z'), dayZone(undefined, 'America/New_York')), '2025-01-01')
  t.equal(dayOf(at('2025-01-01T03:59:00Z'), dayZone(42, 'America/New_York')), '2024-12-31', 'a zone that is not text is none')
})

t.test('a day is valid while some zone is in it: from 12 h before its UTC start to 14 h after its UTC end', async (t) => {
  const start = Date.parse('2025-06-10T00:00:00Z')
  const hour = 3_600_000
  t.notOk(isDayValid('2025-06-10', start - 12 * hour - 1))
  t.ok(isDayValid('2025-06-10', start - 12 * hour))
  t.ok(isDayValid('2025-06-10', start + 38 * hour - 1))
  t.notOk(isDayValid('2025-06-10', start + 38 * hour))
  t.notOk(isDayValid('not-a-day', start))
})

t.test("stateless mode's session is one per device and day: a UUIDv7 of the day's start in the zone, random part from the hash", async (t) => {
  const hash = Buffer.from('jZfBjkLcdjlQTVmIKIhC3Q==', 'base64')
  const id = statelessSessionId(Date.parse('2025-03-01T15:00:00Z'), 'America/New_York', hash)
  const start = Date.parse('2025-03-01T05:00:00Z')
  t.equal(id.slice(0, 13).replace('-', ''), start.toString(16).padStart(12, '0'), "the New York day's start")
  t.equal(id[14], '7', 'version 7')
  t.ok('89ab'.includes(id[19]), 'RFC variant')
  t.equal(statelessSessionId(Date.parse('2025-03-01T23:59:00Z'), 'America/New_York', hash), id, 'the same all day')
  t.not(statelessSessionId(Date.parse('2025-03-02T06:00:00Z'), 'America/New_York', hash), id, 'a new one the next day')
  t.equal(id.replaceAll('-', '').slice(20), hash.subarray(4, 10).toString('hex'), "the last six bytes are the hash's fifth to tenth")
})

t.test('what the hash was made of is removed before the event is stored', async (t) => {
  const properties = { $ip: '1.2.3.4', $raw_user_agent: CHROME, $cookieless_extra: 'x', $browser: 'Chrome', $set: { $raw_user_agent: CHROME, plan: 'pro' }, $set_once: { $initial_raw_user_agent: CHROME } }
  stripHashInputs(properties)
  t.same(properties, { $browser: 'Chrome', $set: { plan: 'pro' }, $set_once: {} })
})
