/**
 * OTLP logs: what /i/v1/logs takes (otlp.ts, otlp-proto.ts), the rows it makes (records.ts) and where they are
 * kept: on a thread of its own (thread.ts), in logs.db or in ClickHouse when CLICKHOUSE_URL is set (docs/architecture.md, "Logs").
 */
import type { ClickHouseConnection } from '../config/index.js'
import { ThreadedLogStore } from './thread.js'
import type { LogService } from './types.js'

export * from './types.js'
export { decodeLogsRequest } from './otlp.js'
export { logRows } from './records.js'

export function openLogStore(options: { sqlitePath: string; clickhouse: ClickHouseConnection | null; onThreadStart?: (threadId: number) => void }): LogService {
  return new ThreadedLogStore({ target: { file: options.sqlitePath, clickhouse: options.clickhouse }, onThreadStart: options.onThreadStart })
}
