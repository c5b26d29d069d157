/**
 * multipart/form-data bodies, which PostHog's API takes beside JSON (DRF's MultiPartParser): a cohort created
 * or updated with an uploaded CSV. Parsed by the platform's own reader (undici's `Response.formData()`), not by
 * hand: boundaries, quoted names and encodings are its job. Fields come as text, files as bytes.
 */
import { ValidationError } from '../common/errors.js'
import type { RequestContext } from './types.js'

export interface Form {
  fields: Record<string, string>
  files: Record<string, Uint8Array>
}

/** Whether the body is a form; the JSON reader leaves such a body to the route. */
export const isForm = (ctx: RequestContext): boolean => (ctx.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data')

/** The request's form, or null when the body is not one; a form that can't be read is a 400. */
export async function readForm(ctx: RequestContext): Promise<Form | null> {
  if (!isForm(ctx)) return null
  let data: FormData
  try {
    data = await new Response(ctx.body ?? new Uint8Array(), { headers: { 'content-type': ctx.headers['content-type']! } }).formData()
  } catch (error) {
    throw new ValidationError('parse_error', `Multipart form parse error - ${(error as Error).message}`)
  }
  const form: Form = { fields: {}, files: {} }
  for (const [name, value] of data) {
    if (typeof value === 'string') form.fields[name] = value
    else form.files[name] = new Uint8Array(await value.arrayBuffer())
  }
  return form
}

/** DRF's BooleanField text values. */
const TRUE = new Set(['y', 'yes', 'true', 'on', '1'])
const FALSE = new Set(['n', 'no', 'false', 'off', '0'])

/**
 * A form's fields as the JSON body a route reads, as DRF's fields read form input: the named booleans from
 * their text (`true`, `1`, …), the named JSON fields parsed, the rest as text.
 */
export function formBody(fields: Record<string, string>, types: { booleans: readonly string[]; json: readonly string[] }): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const [name, text] of Object.entries(fields)) {
    if (types.booleans.includes(name)) {
      const lower = text.trim().toLowerCase()
      if (!TRUE.has(lower) && !FALSE.has(lower)) throw new ValidationError('invalid', 'Must be a valid boolean.', name)
      body[name] = TRUE.has(lower)
    } else if (types.json.includes(name)) {
      try {
        body[name] = JSON.parse(text)
      } catch {
        throw new ValidationError('invalid', 'Value must be valid JSON.', name)
      }
    } else body[name] = text
  }
  return body
}
