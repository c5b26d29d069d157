/**
 * The create and update bodies of a shared metric, read as PostHog's ExperimentSavedMetricSerializer reads
 * them: fields in its order (name, description, query, tags) with DRF's messages, the first broken field
 * answered; unknown and read-only fields ignored. The name's uniqueness and the query's metric rules are
 * the service's (they need the rows).
 */
import { drfDict, drfText } from '../../common/drf-fields.js'
import { ValidationError } from '../../common/errors.js'
import { pyTypeName } from '../../common/python-format.js'

export interface SavedMetricFields {
  name?: string
  /** null clears it. */
  description?: string | null
  /** Any JSON the body sends; the service checks it is an ExperimentMetric. */
  query?: unknown
  tags?: string[]
}

const MAX_LENGTH = 400

const required = (field: string) => new ValidationError('required', 'This field is required.', field)
const notNull = (field: string) => new ValidationError('null', 'This field may not be null.', field)

/** TaggedItemSerializerMixin's ListField of tag names. */
function tags(value: unknown): string[] {
  if (value === null) throw notNull('tags')
  if (!Array.isArray(value)) throw new ValidationError('not_a_list', `Expected a list of items but got type "${pyTypeName(value)}".`, 'tags')
  return value.map((tag) => drfText(tag, 'tags', { allowBlank: true }))
}

/**
 * The fields a body sends; `creating` makes `name` and `query` required. `checkName` is the serializer's
 * `validate_name`, which DRF runs before it reads the next field.
 */
export function readSavedMetricBody(body: unknown, creating: boolean, checkName: (name: string) => void): SavedMetricFields {
  const b = drfDict(body)
  const out: SavedMetricFields = {}
  if (b.name !== undefined) {
    out.name = drfText(b.name, 'name', { maxLength: MAX_LENGTH })
    checkName(out.name)
  } else if (creating) throw required('name')
  if (b.description !== undefined) out.description = b.description === null ? null : drfText(b.description, 'description', { allowBlank: true, maxLength: MAX_LENGTH })
  if (b.query !== undefined) {
    if (b.query === null) throw notNull('query')
    out.query = b.query
  } else if (creating) throw required('query')
  if (b.tags !== undefined) out.tags = tags(b.tags)
  return out
}
