/**
 * The create and update body, and the list's query, read as PostHog's ActionSerializer and ActionViewSet
 * read them (products/actions/backend/api/action.py): fields in serializer order with DRF's messages (the
 * first broken field is the one answered), unknown and read-only fields ignored. Nested fields are named
 * by their dot path from the body (`steps.0.url`), as skylark's other nested bodies are. What needs the
 * database (a name another live action has) is the service's to check.
 */
import { drfBoolean, drfDateTime, drfDict, drfList, drfText } from '../../common/drf-fields.js'
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { pyStr, pyTypeName } from '../../common/python-format.js'
import { normaliseTags } from '../feature-flags/index.js'
import { STEP_MATCHING, type ActionStep, type StepMatching } from './record.js'
import { storesCanRun } from './regex.js'

export interface ActionFields {
  name?: string | null
  description?: string
  tags?: string[]
  post_to_slack?: boolean
  slack_message_format?: string
  /** Each step as sent: the fields it named (the record fills the rest). */
  steps?: Partial<ActionStep>[]
  deleted?: boolean
  pinned_at?: string | null
}

const nullRefused = (attr: string) => new ValidationError('null', 'This field may not be null.', attr)

/** CharField(allow_null=True): null, or text; `trim: false` is DRF's `trim_whitespace=False`, where spaces are not blank. */
function nullableText(value: unknown, attr: string, trim: boolean): string | null {
  if (value === null) return null
  if (!trim && typeof value === 'string' && value !== '') return drfText(value, attr, { allowBlank: true, trim: false })
  return drfText(value, attr, { trim })
}

function matching(value: unknown, attr: string): StepMatching | null {
  if (value === null) return null
  const s = typeof value === 'string' ? value : pyStr(value)
  if (!(STEP_MATCHING as readonly string[]).includes(s)) throw new ValidationError('invalid_choice', `"${s}" is not a valid choice.`, attr)
  return s as StepMatching
}

function properties(value: unknown, attr: string): JsonObject[] | null {
  if (value === null) return null
  return drfList(value, attr).map((item, i) => {
    if (!isPlainObject(item)) throw new ValidationError('not_a_dict', `Expected a dictionary of items but got type "${pyTypeName(item)}".`, `${attr}.${i}`)
    return item
  })
}

/** A pattern the stores could not run (re2's syntax) is refused where the step asks for a regex. */
function checkRegex(step: Partial<ActionStep>, field: 'url' | 'href' | 'text', attr: string): void {
  const value = step[field]
  if (step[`${field}_matching`] !== 'regex' || typeof value !== 'string') return
  if (!storesCanRun(value)) throw new ValidationError('invalid', `Invalid regular expression: ${JSON.stringify(value)}.`, `${attr}.${field}`)
}

function step(raw: unknown, attr: string): Partial<ActionStep> {
  if (!isPlainObject(raw)) throw new ValidationError('invalid', `Invalid data. Expected a dictionary, but got ${pyTypeName(raw)}.`, attr)
  const out: Partial<ActionStep> = {}
  // ActionStepJSONSerializer's field order; `selector` and `url` trim white space, the others keep it.
  const read = (key: keyof ActionStep, trim: boolean) => {
    if (raw[key] !== undefined) (out as JsonObject)[key] = nullableText(raw[key], `${attr}.${key}`, trim)
  }
  read('event', false)
  if (raw.properties !== undefined) out.properties = properties(raw.properties, `${attr}.properties`)
  read('selector', true)
  read('tag_name', false)
  read('text', false)
  if (raw.text_matching !== undefined) out.text_matching = matching(raw.text_matching, `${attr}.text_matching`)
  read('href', false)
  if (raw.href_matching !== undefined) out.href_matching = matching(raw.href_matching, `${attr}.href_matching`)
  read('url', true)
  if (raw.url_matching !== undefined) out.url_matching = matching(raw.url_matching, `${attr}.url_matching`)
  for (const field of ['url', 'href', 'text'] as const) checkRegex(out, field, attr)
  return out
}

/** The body in the serializer's field order, then `validate()`'s blank-name rule. */
export function readAction(raw: unknown): ActionFields {
  const body = drfDict(raw)
  const out: ActionFields = {}
  if (body.name !== undefined) out.name = body.name === null ? null : drfText(body.name, 'name', { allowBlank: true, maxLength: 400 })
  if (body.description !== undefined) out.description = drfText(body.description, 'description', { allowBlank: true })
  if (body.tags !== undefined) out.tags = normaliseTags(drfList(body.tags, 'tags').map((t, i) => drfText(t, `tags.${i}`, { maxLength: 255 })))
  if (body.post_to_slack !== undefined) {
    if (body.post_to_slack === null) throw nullRefused('post_to_slack')
    out.post_to_slack = drfBoolean(body.post_to_slack, 'post_to_slack')
  }
  if (body.slack_message_format !== undefined) out.slack_message_format = drfText(body.slack_message_format, 'slack_message_format', { allowBlank: true, maxLength: 1200 })
  if (body.steps !== undefined) out.steps = drfList(body.steps, 'steps').map((s, i) => step(s, `steps.${i}`))
  if (body.deleted !== undefined) {
    if (body.deleted === null) throw nullRefused('deleted')
    out.deleted = drfBoolean(body.deleted, 'deleted')
  }
  if (body.pinned_at !== undefined) out.pinned_at = body.pinned_at === '' ? null : drfDateTime(body.pinned_at, 'pinned_at', { nullable: true })
  // PostHog's validate(): after the fields, before the name's uniqueness.
  if (typeof out.name === 'string' && out.name.trim() === '') throw new ValidationError('blank', 'This field may not be blank.', 'name')
  return out
}

export type ActionOrder = 'name' | 'created_at' | 'pinned_at' | 'created_by'

export interface ActionListQuery {
  search: string | null
  createdByIds: number[]
  tags: string[]
  /** PostHog's `ordering` allow-list; null keeps `-last_calculated_at, name`. */
  ordering: { field: ActionOrder; descending: boolean } | null
}

const ORDERINGS: ReadonlySet<string> = new Set(['name', 'created_at', 'pinned_at', 'created_by'])

/** The list's opt-in filters, read as leniently as PostHog reads them: what it can't read filters nothing. */
export function readListQuery(query: URLSearchParams): ActionListQuery {
  const createdBy = query.get('created_by') ?? ''
  const createdByIds = createdBy
    .split(',')
    .filter((v) => /^\d+$/.test(v.trim()))
    .map((v) => Number(v.trim()))
    .filter(Number.isSafeInteger)
  let tags: string[] = []
  const rawTags = query.get('tags')
  if (rawTags) {
    try {
      const parsed: unknown = JSON.parse(rawTags)
      if (Array.isArray(parsed)) tags = parsed.map((t) => (typeof t === 'string' ? t : pyStr(t)))
    } catch {
      tags = []
    }
  }
  const raw = query.get('ordering') ?? ''
  const field = raw.replace(/^-+/, '')
  const ordering = ORDERINGS.has(field) ? { field: field as ActionOrder, descending: raw.startsWith('-') } : null
  return { search: query.get('search') || null, createdByIds, tags, ordering }
}
