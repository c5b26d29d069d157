import type { ChildProcess } from 'node:child_process'

export interface PreparedClickHouse {
  readonly dir: string
  readonly url: string
  /** The native protocol's port: a cluster's `remote_servers` name it. */
  readonly tcpPort: number
}

export function clickhouseBinary(): string | null
export function freePort(): Promise<number>
export function prepareClickHouse(prefix: string, maxMemoryBytes: number, settings?: Readonly<Record<string, string | number>>): Promise<PreparedClickHouse>
/** Another free port for the server, held until it is spawned. */
export function preparePort(prepared: PreparedClickHouse): Promise<number>
/** Lets go of the ports held for the server (spawnClickHouse does so itself). */
export function releasePorts(prepared: PreparedClickHouse): Promise<void>
export function spawnClickHouse(binary: string, prepared: PreparedClickHouse, timeoutMs: number): Promise<ChildProcess>
export function clickhouseQuery(url: string, sql: string, body?: string | Buffer): Promise<string>
