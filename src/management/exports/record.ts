/** An exported asset as stored (one row of `exported_assets`) and as the API shows it (PostHog's ExportedAssetSerializer). */
import type { JsonObject } from '../../common/json.js'
import { pyStr } from '../../common/python-format.js'
import { slugify } from '../account-objects.js'

export interface ExportedAsset {
  id: number
  team_id: number
  export_format: string
  export_context: JsonObject | null
  created_by: number | null
  created_at: string
  expires_after: string | null
  exception: string | null
  has_content: boolean
}

export interface ExportedAssetRow extends Omit<ExportedAsset, 'export_context' | 'has_content'> {
  export_context: string | null
  has_content: number
}

export const toAsset = (row: ExportedAssetRow): ExportedAsset => ({
  ...row,
  export_context: row.export_context === null ? null : (JSON.parse(row.export_context) as JsonObject),
  has_content: row.has_content === 1,
})

/** PostHog's ExportedAsset.filename: the context's `filename` as a slug, else `export`, with the format's extension. */
export function filenameOf(asset: ExportedAsset): string {
  const named = asset.export_context?.filename
  const base = named !== undefined && named !== null && named !== '' ? slugify(pyStr(named)) : 'export'
  return `${base}.csv`
}

/** The API's object: skylark exports no dashboards or insights, so those are always null. */
export const toExportObject = (asset: ExportedAsset) => ({
  id: asset.id,
  dashboard: null,
  insight: null,
  export_format: asset.export_format,
  created_at: asset.created_at,
  has_content: asset.has_content,
  export_context: asset.export_context,
  filename: filenameOf(asset),
  expires_after: asset.expires_after,
  exception: asset.exception,
})
