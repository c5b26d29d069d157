/**
 * Exported assets on the wire: the object (PostHog's ExportedAssetSerializer) and the create body
 * (documentation: the domain reads it field by field with DRF's messages, see src/management/exports/input.ts).
 */
import { paginated, type JsonSchema } from './shared.js'

const context: JsonSchema = {
  type: ['object', 'null'],
  additionalProperties: true,
  description:
    'What to export: `path`, an API list read with GET and followed through its `next` pages (such as `/api/projects/1/events/?event=$pageview`), up to 300,000 rows or 32 MiB of CSV. `columns` picks and orders the CSV columns (dotted names, such as `properties.$browser`); `filename` names the download.',
}

export const exportWriteSchema: JsonSchema = {
  type: 'object',
  properties: {
    export_format: { type: 'string', enum: ['text/csv'], description: 'Only `text/csv`: skylark renders no images, PDFs, spreadsheets or videos.' },
    export_context: context,
    expires_after: { type: ['string', 'null'], format: 'date-time', description: 'When the asset is gone (default: 26 weeks on, at midnight UTC).' },
    dashboard: { type: 'null' },
    insight: { type: 'null' },
  },
  required: ['export_format', 'export_context'],
}

export const exportSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    dashboard: { type: 'null' },
    insight: { type: 'null' },
    export_format: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    has_content: { type: 'boolean' },
    export_context: context,
    filename: { type: 'string' },
    expires_after: { type: ['string', 'null'], format: 'date-time' },
    exception: { type: ['string', 'null'], description: 'Why the export has no content, when it failed.' },
  },
  required: ['id', 'dashboard', 'insight', 'export_format', 'created_at', 'has_content', 'export_context', 'filename', 'expires_after', 'exception'],
}

export const exportPageSchema: JsonSchema = paginated(exportSchema)
