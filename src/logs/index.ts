/**
 * OTLP logs: what /i/v1/logs takes (otlp.ts, otlp-proto.ts), the rows it makes (records.ts) and where they are
 * kept, in logs.db on a thread of its own or in ClickHouse when CLICKHOUSE_URL is set (docs/architecture.md, "Logs").
 */
import type { ClickHouseConnection } from '../config/index.js'
import { ClickHouseLogStore } from './clickhouse.js'
import { ThreadedLogStore } from './thread.js'
import type { LogStore } from './types.js'

export * from './types.js'
export { decodeLogsRequest } from './otlp.js'
export { logRows } from './records.js'

export function openLogStore(options: { sqlitePath: string; clickhouse: ClickHouseConnection | null; onThreadStart?: (threadId: number) => void }): LogStore {
  return options.clickhouse ? new ClickHouseLogStore(options.clickhouse) : new ThreadedLogStore({ file: options.sqlitePath, onThreadStart: options.onThreadStart })
}
