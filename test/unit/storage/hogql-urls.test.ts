/**
 * HogQL's URL functions give current ClickHouse's answers: its own test's cases and the edges of its scans here, and
 * on a real 18.16 server the SQL written for it gives what the evaluation gives, for thousands of random URLs (18.16's
 * domain, path and the like differ from current servers, so skylark writes those out). Queries read them on both stores.
 */
import t from 'tap'
import { parseHogqlQuery } from '../../../src/storage/events/index.js'
import { urlCall, urlCallSql, URL_SPECS, URL_SQL_NAMES, type UrlFunction } from '../../../src/storage/events/hogql-urls.js'
import { hogqlTextSql, textBytes } from '../../../src/storage/events/hogql-values.js'
import { clickhouseUnavailableReason, startClickHouse } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'
import { Rng, fuzzSeed } from '../fuzz/rng.js'
import { randomUrl } from '../fuzz/urls.js'

/** [function, URL, (name,) what current ClickHouse answers]: its stateless test 00398_url_functions, then the edges. */
const CASES: Array<[UrlFunction, string, string | number] | [UrlFunction, string, string, string]> = [
  ['protocol', 'http://example.com', 'http'],
  ['protocol', 'svn+ssh://example.com?q=hello%20world', 'svn+ssh'],
  ['protocol', 'ftp!://example.com/', ''],
  ['protocol', '//127.0.0.1:443/', ''],
  ['protocol', 'mailto:a@b', 'mailto'],
  // At least 4 bytes from the `:`: ':/é' has 4, ':é' 3.
  ['protocol', 'x:/é', 'x'],
  ['protocol', 'x:é', ''],
  ['domain', 'http://paul@www.example.com:80/', 'www.example.com'],
  ['domain', 'http://user:password@example.com:8080', ''],
  ['domain', 'http:/paul/example/com', ''],
  ['domain', 'http://www.example.com?q=4', 'www.example.com'],
  ['domain', 'http://127.0.0.1:443/', '127.0.0.1'],
  ['domain', '//paul@www.example.com', 'www.example.com'],
  ['domain', 'example.com', 'example.com'],
  // No dot, a dot last or first, a restricted symbol, a scheme of 14 bytes: no host. A dot before the `@` counts.
  ['domain', 'http://localhost/', ''],
  ['domain', 'http://x.com./', ''],
  ['domain', 'http://.x.com/', ''],
  ['domain', 'http://x y.com/', ''],
  ['domain', 'abcdefghijklm://x.com/', 'x.com'],
  ['domain', 'abcdefghijklmn://x.com/', ''],
  ['domain', 'http://a.b@c/', 'c'],
  ['domain', 'é://x.com/', ''],
  ['domainWithoutWWW', 'http://paul@www.example.com:80/', 'example.com'],
  ['domainWithoutWWW', 'http://www./', ''],
  ['topLevelDomain', 'http://paul@www.example.com:80/', 'com'],
  ['topLevelDomain', 'http://127.0.0.1:443/', ''],
  ['topLevelDomain', 'svn+ssh://example.ru.?q=hello%20world', ''],
  ['topLevelDomain', 'example.рф', 'рф'],
  ['topLevelDomain', 'example', ''],
  ['path', 'http://127.0.0.1', ''],
  ['path', 'http://paul@127.0.0.1:443/a/b/c', '/a/b/c'],
  ['path', '//paul@127.0.0.1:443/a/b/c', '/a/b/c'],
  ['path', 'example.com/p#x?y', '/p'],
  ['path', 'x/y//z?q', '/y//z'],
  ['pathFull', '//127.0.0.1/?query=hello%20world+foo%2Bbar', '/?query=hello%20world+foo%2Bbar'],
  ['queryString', 'http://127.0.0.1/?', ''],
  ['queryString', 'http://x/?a=1&b=2#c', 'a=1&b=2'],
  ['fragment', 'http://127.0.0.1/?query=hello%20world+foo%2Bbar#a=b', 'a=b'],
  ['queryStringAndFragment', 'http://127.0.0.1/?query=hello#a=b', 'query=hello#a=b'],
  ['queryStringAndFragment', '//paul@127.0.0.1/#a=b', '#a=b'],
  ['extractURLParameter', 'http://example.com/?param1=value1&param2=value2', 'param1', 'value1'],
  ['extractURLParameter', 'http://x/?ba=1&a=2&a=3', 'a', '2'],
  ['extractURLParameter', 'http://x/?b=1#a=%20', 'a', '%20'],
  ['extractURLParameter', 'http://x/a=1', 'a', ''],
  ['cutWWW', '//paul@www.example.com/a/b/c?a=b#d=f', '//paul@example.com/a/b/c?a=b#d=f'],
  ['cutWWW', 'http://www.', 'http://www.'],
  ['cutQueryString', 'http://paul@www.example.com/a/b/c?a=b#d=f', 'http://paul@www.example.com/a/b/c#d=f'],
  ['cutFragment', 'http://www.example.com/a/b/c?a=b#d=f', 'http://www.example.com/a/b/c?a=b'],
  ['cutQueryStringAndFragment', '//paul@www.example.com/a/b/c#d=f', '//paul@www.example.com/a/b/c'],
  ['decodeURLComponent', '%D0%9F', 'П'],
  ['decodeURLComponent', '%D%9', '%D%9'],
  // A `%` without two hex digits is kept with the two bytes after it, which are not read again.
  ['decodeURLComponent', '%%41', '%%41'],
  ['decodeURLComponent', 'a+b%2', 'a+b%2'],
  // A byte of no character is kept loose (textBytes's mark).
  ['decodeURLComponent', '%FFa', '\uDCFFa'],
  ['port', 'http://paul@www.example.com:80/', 80],
  ['port', 'http://x.com:8080?q', 0],
  ['port', 'http://x.com:65536/', 0],
  ['port', 'http://x.com:0080', 80],
  ['port', 'http://localhost:80/', 0],
  ['cutURLParameter', 'http://bigmir.net/?a=b&c=d&e=f#g', 'a', 'http://bigmir.net/?c=d&e=f#g'],
  ['cutURLParameter', 'http://x/?a=b&c=d#g', 'c', 'http://x/?a=b#g'],
  ['cutURLParameter', 'http://x/?c=d#g', 'c', 'http://x/?#g'],
  ['cutURLParameter', 'http://x/?bc=d&c=e', 'c', 'http://x/?bc=d'],
]

