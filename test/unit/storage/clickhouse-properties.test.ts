/**
 * A property's text on a real ClickHouse: the top-level key only, whatever comes nested before it, for several
 * keys read in one query, in its SELECT and its WHERE. On servers without JSONExtract each key's tokeniser is
 * written once, under an alias, since 18.16 spends most of a small query analysing its text. (There an object or
 * array value is read from the whole properties, so one whose key also comes nested before it reads wrong: the
 * limit clickhouse-filters.ts names.)
 */
import t from 'tap'
import { propertyTextExpr } from '../../../src/storage/events/clickhouse-filters.js'
import { clickhouseEventStore, clickhouseUnavailableReason } from '../../helpers/clickhouse.js'

const EVENTS: Array<Record<string, unknown>> = [
  { plan: 'pro', $set: { plan: 'nested' } },
  { $set: { plan: 'nested' }, plan: 'free' },
  { $set: { plan: 'nested', deeper: [{ plan: 'x' }] }, plan: 'after' },
  { plan: { tier: 2 }, $set: { plan: 'nested' } },
  { $set: { plan: 'only nested' } },
  { plan: null, $set: [1, { plan: 'y' }] },
  { list: ['plan', '"plan":'], plan: 'quote " and \\ backslash' },
  { plan: 3.5 },
  {},
]

const KEYS = ['plan', '$set']

/** The text skylark reads for a property: strings unquoted, other JSON as written, null and missing as NULL. */
const textOf = (value: unknown) => (value === undefined || value === null ? null : typeof value === 'string' ? value : JSON.stringify(value))

t.test("each key's top-level value, several keys in one query", { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { ch, features } = await clickhouseEventStore(t, 'skylark_properties')
  const p = (key: string) => propertyTextExpr(key, features)
  const rows = EVENTS.map((e) => `'${JSON.stringify(e).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`).join(', ')
  const sql = `SELECT i, ${KEYS.map((k, j) => `${p(k)} AS v${j}`).join(', ')}, ${p('plan')} = 'pro' AS pro
    FROM (SELECT arrayJoin(arrayEnumerate([${rows}])) AS i, [${rows}][i] AS properties)
    WHERE isNull(${p('plan')}) OR ${p('plan')} != '' ORDER BY i FORMAT JSONEachRow`
  const res = await fetch(ch.url, { method: 'POST', body: sql })
  const answer = await res.text()
  t.equal(res.status, 200, answer.slice(0, 300))
  const got = answer.trimEnd().split('\n').map((line) => Object.values(JSON.parse(line)))
  const want = EVENTS.map((e, i) => [i + 1, ...KEYS.map((k) => textOf(e[k])), e.plan === undefined || e.plan === null ? null : Number(e.plan === 'pro')])
  t.same(got, want)
})

t.test("without JSONExtract a key's tokeniser is written once in its text", async (t) => {
  const sql = propertyTextExpr('plan', { version: '18.16.1', jsonExtract: false, dateTime64: false })
  t.equal(sql.split('extractAll(').length - 1, 2, 'the copy cut into tokens twice (the tokens and their depths), once')
  t.ok(sql.length < 2000, `${sql.length} characters`)
})
