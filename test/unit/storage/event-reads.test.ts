/**
 * Three reads the stores once answered differently (found by test/unit/fuzz/event-reads-stores.test.ts): the
 * actors of events under a property filter (ClickHouse refused it: its tokeniser's lambda named `d` clashed with
 * the column the query names so), a values search that folds case beyond ASCII (SQLite's lower() folds A–Z only),
 * and a daily breakdown's null group, last of its day on both.
 */
import t from 'tap'
import { propertyFilters } from '../../../src/experiments/metrics.js'
import { clickhouseUnavailableReason } from '../../helpers/clickhouse.js'
import { bothEventStores, pageviewRows } from '../../helpers/event-stores.js'

const TEAM = 14

const PROPERTIES: Record<string, Record<string, unknown>> = {
  d1: { plan: 'ÄBC' },
  d2: { plan: 'äbc' },
  d3: { plan: 'free' },
  d4: {},
}

t.test('actors, values searches and daily breakdowns read alike on both stores', { skip: clickhouseUnavailableReason() ?? false }, async (t) => {
  const { sqlite, clickhouse } = await bothEventStores(t, pageviewRows(TEAM, PROPERTIES), 'skylark_event_reads')
  for (const [name, store] of [['SQLite', sqlite], ['ClickHouse', clickhouse]] as const) {
    const filter = { teamId: TEAM, properties: propertyFilters([{ key: 'plan', operator: 'is_set', type: 'event' }]) }
    t.same((await store.actors(filter)).distinctIds, ['d1', 'd2', 'd3'], `${name}: the actors of the events with a plan`)
    const values = await store.propertyValues({ filter: { teamId: TEAM }, source: { property: 'plan' }, search: 'äB', limit: 10 })
    t.same([...values].sort(), ['ÄBC', 'äbc'], `${name}: a search for äB finds both cases`)
    const days = await store.dailyBreakdown({ teamId: TEAM, breakdown: 'plan', math: 'events' })
    t.same(days.map((d) => d.value), ['free', 'ÄBC', 'äbc', null], `${name}: values in byte order, the null group last`)
  }
})
