/**
 * The create and update bodies read as PostHog's ScheduledChangeSerializer reads them: its fields in order with
 * DRF's messages (the first broken field is answered), unknown and read-only fields ignored, then its
 * `validate()`. Whether the flag exists and may be edited is the service's to check.
 */
import { drfBoolean, drfText, parseDateField } from '../../common/drf-fields.js'
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { pyStr, pyTypeName } from '../../common/python-format.js'
import { isValidCron } from './cron.js'
import { MODEL_NAMES, RECURRENCE_INTERVALS, type RecurrenceInterval, type ScheduledChangeRecord } from './record.js'

export interface ChangeFields {
  record_id?: string
  model_name?: string
  payload?: unknown
  scheduled_at?: string
  is_recurring?: boolean
  recurrence_interval?: RecurrenceInterval | null
  cron_expression?: string | null
  end_date?: string | null
}

const invalid = (detail: string, attr: string | null = null) => new ValidationError('invalid', detail, attr)
const required = (attr: string) => new ValidationError('required', 'This field is required.', attr)
const notNull = (attr: string) => new ValidationError('null', 'This field may not be null.', attr)

/** PostHog's sentences for a cron expression it won't run. */
export const CRON_BOTH = 'Cannot set both cron_expression and recurrence_interval. Use one or the other.'
export const CRON_FIVE_FIELDS = "Only standard 5-field cron expressions are supported (minute hour day month weekday). Example: '0 9 * * 1-5'."
export const CRON_INVALID = "Invalid cron expression. Use standard 5-field cron syntax (e.g., '0 9 * * 1-5')."

/** A serializer's body must be a dict (DRF's `non_field_errors`, answered with attr null). */
function dict(body: unknown): JsonObject {
  if (isPlainObject(body)) return body
  if (body === null || body === undefined) return {}
  throw invalid(`Invalid data. Expected a dictionary, but got ${pyTypeName(body)}.`)
}

function choice<T extends string>(value: unknown, choices: readonly T[], attr: string): T {
  const s = typeof value === 'string' ? value : pyStr(value)
  if (!(choices as readonly string[]).includes(s)) throw new ValidationError('invalid_choice', `"${s}" is not a valid choice.`, attr)
  return s as T
}

function dateTime(value: unknown, attr: string, nullable: boolean): string | null {
  if (value === null) {
    if (nullable) return null
    throw notNull(attr)
  }
  // DRF parses text only: anything else gets the wrong-format message, as text that is no date does.
  if (typeof value !== 'string') return parseDateField('', attr)!
  return parseDateField(value, attr)!
}

/** The fields, each checked on its own, in the serializer's order. */
function fields(body: JsonObject, creating: boolean): ChangeFields {
  const out: ChangeFields = {}
  const has = (key: string) => body[key] !== undefined
  if (has('record_id')) out.record_id = drfText(body.record_id, 'record_id', { maxLength: 200 })
  else if (creating) throw required('record_id')
  if (has('model_name')) {
    if (body.model_name === null) throw notNull('model_name')
    out.model_name = choice(body.model_name, MODEL_NAMES, 'model_name')
  } else if (creating) throw required('model_name')
  if (has('payload')) {
    if (body.payload === null) throw notNull('payload')
    out.payload = body.payload
  } else if (creating) throw required('payload')
  if (has('scheduled_at')) out.scheduled_at = dateTime(body.scheduled_at, 'scheduled_at', false)!
  else if (creating) throw required('scheduled_at')
  if (has('is_recurring')) {
    if (body.is_recurring === null) throw notNull('is_recurring')
    out.is_recurring = drfBoolean(body.is_recurring, 'is_recurring')
  } else if (creating) out.is_recurring = false
  if (has('recurrence_interval')) out.recurrence_interval = body.recurrence_interval === null ? null : choice(body.recurrence_interval, RECURRENCE_INTERVALS, 'recurrence_interval')
  if (has('cron_expression')) out.cron_expression = body.cron_expression === null ? null : drfText(body.cron_expression, 'cron_expression', { allowBlank: true, maxLength: 100 })
  if (has('end_date')) out.end_date = dateTime(body.end_date, 'end_date', true)
  return out
}

/** PostHog's `validate()`: the rules across fields, with the stored row's values where the body is silent. */
function validate(out: ChangeFields, current: ScheduledChangeRecord | null): void {
  if (current) {
    if (out.record_id !== undefined && out.record_id !== current.record_id) {
      throw invalid('Cannot change the target record of an existing scheduled change.', 'record_id')
    }
    if (out.model_name !== undefined && out.model_name !== current.model_name) {
      throw invalid('Cannot change the model type of an existing scheduled change.', 'model_name')
    }
    // Recurring rows keep executed_at null while active, so this only holds one-time changes that ran.
    if (current.executed_at !== null && !current.is_recurring) throw invalid('Cannot modify a scheduled change that has already executed.')
  }
  const isRecurring = out.is_recurring ?? current?.is_recurring ?? false
  const interval = out.recurrence_interval !== undefined ? out.recurrence_interval : (current?.recurrence_interval ?? null)
  const cron = out.cron_expression !== undefined ? out.cron_expression : (current?.cron_expression ?? null)
  const payload = out.payload !== undefined ? out.payload : (current?.payload ?? {})
  if (cron && interval) throw invalid(CRON_BOTH, 'cron_expression')
  if (cron) {
    if (cron.trim().split(/\s+/).length !== 5) throw invalid(CRON_FIVE_FIELDS, 'cron_expression')
    if (!isValidCron(cron)) throw invalid(CRON_INVALID, 'cron_expression')
  }
  if (isRecurring) {
    if (!interval && !cron) throw invalid('Either recurrence_interval or cron_expression is required when is_recurring is true.', 'recurrence_interval')
    // It appends condition groups on every run.
    if (isPlainObject(payload) && payload.operation === 'add_release_condition') {
      throw invalid('Recurring schedules are not supported for add_release_condition because it appends conditions on each run, creating duplicates.', 'payload')
    }
  }
  // An update may keep the interval or the cron expression with is_recurring off: that pauses the schedule.
  if (!current && !isRecurring && interval) throw invalid('Cannot set recurrence_interval when is_recurring is false for new schedules.', 'recurrence_interval')
  if (!current && !isRecurring && cron) throw invalid('Cannot set cron_expression when is_recurring is false for new schedules.', 'cron_expression')
  const end = out.end_date !== undefined ? out.end_date : (current?.end_date ?? null)
  const start = out.scheduled_at ?? current?.scheduled_at ?? null
  if (end && start && Date.parse(end) <= Date.parse(start)) throw invalid('End date must be after the scheduled start date.', 'end_date')
}

export function readCreate(raw: unknown): Required<Pick<ChangeFields, 'record_id' | 'model_name' | 'scheduled_at' | 'is_recurring'>> & ChangeFields {
  const out = fields(dict(raw), true)
  validate(out, null)
  return out as ReturnType<typeof readCreate>
}

export function readUpdate(raw: unknown, current: ScheduledChangeRecord): ChangeFields {
  const out = fields(dict(raw), false)
  validate(out, current)
  return out
}
