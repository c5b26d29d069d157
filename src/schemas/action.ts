/**
 * Actions on the wire: the object (PostHog's ActionSerializer, steps as its ActionStepJSONSerializer) and its
 * request body (documentation: the domain reads it field by field with DRF's messages, see
 * src/management/actions/input.ts).
 */
import { freeFormObject, paginated, userSummarySchema, type JsonSchema } from './shared.js'

const MATCHING = ['contains', 'regex', 'exact', null]
const text = (description: string): JsonSchema => ({ type: ['string', 'null'], description })
const matching = (description: string): JsonSchema => ({ type: ['string', 'null'], enum: MATCHING, description })

const stepWrite: JsonSchema = {
  type: 'object',
  properties: {
    event: text("Event name to match (e.g. '$pageview', '$autocapture'); null for any event. Spaces are kept."),
    properties: {
      type: ['array', 'null'],
      items: freeFormObject,
      description: 'Event property filters `{key, value, operator, type}` that must all hold (type `event`, operators exact, is_not, icontains, not_icontains, is_set, is_not_set, gt, gte, lt, lte).',
    },
    selector: text('CSS selector of the clicked element or its ancestors (e.g. `div > button.cta`); `$autocapture` steps only.'),
    tag_name: text('HTML tag of an element of the click; `$autocapture` steps only.'),
    text: text('Text of an element of the click; `$autocapture` steps only.'),
    text_matching: matching('How `text` is matched: exact (the default), contains (any case) or regex.'),
    href: text('The link of the click; `$autocapture` steps only.'),
    href_matching: matching('How `href` is matched: exact (the default), contains (any case) or regex.'),
    url: text('Page URL (`$current_url`) to match.'),
    url_matching: matching('How `url` is matched: contains (the default: SQL LIKE, `%` and `_` are wildcards), exact or regex.'),
  },
}

export const actionWriteSchema: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: ['string', 'null'], maxLength: 400, description: 'Unique among the live actions of the project.' },
    description: { type: 'string' },
    tags: { type: 'array', items: { type: 'string', maxLength: 255 }, description: 'Stored trimmed, lower-case, once each.' },
    post_to_slack: { type: 'boolean', description: 'Stored; skylark sends no Slack messages.' },
    slack_message_format: { type: 'string', maxLength: 1200 },
    steps: { type: 'array', items: stepWrite, description: 'An event matches the action when it matches any step; a step matches when all its conditions hold.' },
    deleted: { type: 'boolean', description: 'true soft-deletes the action, false restores it.' },
    pinned_at: { type: ['string', 'null'], format: 'date-time', description: 'Any value pins the action (at the server\'s time, once); null or empty unpins.' },
  },
}

const stepSchema: JsonSchema = {
  type: 'object',
  properties: {
    event: { type: ['string', 'null'] },
    properties: { type: ['array', 'null'], items: freeFormObject },
    selector: { type: ['string', 'null'] },
    selector_regex: { type: ['string', 'null'], description: "The regex the selector is matched with over the elements chain (PostHog's)." },
    tag_name: { type: ['string', 'null'] },
    text: { type: ['string', 'null'] },
    text_matching: { type: ['string', 'null'], enum: MATCHING },
    href: { type: ['string', 'null'] },
    href_matching: { type: ['string', 'null'], enum: MATCHING },
    url: { type: ['string', 'null'] },
    url_matching: { type: ['string', 'null'], enum: MATCHING },
  },
  required: ['event', 'properties', 'selector', 'selector_regex', 'tag_name', 'text', 'text_matching', 'href', 'href_matching', 'url', 'url_matching'],
}

export const actionSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: ['string', 'null'] },
    description: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    post_to_slack: { type: 'boolean' },
    slack_message_format: { type: 'string' },
    steps: { type: 'array', items: stepSchema },
    created_at: { type: 'string', format: 'date-time' },
    created_by: { ...userSummarySchema, type: ['object', 'null'] },
    deleted: { type: 'boolean' },
    is_calculating: { type: 'boolean' },
    last_calculated_at: { type: 'string', format: 'date-time' },
    team_id: { type: 'integer' },
    is_action: { type: 'boolean' },
    bytecode_error: { type: ['string', 'null'] },
    pinned_at: { type: ['string', 'null'], format: 'date-time' },
    creation_context: { type: ['string', 'null'] },
    user_access_level: { type: 'string', enum: ['editor'] },
    reference_count: { type: 'integer', description: 'In lists asked for it with `include_reference_count`: how many experiments and cohorts name the action.' },
  },
  required: [
    'id', 'name', 'description', 'tags', 'post_to_slack', 'slack_message_format', 'steps', 'created_at', 'created_by', 'deleted',
    'is_calculating', 'last_calculated_at', 'team_id', 'is_action', 'bytecode_error', 'pinned_at', 'creation_context', 'user_access_level',
  ],
}

export const actionPageSchema: JsonSchema = paginated(actionSchema)

export const actionReferencesSchema: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      type: { type: 'string', enum: ['experiment', 'cohort'] },
      id: { type: 'string' },
      name: { type: 'string' },
      url: { type: 'string', description: 'The path of the resource in PostHog\'s app.' },
      created_at: { type: ['string', 'null'], format: 'date-time' },
      created_by: { ...userSummarySchema, type: ['object', 'null'] },
    },
    required: ['type', 'id', 'name', 'url', 'created_at', 'created_by'],
  },
}
