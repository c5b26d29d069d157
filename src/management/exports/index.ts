/**
 * Exports (PostHog's ExportedAsset): a CSV of an API list, rendered when it is asked for and kept for download.
 * The rendering calls the API itself, so it lives in http/ (export-runner.ts); this is the record.
 */
export { Exports, type ExportListQuery } from './service.js'
export { toExportObject, filenameOf, type ExportedAsset } from './record.js'
