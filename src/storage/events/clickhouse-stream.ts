/**
 * One ClickHouse INSERT kept open across several batches (`CLICKHOUSE_INSERT_SPAN_MS`). ClickHouse writes a
 * part per INSERT, and under /batch/ load merging the ≈1,700-row parts of one INSERT per batch again and
 * again was most of its CPU (docs/performance.md); one INSERT for a few seconds of batches makes one large part.
 * Appended rows are not stored until commit() resolves. If it throws, any of them may be missing, and the
 * caller writes them all again (the table deduplicates by uuid). `execInsert` is the request itself, also
 * for the one-batch INSERTs of clickhouse.ts.
 */
import { once } from 'node:events'
import { PassThrough, type Readable } from 'node:stream'
import type { ClickHouseClient } from '@clickhouse/client'

/** Runs one INSERT whose body is `values`; resolves once ClickHouse has answered, i.e. stored every row. */
export async function execInsert(client: ClickHouseClient, query: string, values: Readable): Promise<void> {
  const result = await client.exec({ query, values })
  result.stream.resume()
  await once(result.stream, 'end')
}

export class StreamedInsert {
  readonly #body = new PassThrough()
  readonly #done: Promise<void>
  #failure: Error | null = null
  /** Rows appended so far: commit() checks them against what the caller appended. */
  rows = 0

  constructor(client: ClickHouseClient, query: string) {
    this.#done = execInsert(client, query, this.#body)
    this.#done.catch((error: Error) => {
      this.#failure = error
      this.#body.destroy()
    })
  }

  /**
   * Resolves once the chunks are handed to the request (waiting while ClickHouse reads slower than we write).
   * Chunks that cannot be made (rows the encoding refuses) abort the INSERT.
   */
  async append(chunks: Iterable<Buffer>, rows: number): Promise<void> {
    try {
      for (const chunk of chunks) {
        if (this.#failure) throw this.#failure
        if (!this.#body.write(chunk)) await Promise.race([once(this.#body, 'drain'), this.#done])
      }
    } catch (error) {
      this.abort()
      throw error
    }
    if (this.#failure) throw this.#failure
    this.rows += rows
  }

  /**
   * Ends the INSERT unfinished: ClickHouse 18.16 stores the rows it read, so the caller writes them all again
   * (the table keeps one of each uuid). Without an error: the body may not be piped to the request yet, and an
   * 'error' with no listener would end the thread.
   */
  abort(): void {
    this.#body.destroy()
  }

  /** Ends the INSERT; resolves once ClickHouse has stored every appended row. */
  async commit(): Promise<void> {
    this.#body.end()
    await this.#done
  }
}
