/**
 * ClickHouse as the event sink: pre-serialised RowBinary in one INSERT per batch, or per span of batches while
 * the consumer is behind (clickhouse-stream.ts; the client's own object serialisation is the bottleneck at
 * scale, see clickhouse-rowbinary.ts), and events deleted by mutations.
 */
import { Readable } from 'node:stream'
import type { ClickHouseClient } from '@clickhouse/client'
import { packRows } from './packed-rows.js'
import { execInsert, StreamedInsert } from './clickhouse-stream.js'
import { insertColumns, rowBinary } from './clickhouse-rowbinary.js'
import { alterTarget, createClickHouseClient, identifier, quote, type ClickHouseOptions, type ServerFeatures } from './clickhouse-schema.js'
import { SinkError, type EventRow, type EventSink } from './types.js'

/** ClickHouse error codes that mean "this data can't be inserted": retrying the same rows never helps. */
const DATA_ERROR_CODES = new Set([6, 25, 26, 27, 38, 41, 53, 69, 70, 72, 117, 130, 131, 376, 377, 1000])
function errorCode(error: unknown): number | null {
  const match = /Code: (\d+)/.exec((error as Error)?.message ?? '')
  return match ? Number(match[1]) : null
}

function insertFailed(error: unknown): SinkError {
  // Rows the insert's encoding refused (rowBinary) fail before ClickHouse sees them.
  if (error instanceof SinkError) return error
  const code = errorCode(error)
  return new SinkError(`ClickHouse insert failed: ${(error as Error).message.split('\n')[0]}`, code !== null && DATA_ERROR_CODES.has(code))
}

export class ClickHouseEventSink implements EventSink {
  readonly kind = 'clickhouse'
  readonly #client: ClickHouseClient
  readonly #features: ServerFeatures
  readonly #insert: string
  /** Where mutations go (alterTarget). */
  readonly #alter: string
  #open: StreamedInsert | null = null

  constructor(options: ClickHouseOptions, features: ServerFeatures) {
    this.#client = createClickHouseClient(options)
    this.#features = features
    this.#alter = alterTarget(options)
    this.#insert = `INSERT INTO ${identifier(options.database)}.events (${insertColumns(features)}) FORMAT RowBinary`
  }

  async write(rows: readonly EventRow[]): Promise<void> {
    if (rows.length > 0) await this.writePacked(packRows(rows))
  }

  /** Rows from packRows() (the insert thread's input); `packed` must stay unchanged until this resolves. */
  async writePacked(packed: Buffer): Promise<void> {
    if (packed.length > 0) await this.#insertChunks(rowBinary(packed, this.#features))
  }

  /** Adds `rows` packed rows, in parts, to the open INSERT (opening one); nothing is stored before commit(). */
  async appendPacked(parts: readonly Buffer[], rows: number): Promise<void> {
    const insert = (this.#open ??= new StreamedInsert(this.#client, this.#insert))
    try {
      await insert.append(rowBinaryOfParts(parts, this.#features), rows)
    } catch (error) {
      this.#open = null
      throw insertFailed(error)
    }
  }

  /**
   * Ends the open INSERT. `rows` is what the caller appended since its last commit: an insert thread that
   * restarted in between lost its open INSERT, and a commit must not confirm rows it never had.
   */
  async commit(rows: number): Promise<void> {
    const insert = this.#open
    this.#open = null
    if (!insert || insert.rows !== rows) {
      insert?.abort()
      throw new SinkError(`the open insert holds ${insert?.rows ?? 0} of the ${rows} rows appended to it`, false)
    }
    try {
      await insert.commit()
    } catch (error) {
      throw insertFailed(error)
    }
  }

  async #insertChunks(chunks: Iterable<Buffer>): Promise<void> {
    try {
      await execInsert(this.#client, this.#insert, Readable.from(chunks))
    } catch (error) {
      throw insertFailed(error)
    }
  }

  /**
   * A mutation per ≈128 KB of ids (18.16 refuses queries over 256 KiB). ClickHouse records a mutation before
   * the ALTER answers and applies it in the background to the parts that existed then, so rows inserted after
   * it are kept; reads see the rows go once it has rewritten their parts.
   */
  async deleteEvents(teamId: number, distinctIds: readonly string[]): Promise<void> {
    for (const chunk of chunksOfText(distinctIds.map(quote), 128 * 1024)) {
      try {
        await this.#client.command({ query: `ALTER TABLE ${this.#alter} DELETE WHERE team_id = ${teamId} AND distinct_id IN (${chunk.join(', ')})` })
      } catch (error) {
        throw new SinkError(`ClickHouse event deletion failed: ${(error as Error).message.split('\n')[0]}`, false)
      }
    }
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.#client.ping()).success
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    await this.#client.close()
  }
}

/** Literals in groups of at most `maxChars` characters of text (at least one each). */
function chunksOfText(literals: readonly string[], maxChars: number): string[][] {
  const chunks: string[][] = []
  let chars = Infinity
  for (const literal of literals) {
    if (chars + literal.length > maxChars) {
      chunks.push([])
      chars = 0
    }
    chunks.at(-1)!.push(literal)
    chars += literal.length + 2
  }
  return chunks
}

/** rowBinary of each part in turn, made as the insert's stream pulls. */
function* rowBinaryOfParts(parts: readonly Buffer[], features: ServerFeatures): Generator<Buffer> {
  for (const part of parts) yield* rowBinary(part, features)
}
