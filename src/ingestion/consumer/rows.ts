/** Captured events plus their person outcomes → the rows the event store receives. */
import { storedProperties, type PersonOutcome } from '../../persons/index.js'
import type { RowToPack } from '../../storage/events/packed-rows.js'
import type { CapturedEvent } from '../types.js'
import { storedElements } from './elements.js'

/** One row per event the person stage kept (events it dropped, PostHog-style, have a `dropReason`). */
export function toEventRows(events: readonly CapturedEvent[], outcomes: readonly PersonOutcome[], createdAt: number): RowToPack[] {
  const rows: RowToPack[] = []
  for (let i = 0; i < events.length; i++) {
    const event = events[i]
    const outcome = outcomes[i]
    if (outcome.dropReason) continue
    const elements = storedElements(outcome.properties)
    rows.push({
      uuid: event.uuid,
      team_id: event.team_id,
      event: event.event,
      distinct_id: event.distinct_id,
      person_id: outcome.personId,
      properties: elements.properties
        ? storedProperties(elements.properties, outcome.sets, outcome.geo)
        : storedProperties(outcome.properties, outcome.sets, outcome.geo, outcome.propertiesText),
      timestamp: event.timestamp,
      created_at: createdAt,
      groups: outcome.groups,
      elements_chain: elements.chain,
    })
  }
  return rows
}
