/** The action object, in the field order of PostHog's ActionSerializer and ActionStepJSONSerializer. */
import type { UserSummary } from '../accounts.js'
import type { ActionRecord, ActionStep } from './record.js'
import { parseSelector, selectorRegex } from './selector.js'

export interface ActionStepObject extends ActionStep {
  /** The regex the selector is matched with over the elements chain (PostHog's `build_selector_regex`). */
  selector_regex: string | null
}

export interface ActionObject {
  id: number
  name: string | null
  description: string
  tags: string[]
  post_to_slack: boolean
  slack_message_format: string
  steps: ActionStepObject[]
  created_at: string
  created_by: UserSummary | null
  deleted: boolean
  /** Always false: PostHog computes actions at query time, as skylark does. */
  is_calculating: false
  last_calculated_at: string
  team_id: number
  is_action: true
  /** PostHog's error compiling the action to its bytecode; skylark compiles none. */
  bytecode_error: null
  pinned_at: string | null
  creation_context: null
  user_access_level: 'editor'
  /** Only in lists asked for it (`include_reference_count`): how many experiments and cohorts name the action. */
  reference_count?: number
}

/** PostHog's ActionReferenceSerializer. */
export interface ActionReferenceObject {
  type: 'experiment' | 'cohort'
  id: string
  name: string
  url: string
  created_at: string
  created_by: UserSummary | null
}

const toStepObject = (s: ActionStep): ActionStepObject => ({
  event: s.event,
  properties: s.properties,
  selector: s.selector,
  selector_regex: s.selector ? selectorRegex(parseSelector(s.selector)) : null,
  tag_name: s.tag_name,
  text: s.text,
  text_matching: s.text_matching,
  href: s.href,
  href_matching: s.href_matching,
  url: s.url,
  url_matching: s.url_matching,
})

export function toActionObject(a: ActionRecord, createdBy: UserSummary | null): ActionObject {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    tags: a.tags,
    post_to_slack: a.post_to_slack,
    slack_message_format: a.slack_message_format,
    steps: a.steps.map(toStepObject),
    created_at: a.created_at,
    created_by: createdBy,
    deleted: a.deleted,
    is_calculating: false,
    last_calculated_at: a.last_calculated_at,
    team_id: a.team_id,
    is_action: true,
    bytecode_error: null,
    pinned_at: a.pinned_at,
    creation_context: null,
    // Skylark has no per-object access control: whoever may reach the API may edit.
    user_access_level: 'editor',
  }
}
