/**
 * Group commit for stores written straight from requests (the OTLP routes, on their store's thread): while one
 * write is in flight, the rows of the requests that arrive meanwhile wait, and are written together once it is
 * done. Each batch first waits one turn of the event loop: a SQLite write on a store's thread is synchronous, so
 * the requests that arrived during it are still queued messages when it returns, and only that turn lets them
 * join the next batch. A lone request waits that turn and no more; under load, one FULL-sync commit or one
 * ClickHouse INSERT serves every request that arrived during the last, where one each would queue behind the disk
 * or swamp ClickHouse with parts. Each request's promise settles with its batch: resolved once its rows are
 * stored, rejected with the batch's error.
 */
export class GroupCommit<Row> {
  readonly #write: (rows: Row[]) => Promise<void>
  #pending: { rows: Row[]; settle: Array<(error: unknown) => void> } | null = null
  #writing = false

  constructor(write: (rows: Row[]) => Promise<void>) {
    this.#write = write
  }

  insert(rows: readonly Row[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending ??= { rows: [], settle: [] }
      for (const row of rows) this.#pending.rows.push(row)
      this.#pending.settle.push((error) => (error === undefined ? resolve() : reject(error)))
      if (!this.#writing) void this.#drain()
    })
  }

  async #drain(): Promise<void> {
    this.#writing = true
    while (this.#pending) {
      await new Promise((resolve) => setImmediate(resolve))
      const batch = this.#pending!
      this.#pending = null
      let failure: unknown
      try {
        await this.#write(batch.rows)
      } catch (error) {
        failure = error ?? new Error('the write failed')
      }
      for (const settle of batch.settle) settle(failure)
    }
    this.#writing = false
  }
}
