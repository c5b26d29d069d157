/**
 * The create and update body, and the list's query, read as PostHog's AnnotationSerializer and
 * AnnotationsViewSet read them: fields in serializer order with DRF's messages (the first broken field is the
 * one answered), unknown and read-only fields ignored. What needs the database (the dashboard, the tag rules
 * against stored tags) is the service's to check.
 */
import { drfBoolean, drfDateTime, drfInteger, drfList, drfText, parseDateField } from '../../common/drf-fields.js'
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { pyStr, pyTypeName } from '../../common/python-format.js'
import { normaliseTags } from '../feature-flags/index.js'
import { ANNOTATION_SCOPES, CREATION_TYPES, type AnnotationScope, type CreationType } from './record.js'

/** The fields a body names; absent ones are left as they are (or take their defaults on create). */
export interface AnnotationFields {
  content?: string | null
  date_marker?: string | null
  creation_type?: CreationType
  dashboard_id?: number | null
  deleted?: boolean
  scope?: AnnotationScope
  emoji?: string | null
  hidden_in_user_interface?: boolean | null
  tags?: string[]
}

/** A serializer's body must be a dict (DRF's `non_field_errors`, answered with attr null). */
function dict(body: unknown): JsonObject {
  if (isPlainObject(body)) return body
  if (body === null || body === undefined) return {}
  throw new ValidationError('invalid', `Invalid data. Expected a dictionary, but got ${pyTypeName(body)}.`)
}

const nullRefused = (attr: string) => new ValidationError('null', 'This field may not be null.', attr)

function choice<T extends string>(value: unknown, choices: readonly T[], attr: string): T {
  if (value === null) throw nullRefused(attr)
  const s = typeof value === 'string' ? value : pyStr(value)
  if (!(choices as readonly string[]).includes(s)) throw new ValidationError('invalid_choice', `"${s}" is not a valid choice.`, attr)
  return s as T
}

/**
 * `dashboard_item`, the insight: null is fine, and as skylark stores no insights every pk names one that does
 * not exist, answered as DRF's PrimaryKeyRelatedField answers a missing or mistyped pk.
 */
function insight(value: unknown): void {
  if (value === null) return
  const pk = typeof value === 'number' || (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value))
  if (pk) throw new ValidationError('does_not_exist', `Invalid pk "${pyStr(value)}" - object does not exist.`, 'dashboard_item')
  throw new ValidationError('incorrect_type', `Incorrect type. Expected pk value, received ${pyTypeName(value)}.`, 'dashboard_item')
}

/** BooleanField: null only where the field allows it. */
function bool(value: unknown, attr: string, nullable: boolean): boolean | null {
  if (value === null) {
    if (nullable) return null
    throw nullRefused(attr)
  }
  return drfBoolean(value, attr)
}

function tags(value: unknown): string[] {
  const items = drfList(value, 'tags', { maxLength: 100 })
  return normaliseTags(items.map((item, i) => drfText(item, `tags.${i}`, { maxLength: 255 })))
}

/** The body in the serializer's field order. */
export function readAnnotation(raw: unknown): AnnotationFields {
  const body = dict(raw)
  const out: AnnotationFields = {}
  if (body.content !== undefined) out.content = body.content === null ? null : drfText(body.content, 'content', { allowBlank: true, maxLength: 8192 })
  if (body.date_marker !== undefined) out.date_marker = drfDateTime(body.date_marker, 'date_marker', { nullable: true })
  if (body.creation_type !== undefined) out.creation_type = choice(body.creation_type, CREATION_TYPES, 'creation_type')
  if (body.dashboard_item !== undefined) insight(body.dashboard_item)
  if (body.dashboard_id !== undefined) out.dashboard_id = drfInteger(body.dashboard_id, 'dashboard_id', { nullable: true })
  if (body.deleted !== undefined) out.deleted = bool(body.deleted, 'deleted', false)!
  if (body.scope !== undefined) out.scope = choice(body.scope, ANNOTATION_SCOPES, 'scope')
  // A blank emoji is stored as none, so "no emoji" has one form.
  if (body.emoji !== undefined) out.emoji = body.emoji === null ? null : drfText(body.emoji, 'emoji', { allowBlank: true, maxLength: 16 }) || null
  if (body.hidden_in_user_interface !== undefined) out.hidden_in_user_interface = bool(body.hidden_in_user_interface, 'hidden_in_user_interface', true)
  if (body.tags !== undefined) out.tags = tags(body.tags)
  return out
}

export interface AnnotationListQuery {
  scope: AnnotationScope | null
  /** Bounds on `date_marker`, inclusive, as UTC ISO strings. */
  dateFrom: string | null
  dateTo: string | null
  /** `hidden_in_user_interface`: true for the hidden only, false for the shown (false or unset). */
  hidden: boolean | null
  /**
   * `is_emoji=true` asks for emoji annotations, which moved to comments in PostHog (every annotation has
   * `is_emoji` false there, and the deprecated column fails the query): here it lists none.
   */
  emojiOnly: boolean
  /** DRF's SearchFilter terms: each must be in `content`, case-insensitively. */
  search: string[]
}

/** PostHog's truthy spellings for these two query flags. */
const truthy = (raw: string) => ['true', '1', 'yes'].includes(raw.toLowerCase())

const invalid = (detail: string) => new ValidationError('invalid', detail)

function dateBound(raw: string | null, name: 'date_from' | 'date_to'): string | null {
  if (!raw) return null
  try {
    return parseDateField(raw, name)!
  } catch {
    throw invalid(`Invalid date range: ${name} must be a valid ISO 8601 date`)
  }
}

export function readListQuery(query: URLSearchParams): AnnotationListQuery {
  let scope: AnnotationScope | null = null
  const rawScope = query.get('scope')
  if (rawScope) {
    // The newer name of the insight scope is read as its stored one.
    const name = rawScope === 'insight' ? 'dashboard_item' : rawScope
    if (!(ANNOTATION_SCOPES as readonly string[]).includes(name)) throw invalid(`Invalid scope: ${name}`)
    scope = name as AnnotationScope
  }
  const dateFrom = dateBound(query.get('date_from'), 'date_from')
  const dateTo = dateBound(query.get('date_to'), 'date_to')
  if (dateFrom !== null && dateTo !== null && dateFrom > dateTo) throw invalid('Invalid date range: date_from must be before date_to')
  const hidden = query.get('hidden_in_user_interface')
  const emoji = query.get('is_emoji')
  // SearchFilter splits on commas and white space and drops NUL characters.
  const search = (query.get('search') ?? '').replace(/\u0000/g, '').split(/[\s,]+/).filter((term) => term !== '')
  return { scope, dateFrom, dateTo, hidden: hidden === null ? null : truthy(hidden), emojiOnly: emoji !== null && truthy(emoji), search }
}
