/** The logs store's rows, queries and answers, alike for SQLite (logs.db) and ClickHouse (its `logs` table). */
import type { OtlpIngest } from '../storage/otlp-ingest.js'

export interface LogRow {
  uuid: string
  team_id: number
  /** Microseconds since the epoch. */
  timestamp: number
  /** When skylark received it, microseconds since the epoch. */
  observed_timestamp: number
  /** 32 upper-case hex digits (zeros when the record had none), as PostHog's query answers it. */
  trace_id: string
  /** 16 upper-case hex digits. */
  span_id: string
  trace_flags: number
  body: string
  severity_text: string
  severity_number: number
  service_name: string
  resource_attributes: Record<string, string>
  resource_fingerprint: string
  instrumentation_scope: string
  event_name: string
  attributes: Record<string, string>
}

export type AttributeType = 'log' | 'resource'

/** A filter of `filterGroup`: on a log attribute, a resource attribute, or a column of the log. */
export interface LogFilter {
  on: 'attribute' | 'resource' | 'column'
  key: string
  operator: 'exact' | 'is_not' | 'icontains' | 'not_icontains' | 'regex' | 'not_regex' | 'is_set' | 'is_not_set'
  /** The values compared with (one for the contains and regex operators, none for the set ones). */
  values: string[]
}

/** What every read narrows by: the project, the time range, and the filters a read has. */
export interface LogSelection {
  teamId: number
  /** Microseconds, inclusive. */
  from: number
  to: number
  severityLevels?: string[]
  serviceNames: string[]
  searchTerm?: string | null
  filters?: LogFilter[]
}

export interface LogsQuery extends LogSelection {
  order: 'latest' | 'earliest'
  /** Rows to return (the caller asks one more to tell whether another page follows). */
  limit: number
  /** The last row of the page before: the page starts after it. */
  after: { timestamp: number; uuid: string } | null
  /** Live tail: only logs received at or after this (microseconds; null: any). */
  receivedFrom: number | null
}

export interface LogAttributesQuery extends LogSelection {
  type: AttributeType
  search: string
  limit: number
  offset: number
}

export interface LogValuesQuery {
  teamId: number
  from: number
  type: AttributeType
  key: string
  search: string
}

export interface SparklineQuery extends LogSelection {
  /** Bucket width, microseconds. */
  interval: number
}

export interface SparklineBucket {
  /** The bucket's start, microseconds. */
  time: number
  level: string
  count: number
}

export interface LogStore {
  /** Stores the rows durably before resolving. */
  insert(rows: LogRow[]): Promise<void>
  query(query: LogsQuery): Promise<LogRow[]>
  /** When the project's newest stored log was received (microseconds), the live tail's next start; null: none. */
  checkpoint(teamId: number): Promise<number | null>
  /** Attribute keys seen in the range, most used first, and how many there are. */
  attributes(query: LogAttributesQuery): Promise<{ keys: string[]; count: number }>
  /** An attribute's values, most used first (at most 50). */
  values(query: LogValuesQuery): Promise<string[]>
  sparkline(query: SparklineQuery): Promise<SparklineBucket[]>
  close(): Promise<void>
}

/** What the main thread holds (src/logs/thread.ts): the reads, and ingest; rows are written on the store's thread only. */
export type LogService = Omit<LogStore, 'insert'> & OtlpIngest
