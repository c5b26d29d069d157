/**
 * The create body, read as PostHog's ExportedAssetSerializer reads it: its fields in order with DRF's messages,
 * then its validate(). What skylark can render is narrower than PostHog's formats: CSV of an API list (`path`) or
 * of a HogQLQuery (`source`), so images, PDFs, spreadsheets and videos of dashboards and insights, and CSVs of
 * other query kinds, are refused here instead of failing later.
 */
import { drfDateTime, drfDict, pyTruthy } from '../../common/drf-fields.js'
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import { pyStr } from '../../common/python-format.js'

/** PostHog's ExportedAsset.ExportFormat, every one of which its serializer takes. */
export const EXPORT_FORMATS = [
  'image/png',
  'application/pdf',
  'text/csv',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'video/webm',
  'video/mp4',
  'image/gif',
  'application/json',
] as const

export const CSV = 'text/csv'

export interface ExportInput {
  export_context: JsonObject
  /** The ISO time given, or absent for the default (six months on). */
  expires_after: string | null | undefined
}

const NOT_RENDERED = 'skylark exports API lists (export_context.path) and HogQL queries (export_context.source) as CSV, not dashboards or insights.'

function readContext(value: JsonObject): JsonObject {
  const source = value.source
  if (source !== undefined && source !== null) {
    // The query itself is read when the export renders, as PostHog's exporter reads it: a refusal is the asset's exception.
    if (!isPlainObject(source) || source.kind !== 'HogQLQuery') throw new ValidationError('invalid', 'An exported query (`source`) is a HogQLQuery here: {"kind": "HogQLQuery", "query": "SELECT …"}.', 'export_context')
    return value
  }
  const path = value.path
  if (typeof path !== 'string' || !path.startsWith('/api/')) throw new ValidationError('invalid', 'export_context needs a `path`: an API list, such as /api/projects/1/events/?event=$pageview.', 'export_context')
  const method = value.method ?? 'GET'
  if (typeof method !== 'string' || method.toUpperCase() !== 'GET') throw new ValidationError('invalid', 'An exported `path` is read with GET.', 'export_context')
  const columns = value.columns
  if (columns !== undefined && columns !== null && !(Array.isArray(columns) && columns.every((c) => typeof c === 'string'))) {
    throw new ValidationError('invalid', '`columns` must be a list of column names.', 'export_context')
  }
  return value
}

export function readExport(body: unknown): ExportInput {
  const b = drfDict(body)
  for (const attr of ['dashboard', 'insight'] as const) {
    if (b[attr] !== undefined && b[attr] !== null) throw new ValidationError('invalid', NOT_RENDERED, attr)
  }
  const format = b.export_format
  if (format === undefined) throw new ValidationError('required', 'This field is required.', 'export_format')
  if (format === null) throw new ValidationError('null', 'This field may not be null.', 'export_format')
  const formatText = typeof format === 'string' ? format : pyStr(format)
  if (!(EXPORT_FORMATS as readonly string[]).includes(formatText)) throw new ValidationError('invalid_choice', `"${formatText}" is not a valid choice.`, 'export_format')
  const context = b.export_context
  const expires = b.expires_after === undefined ? undefined : drfDateTime(b.expires_after, 'expires_after', { nullable: true })
  if (!pyTruthy(context)) throw new ValidationError('invalid', 'Either dashboard, insight or export_context is required for an export.')
  if (formatText !== CSV) throw new ValidationError('invalid', `Export format ${formatText} is not supported: ${NOT_RENDERED}`, 'export_format')
  if (!isPlainObject(context)) throw new ValidationError('invalid', 'export_context must be an object.', 'export_context')
  return { export_context: readContext(context), expires_after: expires }
}
