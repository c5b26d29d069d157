/**
 * A dynamic cohort evaluated with its behavioural conditions read from the events (behavioural.ts says what each
 * kind reads): every distinct read is made once per evaluation, and what was read becomes `personsOf` nodes that
 * persons.db checks per person over all its ids (tallies, or a sequence's times).
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { sequenceHolds, type PersonsOfCondition, type PropertyNode } from '../../storage/events/index.js'
import { behaviouralReading, type BehaviouralReading, type PerformedReader } from './behavioural.js'
import { cohortCondition, cohortId, type CohortById } from './condition.js'

/** The distinct-id text a cohort's behavioural conditions may read together (≈400,000 ids of 40 characters). */
export const MAX_PERFORMED_CHARS = 16 * 1024 * 1024

/** The characters a number of a sequence's times takes in that budget (13 digits and a comma). */
const TIME_CHARS = 14

const invalid = (detail: string) => new ValidationError('invalid', detail)

/**
 * The cohort's condition over persons (cohortCondition) with its behavioural conditions read from the events by
 * `read` first; without one (no event store), such a cohort is refused as before.
 */
export async function evaluatedCohortCondition(id: number, cohortById: CohortById, teamId: number, read: PerformedReader | null, now: number): Promise<PropertyNode> {
  if (read === null) return cohortCondition(id, cohortById, teamId)
  const readingOf = (leaf: JsonObject) => behaviouralReading(leaf, teamId, now, read.actionById)
  // A sequence's window decides which ids make it alone, so it is part of what is read.
  const keyOf = (reading: BehaviouralReading) => JSON.stringify('times' in reading ? [reading.times, reading.windowMs] : reading.query)
  const NONE: PropertyNode = { personsOf: [], teamId }
  // Walked twice: once to find what to read (and refuse what can't be), once with what was read.
  const readings = new Map<string, BehaviouralReading>()
  cohortCondition(id, cohortById, teamId, (leaf) => {
    const reading = readingOf(leaf)
    readings.set(keyOf(reading), reading)
    return NONE
  })
  const found = new Map<string, Found>()
  let chars = 0
  for (const [key, reading] of readings) {
    const sent = await readFound(read, reading)
    chars += sent.chars
    if (chars > MAX_PERFORMED_CHARS) throw invalid(`Cohort ${id}'s behavioural conditions match too many persons to evaluate at once.`)
    found.set(key, sent)
  }
  return cohortCondition(id, cohortById, teamId, (leaf) => {
    const reading = readingOf(leaf)
    const sent = found.get(keyOf(reading))
    if (sent === undefined) return NONE
    // A sequence's key holds its window, so what was read for it is its whole node; a tally's key finds tallies.
    if ('sequence' in sent) return { personsOf: sent.ids, teamId, sequence: sent.sequence }
    const { checks, atLeast } = reading as TallyReading
    return checks === null ? { personsOf: sent.ids, teamId } : { personsOf: sent.ids, teamId, tallies: { rows: sent.tallies, checks, atLeast } }
  })
}

/** What a reading found: the distinct ids, each one's tallies or the sequence's rows, and their size. */
type Found = { ids: string[]; chars: number } & ({ tallies: number[][] } | { sequence: NonNullable<PersonsOfCondition['sequence']> })

/** One reading's rows from the store, as persons.db's nodes take them. */
async function readFound(read: PerformedReader, reading: BehaviouralReading): Promise<Found> {
  if (!('times' in reading)) {
    const rows = await read.tallies(reading.query)
    return { ...idsOf(rows), tallies: rows.map(([, ...tallies]) => tallies) }
  }
  const rows = await read.times(reading.times)
  const found = idsOf(rows)
  // An id whose own events make the sequence is `true`, so its times need not cross to persons.db.
  const sequence = rows.map(([, firsts, thens]) => {
    if (sequenceHolds(firsts!, thens ?? null, reading.windowMs)) return true as const
    found.chars += (firsts!.length + (thens?.length ?? 0)) * TIME_CHARS
    return thens === undefined ? [firsts!] : [firsts!, thens]
  })
  return { ...found, sequence: { rows: sequence, windowMs: reading.windowMs } }
}

/** The distinct ids of a read's rows and their characters. */
function idsOf(rows: ReadonlyArray<readonly [string, ...unknown[]]>): { ids: string[]; chars: number } {
  const ids = rows.map(([distinctId]) => distinctId)
  return { ids, chars: ids.reduce((n, id) => n + id.length, 0) }
}

type TallyReading = Extract<BehaviouralReading, { query: unknown }>

/**
 * Each live dynamic cohort a property filter tree (as sent: AND/OR groups and their leaves) names, evaluated with
 * its behavioural conditions read, by id: what cohortMembership reads them as, where a filter is parsed
 * synchronously. A tree that can't be read is left to its parser to refuse.
 */
export async function evaluatedCohortsNamed(tree: unknown, cohortById: CohortById, teamId: number, read: PerformedReader | null, now: number): Promise<Map<number, PropertyNode>> {
  const ids = new Set<number>()
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk)
    else if (isPlainObject(node)) {
      if (Array.isArray(node.values)) node.values.forEach(walk)
      else if (node.type === 'cohort' && cohortId(node) !== null) ids.add(cohortId(node)!)
    }
  }
  walk(tree)
  const evaluated = new Map<number, PropertyNode>()
  for (const id of ids) {
    const cohort = cohortById(teamId, id)
    if (cohort !== null && !cohort.deleted && !cohort.is_static) evaluated.set(id, await evaluatedCohortCondition(id, cohortById, teamId, read, now))
  }
  return evaluated
}
