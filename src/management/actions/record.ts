/**
 * An action as stored (one row of `actions`) and its steps, in PostHog's `ActionStepJSON` shape: each step
 * keeps every key, null when unset, and `url_matching` is `contains` unless a write set it (null included).
 */
import { isPlainObject, type JsonObject } from '../../common/json.js'

/** PostHog's `ACTION_STEP_MATCHING_OPTIONS`. */
export const STEP_MATCHING = ['contains', 'regex', 'exact'] as const
export type StepMatching = (typeof STEP_MATCHING)[number]

export interface ActionStep {
  event: string | null
  properties: JsonObject[] | null
  selector: string | null
  tag_name: string | null
  text: string | null
  text_matching: StepMatching | null
  href: string | null
  href_matching: StepMatching | null
  url: string | null
  url_matching: StepMatching | null
}

export interface ActionRecord {
  id: number
  team_id: number
  name: string | null
  description: string
  tags: string[]
  post_to_slack: boolean
  slack_message_format: string
  steps: ActionStep[]
  deleted: boolean
  pinned_at: string | null
  created_by_id: number | null
  created_at: string
  updated_at: string
  /** PostHog's deprecated field, set once at creation; lists sort by it, newest first. */
  last_calculated_at: string
}

export interface ActionRow extends Omit<ActionRecord, 'tags' | 'steps' | 'post_to_slack' | 'deleted'> {
  tags: string
  steps: string
  post_to_slack: number
  deleted: number
}

const STEP_DEFAULTS: ActionStep = {
  event: null,
  properties: null,
  selector: null,
  tag_name: null,
  text: null,
  text_matching: null,
  href: null,
  href_matching: null,
  url: null,
  url_matching: 'contains',
}

/** A step from the fields a write sent: the rest take the dataclass defaults. */
export const toStep = (fields: Partial<ActionStep>): ActionStep => ({ ...STEP_DEFAULTS, ...fields })

function parseSteps(text: string): ActionStep[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return []
  }
  return Array.isArray(value) ? value.filter(isPlainObject).map((s) => toStep(s as Partial<ActionStep>)) : []
}

export const toRecord = (row: ActionRow): ActionRecord => ({
  ...row,
  tags: JSON.parse(row.tags) as string[],
  steps: parseSteps(row.steps),
  post_to_slack: row.post_to_slack === 1,
  deleted: row.deleted === 1,
})

export const toRow = (record: ActionRecord): ActionRow => ({
  ...record,
  tags: JSON.stringify(record.tags),
  steps: JSON.stringify(record.steps),
  post_to_slack: record.post_to_slack ? 1 : 0,
  deleted: record.deleted ? 1 : 0,
})

/** The events an action's steps name (PostHog's `get_step_events`, the unnamed left out). */
export const stepEvents = (action: Pick<ActionRecord, 'steps'>): string[] => [...new Set(action.steps.flatMap((s) => (s.event ? [s.event] : [])))]
