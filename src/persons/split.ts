/**
 * What a person split (PostHog's Person.split_person) moves, decided without touching persons.db. Pure.
 */
import { personUuidFor } from './store.js'

/**
 * The distinct id a person's uuid was derived from (PostHog's and skylark's uuidv5 of `team:distinct_id` of the
 * id that created it), if the person still has it: its oldest, which PostHog keeps when no main distinct id is
 * given. persons.db keeps no order of addition, so this is how skylark knows it.
 */
export function originDistinctId(teamId: number, uuid: string, distinctIds: readonly string[]): string | null {
  return distinctIds.find((id) => personUuidFor(teamId, id) === uuid) ?? null
}

/**
 * The distinct ids to move off a person that owns `owned`: those of `only` it owns (each once), else every one
 * but `main`. A `main` it no longer owns (moved by a merge after the split was asked for) splits nothing: split
 * anyway, the person would keep none.
 */
export function distinctIdsToSplit(owned: readonly string[], main: string | null, only: readonly string[] | null): string[] {
  if (only !== null) {
    const mine = new Set(owned)
    return [...new Set(only)].filter((id) => mine.has(id))
  }
  if (main === null || !owned.includes(main)) return []
  return owned.filter((id) => id !== main)
}
