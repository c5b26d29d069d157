/**
 * `gt`, `gte`, `lt` and `lte` property filters read a property's text as a number by one rule (numbers.ts) on
 * both stores and in the action matcher: texts that are no number pass none of them, whatever the bound.
 * Before, SQLite's CAST read `abc` (and `true`) as 0 and ` 3` as 3, ClickHouse read `inf` as infinity, and the
 * matcher followed neither.
 */
import t from 'tap'
import { propertiesHold } from '../../../src/management/actions/properties.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'

const TEAM = 6

const PROPERTIES: Record<string, Record<string, unknown>> = {
  d1: { n: 'abc' },
  d2: { n: ' 3' },
  d3: { n: '+5' },
  d4: { n: '0x10' },
  d5: { n: '1e3' },
  d6: { n: 'inf' },
  d7: { n: '' },
  d8: { n: true },
  d9: { n: -2.5 },
  d10: { n: '.5' },
  d11: {},
}

const CASES: Array<[string, number | string, string[]]> = [
  ['gt', -1, ['d10', 'd3', 'd5']],
  ['gt', 4, ['d3', 'd5']],
  ['gte', 5, ['d3', 'd5']],
  ['lt', 1, ['d10', 'd9']],
  ['lte', '-2.5', ['d9']],
  ['lt', 'abc', []],
]

t.test('numeric filters pass the same events on both stores and in the action matcher', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { sqlite, clickhouse } = await bothEventStores(t, pageviewRows(TEAM, PROPERTIES), 'skylark_number_filters')
  for (const [operator, value, want] of CASES) {
    const properties = [{ key: 'n', operator: operator as 'gt', value }]
    const filter = { teamId: TEAM, properties }
    const name = `${operator} ${JSON.stringify(value)}`
    t.same(await sqlite.distinctIds(filter), want, `SQLite: ${name}`)
    t.same(await clickhouse.distinctIds(filter), want, `ClickHouse: ${name}`)
    const matched = Object.keys(PROPERTIES).filter((id) => propertiesHold(properties, { event: '$pageview', distinct_id: id, properties: PROPERTIES[id] }))
    t.same(matched.sort(), want, `action matcher: ${name}`)
  }
})
