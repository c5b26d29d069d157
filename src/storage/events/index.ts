/** Opening the event store for queries: SQLite (events.db) or ClickHouse when CLICKHOUSE_URL is set. */
import { ClickHouseEventStore } from './clickhouse.js'
import { createClickHouseClient, detectFeatures, type ClickHouseOptions } from './clickhouse-schema.js'
import { ThreadedEventStore } from './query-thread.js'
import type { HogqlQueryPlan } from './hogql-query.js'
import type { AnswerValue } from './hogql-values.js'
import type {
  BreakdownQuery,
  BreakdownRow,
  DailyBreakdownQuery,
  DailyBreakdownRow,
  EventActors,
  EventFilter,
  EventPage,
  EventStore,
  ExperimentExposuresQuery,
  ExperimentSums,
  ExperimentVariantsQuery,
  ExposureCount,
  FunnelQuery,
  FunnelRow,
  PropertyValuesQuery,
  StoredEvent,
  TallyQuery,
  TallyRow,
  TimesQuery,
  TimesRow,
} from './types.js'

export * from './types.js'
export { SqliteEventSink, SqliteEventStore } from './sqlite.js'
export { compileSqliteProperties, hogqlReadSql, propertyPathText as sqlitePropertyPathText, propertyText as sqlitePropertyText, registerFilterFunctions } from './sqlite-filters.js'
export { eventFiltersOnly, hogqlFilter, readPropertyFilter, readPropertyNode, readsPersons, type NodeRefusal, type NodeRules } from './property-nodes.js'
export { chainHref, chainToElements, chainValues, USEFUL_ELEMENTS, type ElementJson } from './elements-chain.js'
export { registerActionFunctions, type RegexEngine } from './sqlite-actions.js'
export { ClickHouseEventStore } from './clickhouse.js'
export { ClickHouseEventSink } from './clickhouse-sink.js'
export { UNIT_MS as RETENTION_UNIT_MS } from './experiment-retention.js'
export { sourceFields, sourceProperties } from './experiment-rows.js'
export { textNumber } from './numbers.js'
export { sequenceHolds } from './sequences.js'
export { compareText } from './experiment-aggregate.js'
export { DEFAULT_RETURNED_ROWS, innermost, parseHogqlQuery, withPersons, type HogqlQueryPlan, type QueryColumn } from './hogql-query.js'
export { parseHogqlQuerySet, type HogqlQuerySet } from './hogql-union.js'
export { fillInSet } from './hogql-in.js'
export { fillLookup, type FieldLookupOf, type Lookup, type LookupOf, type LookupValues } from './hogql-lookups.js'
export { joinBelow, joinRows, MAX_JOIN_ROWS } from './hogql-join.js'
export { propertyFiltersHogql } from './hogql-property-expr.js'
export { runHogqlQuery, runHogqlQueryOver, type QueryDistinctId, type QueryGroup, type QueryPerson } from './hogql-query-run.js'
export type { AnswerValue } from './hogql-values.js'
export { HogqlMathError, hogqlFields, hogqlHolds, hogqlProperties, parseHogqlMath, type HogqlField, type HogqlMath, type HogqlValue, type PropertyPath } from './hogql-math.js'
export { migrateClickHouse, type ClickHouseOptions, type ServerFeatures } from './clickhouse-schema.js'

/**
 * ClickHouse may be down when the service starts; the store connects on first use and again after a
 * failed attempt, so queries work as soon as the server is back.
 */
class LazyClickHouseStore implements EventStore {
  readonly #options: ClickHouseOptions
  #store: Promise<ClickHouseEventStore> | null = null

  constructor(options: ClickHouseOptions) {
    this.#options = options
  }

  #get(): Promise<ClickHouseEventStore> {
    this.#store ??= (async () => {
      const probe = createClickHouseClient(this.#options)
      try {
        return new ClickHouseEventStore(this.#options, await detectFeatures(probe))
      } finally {
        await probe.close()
      }
    })().catch((error: unknown) => {
      this.#store = null
      throw error
    })
    return this.#store
  }

  async list(filter: EventFilter, page: EventPage): Promise<StoredEvent[]> {
    return (await this.#get()).list(filter, page)
  }

  async get(teamId: number, uuid: string): Promise<StoredEvent | null> {
    return (await this.#get()).get(teamId, uuid)
  }

  async propertyValues(query: PropertyValuesQuery): Promise<string[]> {
    return (await this.#get()).propertyValues(query)
  }

  async actors(filter: EventFilter): Promise<EventActors> {
    return (await this.#get()).actors(filter)
  }

  async count(filter: EventFilter): Promise<number> {
    return (await this.#get()).count(filter)
  }

  async breakdown(query: BreakdownQuery): Promise<BreakdownRow[]> {
    return (await this.#get()).breakdown(query)
  }

  async dailyBreakdown(query: DailyBreakdownQuery): Promise<DailyBreakdownRow[]> {
    return (await this.#get()).dailyBreakdown(query)
  }

  async funnel(query: FunnelQuery): Promise<FunnelRow[]> {
    return (await this.#get()).funnel(query)
  }

  async distinctIds(filter: EventFilter): Promise<string[]> {
    return (await this.#get()).distinctIds(filter)
  }

  async distinctIdTallies(query: TallyQuery): Promise<TallyRow[]> {
    return (await this.#get()).distinctIdTallies(query)
  }

  async distinctIdTimes(query: TimesQuery): Promise<TimesRow[]> {
    return (await this.#get()).distinctIdTimes(query)
  }

  async experimentVariants(query: ExperimentVariantsQuery): Promise<ExperimentSums> {
    return (await this.#get()).experimentVariants(query)
  }

  async experimentExposures(query: ExperimentExposuresQuery): Promise<ExposureCount[]> {
    return (await this.#get()).experimentExposures(query)
  }

  async hogqlQuery(teamId: number, plan: HogqlQueryPlan): Promise<AnswerValue[][]> {
    return (await this.#get()).hogqlQuery(teamId, plan)
  }

  async close(): Promise<void> {
    if (this.#store) await (await this.#store.catch(() => null))?.close()
  }
}

/** The service's reads: ClickHouse's over HTTP, the embedded store's on a thread of their own (query-thread.ts). */
export function openEventStore(options: { sqlitePath: string; clickhouse: ClickHouseOptions | null; onThreadStart?: (threadId: number) => void; readThreadNice?: number }): EventStore {
  if (options.clickhouse) return new LazyClickHouseStore(options.clickhouse)
  return new ThreadedEventStore({ file: options.sqlitePath, onThreadStart: options.onThreadStart, nice: options.readThreadNice })
}
