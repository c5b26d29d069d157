/**
 * Person property filters in the new engine (a metric source's `properties`, an exposure or activation
 * config's): each reads as the distinct ids of the persons it matches now in persons.db, as PostHog evaluates
 * them in its `person_id_override_properties_joined` mode (the current person's properties, joined by
 * distinct id) and as skylark's events list does. Events carry no person properties here, so PostHog's
 * default — the properties a person had when each event was sent — is not what is computed: a person whose
 * property changed during the experiment counts with its current value for every event.
 *
 * The filters are found in the query's JSON and resolved before the metric is planned, so that planning stays
 * synchronous and pure (metric.ts and exposure.ts take the lookup). A filter matching more than
 * MAX_PERSON_FILTER_CHARS of distinct ids reads as the events of none of the distinct ids of the persons it
 * fails (so a distinct id without a person passes it), and one both matching and failing that many is a 400
 * asking to narrow it: ClickHouse reads the ids written into the query (18.16 takes no query parameters).
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject } from '../../common/json.js'
import { readPropertyFilter, type EventPropertyFilter, type PropertyNode } from '../../storage/events/index.js'
import type { PersonFilterNode } from '../metrics.js'

/**
 * persons.db's scan of the distinct ids of the persons matching filters, or with `failing` of those not matching
 * (null: more than `maxChars` of them).
 */
export interface PersonMatcher {
  distinctIdsMatching(teamId: number, properties: readonly PropertyNode[], maxChars: number, failing?: boolean): Promise<string[] | null>
}

/** The distinct-id text one person filter may resolve to (≈100,000 ids of 40 characters). */
export const MAX_PERSON_FILTER_CHARS = 4 * 1024 * 1024

const keyOf = (f: EventPropertyFilter) => JSON.stringify([f.key, f.operator, f.value ?? null])

/** Every readable person filter in `node`, at any depth; one that can't be read is the planner's to refuse. */
function personFilters(node: unknown, into: Map<string, EventPropertyFilter>): Map<string, EventPropertyFilter> {
  if (Array.isArray(node)) for (const item of node) personFilters(item, into)
  else if (isPlainObject(node)) {
    if (node.type === 'person' && typeof node.key === 'string') {
      try {
        const filter = readPropertyFilter(node, 'properties', {
          kind: () => (f) => f,
          refuse: () => {
            throw new Error('unreadable')
          },
        }) as EventPropertyFilter
        into.set(keyOf(filter), filter)
      } catch {
        // The planner reads it again and refuses it with its message.
      }
    }
    for (const value of Object.values(node)) personFilters(value, into)
  }
  return into
}

/**
 * The lookup planning reads person filters with: each filter found in `nodes` resolved to the distinct ids
 * it matches. Null without persons.db (person filters are then refused).
 */
export async function personFilterLookup(
  matcher: PersonMatcher | null,
  teamId: number,
  nodes: readonly unknown[],
  maxChars = MAX_PERSON_FILTER_CHARS,
): Promise<PersonFilterNode | null> {
  if (matcher === null) return null
  const resolved = new Map<string, PropertyNode>()
  for (const [key, filter] of personFilters(nodes, new Map())) {
    const ids = await matcher.distinctIdsMatching(teamId, [filter], maxChars)
    // A filter most persons meet (a test account filter's "email does not contain"): the persons it fails.
    const failing = ids === null ? await matcher.distinctIdsMatching(teamId, [filter], maxChars, true) : null
    if (ids === null && failing === null) throw new ValidationError('invalid', `The person filter on ${filter.key} splits too many persons to compute this query; narrow it.`)
    resolved.set(key, ids !== null ? { distinctIds: ids } : { distinctIds: failing!, excluded: true })
  }
  return (filter) => resolved.get(keyOf(filter)) ?? { distinctIds: [] }
}