t.test("the URL functions give current ClickHouse's answers", async (t) => {
  for (const [fn, url, ...rest] of CASES) {
    const want = rest.pop()!
    const name = rest as string[]
    t.equal(urlCall(fn, [url, ...name]), want, `${fn}(${JSON.stringify(url)}${name.map((r) => `, '${r}'`).join('')})`)
  }
})

t.test("on ClickHouse 18.16 the written SQL gives the evaluation's answer", { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const server = await startClickHouse()
  t.teardown(() => server.destroy())
  const rng = new Rng(fuzzSeed(), 11)
  const urls = [...new Set(Array.from({ length: 1500 }, () => randomUrl(rng)))]
  const names = Array.from({ length: URL_SQL_NAMES }, (_, i) => `u_${i}`)
  const post = async (sql: string): Promise<string> => {
    const res = await fetch(server.url, { method: 'POST', body: sql })
    const text = await res.text()
    if (!res.ok) throw new Error(`ClickHouse ${res.status}: ${text.slice(0, 300)}`)
    return text
  }
  // Rows of Nullable(String), NULL last: hex() of each answer (NULL as 'N'), compared byte for byte.
  const column = `arrayJoin([${urls.map((u) => `CAST(${hogqlTextSql(u)} AS Nullable(String))`).join(', ')}, NULL])`
  for (const [fn] of URL_SPECS) {
    for (const name of fn === 'extractURLParameter' || fn === 'cutURLParameter' ? ['a', '', 'é'] : [undefined]) {
      const call = urlCallSql(fn, 'x', name, names)
      const answers = (await post(`SELECT ifNull(hex(toString(${call})), 'N') FROM (SELECT ${column} AS x) FORMAT TSV`)).replace(/\n$/, '').split('\n')
      const wrong = urls.filter((url, i) => answers[i] !== textBytes(String(urlCall(fn, name === undefined ? [url] : [url, name]))).toString('hex').toUpperCase())
      t.same(wrong.slice(0, 5), [], `${fn}${name === undefined ? '' : ` with '${name}'`}: ${urls.length} URLs, ${wrong.length} differ`)
      t.equal(answers[urls.length], 'N', `${fn} of NULL is NULL`)
    }
  }
})

t.test('queries read the URL functions on both stores', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const TEAM = 7
  const rows = pageviewRows(TEAM, { d1: { u: 'https://www.shop.io:8443/cart?utm_source=ad&x=1#top' }, d2: { u: 'shop.io/help' }, d3: { u: '' }, d4: {} })
  const { sqlite, clickhouse } = await bothEventStores(t, rows, 'skylark_hogql_urls')
  const clock = { now: Date.parse('2024-07-01T00:00:00Z'), zone: 'UTC' }
  const plan = parseHogqlQuery("SELECT domain(properties.u), path(properties.u), extractURLParameter(properties.u, 'utm_source'), cutQueryStringAndFragment(properties.u), port(properties.u), cutURLParameter(properties.u, 'utm_source') FROM events ORDER BY distinct_id", clock)
  const want = [
    ['www.shop.io', '/cart', 'ad', 'https://www.shop.io:8443/cart', 8443, 'https://www.shop.io:8443/cart?x=1#top'],
    ['shop.io', '/help', '', 'shop.io/help', 0, 'shop.io/help'],
    ['', '', '', '', 0, ''],
    [null, null, null, null, null, null],
  ]
  t.same(await sqlite.hogqlQuery(TEAM, plan), want, 'SQLite')
  t.same(await clickhouse.hogqlQuery(TEAM, plan), want, 'ClickHouse')
  const grouped = parseHogqlQuery("SELECT domainWithoutWWW(properties.u) AS site, count() FROM events WHERE notEmpty(topLevelDomain(properties.u)) GROUP BY site ORDER BY site", clock)
  t.same(await sqlite.hogqlQuery(TEAM, grouped), [['shop.io', 2]], 'SQLite: grouped by site')
  t.same(await clickhouse.hogqlQuery(TEAM, grouped), [['shop.io', 2]], 'ClickHouse: grouped by site')
  t.throws(() => parseHogqlQuery('SELECT domain(1) FROM events', clock), /domain\(\) takes texts, not numbers/)
  t.throws(() => parseHogqlQuery('SELECT extractURLParameter(properties.u, event) FROM events', clock), /extractURLParameter\(\) takes its parameter's name as a text literal/)
  t.throws(() => parseHogqlQuery("SELECT cutURLParameter(properties.u, 'a&b') FROM events", clock), /cutURLParameter\(\) takes a name without \?, # or & here/)
})
