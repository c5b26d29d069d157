/**
 * A running server for the experiment tests: the real `skylark serve` on a temp data folder, direct
 * access to management.db (keys with chosen scopes, activity rows) and a read-only persons.db (cohort
 * members), plus event helpers: send through /batch/ in chunks and wait until the store has them.
 */
import { rmSync } from 'node:fs'
import { systemClock } from '../../../src/common/clock.js'
import { createManagement, MembershipLevel, type User } from '../../../src/management/index.js'
import { dataPaths, openDatabase, openManagementDb } from '../../../src/storage/index.js'
import { bootstrapDataDir, startServer, tempDir, type TestResponse, type TestServer } from '../../helpers/server.js'

export interface BatchEvent {
  event: string
  distinct_id: string
  properties?: Record<string, unknown>
  /** ms since the epoch. */
  at: number
}

export async function experimentServer(env: Record<string, string> = {}) {
  const dataDir = tempDir('skylark-exp-')
  bootstrapDataDir(dataDir)
  const db = openManagementDb(dataPaths(dataDir))
  const m = createManagement(db, systemClock)
  let server: TestServer
  try {
    server = await startServer({ dataDir, env })
  } catch (error) {
    db.close()
    rmSync(dataDir, { recursive: true, force: true })
    throw error
  }
  const persons = openDatabase(dataPaths(dataDir).persons, { readonly: true })
  const base = `/api/projects/${server.boot.project_id}`
  let counter = 0

  const eventsPage = (query: string) => server.api('GET', `${base}/events/?limit=1&${query}`)
  /** Counts stored events matching the events API query. */
  const count = async (query: string): Promise<number> => {
    const res = await eventsPage(query)
    if (res.status !== 200) throw new Error(`events API: ${res.status} ${res.text}`)
    return res.body.count as number
  }

  return {
    server,
    db,
    m,
    persons,
    base,
    experiments: `${base}/experiments/`,
    api: (method: string, path: string, body?: unknown, key?: string): Promise<TestResponse> => server.api(method, path, body, key),
    /** A new member of the project's organisation with a key of the given scopes. */
    keyWith(scopes: string[], level: number = MembershipLevel.member): { user: User; key: string } {
      const user = m.accounts.createUser({ email: `exp-user${++counter}-${Date.now()}@example.com`, first_name: `User${counter}` })
      m.accounts.addMember(server.boot.organization_id, user.id, level)
      return { user, key: m.keys.create({ userId: user.id, label: 'test', scopes }).key }
    },
    async send(events: readonly BatchEvent[], chunk = 2000): Promise<void> {
      for (let i = 0; i < events.length; i += chunk) {
        const batch = events.slice(i, i + chunk).map((e) => ({
          event: e.event,
          timestamp: new Date(e.at).toISOString(),
          properties: { distinct_id: e.distinct_id, ...e.properties },
        }))
        const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
        if (res.status !== 200) throw new Error(`/batch/ answered ${res.status}: ${res.text}`)
      }
    },
    count,
    /** Creates an experiment over the API and answers its id. */
    async createExperiment(body: Record<string, unknown>): Promise<number> {
      const res = await server.api('POST', `${base}/experiments/`, body)
      if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`)
      return res.body.id as number
    },
    /** Sends the events and waits until the store has every one of each name. */
    async sendAll(events: readonly BatchEvent[]): Promise<void> {
      await this.send(events)
      const byEvent = new Map<string, number>()
      for (const e of events) byEvent.set(e.event, (byEvent.get(e.event) ?? 0) + 1)
      for (const [event, n] of byEvent) await this.waitFor(`event=${encodeURIComponent(event)}`, n, 45_000)
    },
    /** Polls until at least `expected` events match, or throws after `timeoutMs`. */
    async waitFor(query: string, expected: number, timeoutMs = 30_000): Promise<void> {
      const deadline = Date.now() + timeoutMs
      let last = 0
      while (Date.now() < deadline) {
        // 503 until the consumer has connected to (and migrated) ClickHouse, which a busy machine delays.
        const res = await eventsPage(query)
        if (res.status !== 200 && res.status !== 503) throw new Error(`events API: ${res.status} ${res.text}`)
        last = res.status === 200 ? (res.body.count as number) : 0
        if (last >= expected) return
        await new Promise((r) => setTimeout(r, 150))
      }
      throw new Error(`expected ${expected} events for ${query}, have ${last}`)
    },
    async close() {
      await server.stop()
      persons.close()
      db.close()
      server.cleanup()
    },
  }
}

export type ExperimentServer = Awaited<ReturnType<typeof experimentServer>>

/** mulberry32: a small seeded generator, so generated users and outcomes are the same on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

/** Knuth's Poisson sampler (fine for the small means used here). */
export function poisson(random: () => number, mean: number): number {
  const limit = Math.exp(-mean)
  let k = 0
  let p = 1
  do {
    k++
    p *= random()
  } while (p > limit)
  return k - 1
}
