/** The running server the persons API suites share: started before their tests, and their ways to reach it. */
import type { Test } from 'tap'
import { startServer, type TestServer } from '../../helpers/server.js'
import { readUntil } from '../../helpers/wait.js'
import type { StoreSetup } from '../ingestion/suite.js'

export function personsServer(t: Test, setup: StoreSetup) {
  let server: TestServer
  t.before(async () => {
    server = await startServer({ env: setup.env() })
  })
  t.teardown(async () => {
    await server?.stop()
    server?.cleanup()
  })
  const base = () => `/api/projects/${server.boot.project_id}`
  const personOf = async (distinctId: string) => (await server.api('GET', `${base()}/persons/?distinct_id=${encodeURIComponent(distinctId)}`)).body.results[0] ?? null
  return {
    server: () => server,
    base,
    /** Sends the events in one /batch/ request; throws unless accepted. */
    capture: async (batch: unknown[]) => {
      const res = await server.request('POST', '/batch/', { body: { api_key: server.boot.project_api_key, batch } })
      if (res.status !== 200) throw new Error(`batch answered ${res.status}`)
    },
    personOf,
    waitPerson: (distinctId: string, ok: (p: any) => boolean = (p) => p !== null) => readUntil(`the person of ${distinctId}`, () => personOf(distinctId), ok),
  }
}
