/**
 * Who a condition or a flag reaches among stored persons (or groups): the blast radius of a release
 * condition (PostHog ignores its rollout percentage there, leaving that arithmetic to the UI) and the
 * persons a flag is on for (static cohorts from a flag). Every stored person is evaluated with the same
 * engine as /decide, in batches with a yield between them so the event loop keeps serving requests.
 */
import type { JsonObject } from '../common/json.js'
import { compileFlags, evaluateFlag } from './index.js'
import type { ProjectFlags } from './project-cache.js'
import type { CompiledFlagSet } from './flag-set.js'
import type { EvaluationInput } from './types.js'

export interface AudienceSource {
  personsAfter(teamId: number, afterId: number, limit: number): Array<{ id: number; distinctId: string; properties: JsonObject }>
  groupsAfter(teamId: number, groupTypeIndex: number, afterKey: string, limit: number): Array<{ key: string; properties: JsonObject }>
  staticCohortIdsFor(personId: number): number[]
}

const BATCH = 1000
const AUDIENCE_KEY = '$audience'

const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve))

function input(distinctId: string, personProperties: JsonObject, now: number, statics?: ReadonlySet<number>): EvaluationInput {
  return { distinctId, personProperties, groups: {}, groupProperties: {}, staticCohortIds: statics, now }
}

/** Walks every person; `visit` gets each one with its evaluation input. */
async function eachPerson(
  source: AudienceSource,
  teamId: number,
  set: CompiledFlagSet,
  now: number,
  visit: (person: { id: number; distinctId: string }, input: EvaluationInput) => void,
): Promise<void> {
  let after = 0
  for (;;) {
    const batch = source.personsAfter(teamId, after, BATCH)
    if (batch.length === 0) return
    for (const p of batch) {
      const statics = set.staticCohortIds.size > 0 ? new Set(source.staticCohortIdsFor(p.id)) : undefined
      visit(p, input(p.distinctId, { ...p.properties, distinct_id: p.distinctId }, now, statics))
    }
    after = batch[batch.length - 1].id
    await yieldToLoop()
  }
}

export interface BlastRadius {
  users_affected: number
  total_users: number
}

export async function blastRadius(
  project: ProjectFlags,
  source: AudienceSource,
  teamId: number,
  condition: JsonObject,
  groupTypeIndex: number | null,
  now: number,
): Promise<BlastRadius> {
  const set = compileFlags(
    [
      {
        id: 0,
        key: AUDIENCE_KEY,
        filters: { groups: [{ properties: condition.properties ?? [], rollout_percentage: 100 }], aggregation_group_type_index: groupTypeIndex },
        active: true,
        deleted: false,
        ensure_experience_continuity: false,
        version: 1,
      },
    ],
    { groupTypeMapping: project.groupTypeMapping, cohorts: project.cohorts },
  )
  let affected = 0
  let total = 0
  if (groupTypeIndex === null) {
    await eachPerson(source, teamId, set, now, (_, inp) => {
      total++
      if (evaluateFlag(set, AUDIENCE_KEY, inp)?.enabled) affected++
    })
    return { users_affected: affected, total_users: total }
  }
  const typeName = project.groupTypeMapping[String(groupTypeIndex)]
  if (typeName === undefined) return { users_affected: 0, total_users: 0 }
  let after = ''
  for (;;) {
    const batch = source.groupsAfter(teamId, groupTypeIndex, after, BATCH)
    if (batch.length === 0) break
    for (const g of batch) {
      total++
      const inp: EvaluationInput = {
        distinctId: g.key,
        personProperties: {},
        groups: { [typeName]: g.key },
        groupProperties: { [typeName]: { ...g.properties, $group_key: g.key } },
        now,
      }
      if (evaluateFlag(set, AUDIENCE_KEY, inp)?.enabled) affected++
    }
    after = batch[batch.length - 1].key
    await yieldToLoop()
  }
  return { users_affected: affected, total_users: total }
}

/**
 * A distinct id of every person the flag is on for (optionally: with this variant), active or not. Each
 * person is evaluated with its smallest distinct id; PostHog uses the person's first one, which skylark
 * doesn't record.
 */
export async function personsWithFlag(
  project: ProjectFlags,
  source: AudienceSource,
  teamId: number,
  flagKey: string,
  variant: string | null,
  now: number,
): Promise<string[]> {
  const ids: string[] = []
  await eachPerson(source, teamId, project.set, now, (person, inp) => {
    const result = evaluateFlag(project.set, flagKey, inp)
    if (result?.enabled && (variant === null || result.variant === variant)) ids.push(person.distinctId)
  })
  return ids
}
