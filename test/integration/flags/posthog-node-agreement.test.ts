/**
 * posthog-node's own local evaluation (the real npm package, polling our definitions endpoint) and our
 * /decide must give every user the same value for every flag the SDK can decide locally.
 */
import t from 'tap'
import { PostHog } from 'posthog-node'
import { serverFor } from '../../helpers/server.js'

/** A small seeded generator so the generated flags and users are the same on every run. */
function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 1 | s) + 0x6d2b79f5) >>> 0
    let x = Math.imul(s ^ (s >>> 7), 61 | s) ^ s
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const PLANS = ['free', 'pro', 'enterprise']
const COUNTRIES = ['GB', 'US', 'DE', 'FR']

function generateFlags(rand: () => number, count: number): Array<Record<string, unknown>> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]
  const property = () =>
    pick([
      () => ({ key: 'plan', value: pick(PLANS), operator: 'exact', type: 'person' }),
      () => ({ key: 'plan', value: [pick(PLANS), pick(PLANS)], operator: 'exact', type: 'person' }),
      () => ({ key: 'country', value: pick(COUNTRIES), operator: 'is_not', type: 'person' }),
      () => ({ key: 'email', value: pick(['@acme.com', '@example.org']), operator: 'icontains', type: 'person' }),
      () => ({ key: 'email', value: '^u[0-4]', operator: 'regex', type: 'person' }),
      () => ({ key: 'age', value: String(Math.floor(rand() * 60) + 10), operator: pick(['gt', 'lt', 'gte', 'lte']), type: 'person' }),
      () => ({ key: 'signed_up', value: pick(['2023-01-01', '2024-06-01']), operator: pick(['is_date_before', 'is_date_after']), type: 'person' }),
    ])()
  return Array.from({ length: count }, (_, i) => {
    const groups = Array.from({ length: 1 + Math.floor(rand() * 2) }, () => ({
      properties: rand() < 0.5 ? [] : Array.from({ length: 1 + Math.floor(rand() * 2) }, property),
      rollout_percentage: Math.floor(rand() * 101),
    }))
    const multivariate = i % 5 === 0 ? { variants: [{ key: 'control', rollout_percentage: 34 }, { key: 'a', rollout_percentage: 33 }, { key: 'b', rollout_percentage: 33 }] } : null
    return { key: `gen-${i}`, filters: { groups, multivariate } }
  })
}

function generateUsers(rand: () => number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    distinctId: `user-${i}-${Math.floor(rand() * 1e6)}`,
    properties: {
      plan: PLANS[Math.floor(rand() * PLANS.length)],
      country: COUNTRIES[Math.floor(rand() * COUNTRIES.length)],
      email: `u${i}@${rand() < 0.5 ? 'acme.com' : 'example.org'}`,
      age: Math.floor(rand() * 70) + 10,
      signed_up: rand() < 0.5 ? '2022-05-05' : '2025-02-02',
    },
  }))
}

t.test('posthog-node local evaluation agrees with /decide', async (t) => {
  const server = await serverFor(t)
  const rand = random(20261122)
  for (const flag of generateFlags(rand, 40)) {
    const res = await server.api('POST', `/api/projects/${server.boot.project_id}/feature_flags/`, flag)
    if (res.status !== 201) throw new Error(`flag creation failed: ${res.text}`)
  }
  const users = generateUsers(rand, 60)
  const client = new PostHog(server.boot.project_api_key, {
    host: server.baseUrl,
    personalApiKey: server.boot.personal_api_key!,
    featureFlagsPollingInterval: 600_000,
    fetchRetryCount: 0,
    flushAt: 1,
  })
  // Registered after the server's teardown, so it runs first: the client stops while the server still answers.
  t.teardown(() => client.shutdown())
  t.ok(await client.waitForLocalEvaluationReady(10_000), 'the SDK loaded our definitions')

  let compared = 0
  let undecidable = 0
  const differences: string[] = []
  for (const user of users) {
    const res = await server.request('POST', '/decide/?v=3', {
      body: { token: server.boot.project_api_key, distinct_id: user.distinctId, person_properties: user.properties },
    })
    for (let i = 0; i < 40; i++) {
      const key = `gen-${i}`
      const local = await client.getFeatureFlag(key, user.distinctId, { personProperties: user.properties, onlyEvaluateLocally: true })
      if (local === undefined) {
        undecidable++
        continue
      }
      compared++
      if (local !== res.body.featureFlags[key]) differences.push(`${key} for ${user.distinctId}: SDK ${local}, server ${res.body.featureFlags[key]}`)
    }
  }
  t.ok(compared > 2000, `${compared} user×flag pairs compared (${undecidable} left to the server by the SDK)`)
  t.same(differences, [], 'no disagreement')
})
