// Setup shared by the /decide scenarios (and the mixed profile): stored persons with 20 properties, one
// group, and exactly N active flags of the realistic mix, all through the public and management APIs.
import { setTimeout as sleep } from 'node:timers/promises'
import { PERSONS, flagBody, personId, personsSetupBody } from './_payloads.mjs'

/** Stores the persons and the group once per server and waits until the persons API shows them. */
export async function ensurePersons(ctx) {
  if (ctx.state.persons) return
  const res = await ctx.request('POST', '/batch/', { body: personsSetupBody(ctx.token), headers: { 'content-type': 'application/json' } })
  if (res.status !== 200) throw new Error(`storing the persons failed: ${res.status} ${res.text.slice(0, 200)}`)
  const last = personId(PERSONS - 1)
  const deadline = Date.now() + 30_000
  for (;;) {
    const persons = await ctx.api('GET', `/api/projects/${ctx.projectId}/persons/?distinct_id=${last}`)
    const groups = await ctx.api('GET', `/api/projects/${ctx.projectId}/groups/?group_type_index=0`)
    if (Object.keys(persons.json?.results?.[0]?.properties ?? {}).length >= 20 && groups.json?.results?.length > 0) break
    if (Date.now() > deadline) throw new Error(`persons not visible after 30 s: ${persons.status} ${persons.text.slice(0, 200)}`)
    await sleep(100)
  }
  ctx.state.persons = true
}

/** Makes exactly `n` flags of the mix active (creating missing ones, deactivating the rest). */
export async function ensureFlags(ctx, n) {
  const flags = (ctx.state.flags ??= [])
  const base = `/api/projects/${ctx.projectId}/feature_flags/`
  while (flags.length < n) {
    const res = await ctx.api('POST', base, flagBody(flags.length))
    if (res.status !== 201) throw new Error(`creating flag ${flags.length} failed: ${res.status} ${res.text.slice(0, 300)}`)
    flags.push({ id: res.json.id, active: true })
  }
  for (let i = 0; i < flags.length; i++) {
    const active = i < n
    if (flags[i].active === active) continue
    const res = await ctx.api('PATCH', `${base}${flags[i].id}/`, { active })
    if (res.status !== 200) throw new Error(`PATCH flag ${flags[i].id} failed: ${res.status} ${res.text.slice(0, 300)}`)
    flags[i].active = active
  }
}

/** Check of a /decide?v=3 answer: non-200 means the endpoint is not there (yet). */
export function checkDecide(res, flags) {
  if (res.status !== 200) return { unavailable: `/decide?v=3 answered ${res.status} ${res.text.slice(0, 160)}` }
  const answered = res.json?.featureFlags
  if (!answered || typeof answered !== 'object') return `no featureFlags object in ${res.text.slice(0, 200)}`
  if (res.json.errorsWhileComputingFlags) return `errorsWhileComputingFlags is true: ${res.text.slice(0, 200)}`
  const count = Object.keys(answered).length
  if (count !== flags) return `expected ${flags} flags in featureFlags, got ${count}`
  return null
}
