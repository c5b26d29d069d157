/**
 * Scheduled changes on the wire: the object (PostHog's ScheduledChangeSerializer) and its request bodies
 * (documentation: the domain reads them field by field with DRF's messages, see
 * src/management/scheduled-changes/input.ts).
 */
import { anyJson, paginated, userSummarySchema, type JsonSchema } from './shared.js'

const MODEL_NAME: JsonSchema = { type: 'string', enum: ['FeatureFlag'], description: 'The kind of record to change: only "FeatureFlag".' }
const INTERVAL: JsonSchema = { type: ['string', 'null'], enum: ['daily', 'weekly', 'monthly', 'yearly', null] }
const dateTime: JsonSchema = { type: 'string', format: 'date-time' }

const writable: Record<string, JsonSchema> = {
  record_id: { type: ['string', 'integer'], maxLength: 200, description: 'The id of the flag to change (a flag of the project the user may edit).' },
  model_name: MODEL_NAME,
  payload: {
    ...anyJson,
    description:
      "The change: `{\"operation\": ..., \"value\": ...}` with `update_status` (value true or false: switch the flag on or off), `add_release_condition` (value `{\"groups\": [...]}`: conditions appended to the flag's) or `update_variants` (value `{\"variants\": [...], \"payloads\": {...}}`: rollouts summing to 100). Checked when applied.",
  },
  scheduled_at: { ...dateTime, description: 'When to apply the change (ISO 8601). A time already past applies at once.' },
  is_recurring: { type: 'boolean', description: 'Repeat every `recurrence_interval` or on `cron_expression` (not for add_release_condition). Set false on an existing schedule to pause it.' },
  recurrence_interval: { ...INTERVAL, description: 'One of `recurrence_interval` and `cron_expression` is required when `is_recurring` is true.' },
  cron_expression: {
    type: ['string', 'null'],
    maxLength: 100,
    description:
      "A five-field cron expression (minute hour day month weekday, croniter's syntax) read on the wall clock of the project's timezone when the change was made (`timezone`), e.g. '0 9 * * 1-5': after each run the change is rescheduled to the next time it matches. Only with `is_recurring` and without `recurrence_interval`.",
  },
  end_date: { type: ['string', 'null'], format: 'date-time', description: 'A recurring schedule stops after this time; after `scheduled_at`.' },
}

export const scheduledChangeCreateSchema: JsonSchema = { type: 'object', properties: writable, required: ['record_id', 'model_name', 'payload', 'scheduled_at'] }

export const scheduledChangeUpdateSchema: JsonSchema = {
  type: 'object',
  description: '`record_id` and `model_name` may not change; a one-time change that ran may not change at all.',
  properties: writable,
}

export const scheduledChangeSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    team_id: { type: 'integer' },
    record_id: { type: 'string' },
    model_name: MODEL_NAME,
    payload: anyJson,
    scheduled_at: dateTime,
    executed_at: { type: ['string', 'null'], format: 'date-time', description: 'When it ran, or failed for good.' },
    failure_reason: { type: ['string', 'null'], description: 'Why the last attempt failed, and whether it will be retried.' },
    created_at: dateTime,
    created_by: { ...userSummarySchema, type: ['object', 'null'] },
    updated_at: dateTime,
    is_recurring: { type: 'boolean' },
    recurrence_interval: INTERVAL,
    cron_expression: { type: ['string', 'null'] },
    last_executed_at: { type: ['string', 'null'], format: 'date-time', description: 'The last run of a recurring schedule.' },
    end_date: { type: ['string', 'null'], format: 'date-time' },
    timezone: { type: 'string', description: "The project's timezone when the change was made: the wall clock of `cron_expression`." },
  },
  required: [
    'id',
    'team_id',
    'record_id',
    'model_name',
    'payload',
    'scheduled_at',
    'executed_at',
    'failure_reason',
    'created_at',
    'created_by',
    'updated_at',
    'is_recurring',
    'recurrence_interval',
    'cron_expression',
    'last_executed_at',
    'end_date',
    'timezone',
  ],
}

export const scheduledChangePageSchema: JsonSchema = paginated(scheduledChangeSchema)
