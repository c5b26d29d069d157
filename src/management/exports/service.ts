/**
 * Exported assets, as PostHog's ExportedAssetViewSet: create (the route renders the CSV before answering, as
 * PostHog's create does when it is not forced to queue), list the caller's own, read one, and its content. An
 * asset past `expires_after` is gone from every read, as PostHog's manager hides it, and is deleted by the next
 * create (PostHog deletes them on a schedule).
 */
import { iso, type Clock } from '../../common/clock.js'
import { AppError } from '../../common/errors.js'
import type { Page } from '../../common/pagination.js'
import { prepared, type Db } from '../../storage/sqlite/database.js'
import type { Project } from '../accounts.js'
import { EXPORT_FORMATS, CSV, readExport } from './input.js'
import { toAsset, type ExportedAsset, type ExportedAssetRow } from './record.js'

/** PostHog's serializer default: six months (26 weeks) on, at midnight UTC. */
const DEFAULT_LIFETIME_MS = 26 * 7 * 86_400_000

const COLUMNS = `id, team_id, export_format, export_context, created_by, created_at, expires_after, exception, content IS NOT NULL AS has_content`
const LIVE = `(expires_after IS NULL OR expires_after >= @now)`

/** What a list may be narrowed by (PostHog's `context_path` and `export_format`). */
export interface ExportListQuery {
  contextPath: string | null
  exportFormat: string | null
}

export class Exports {
  readonly #db: Db
  readonly #clock: Clock

  constructor(db: Db, clock: Clock) {
    this.#db = db
    this.#clock = clock
  }

  /** Validates and stores a new asset without content; the route renders it and calls finish(). */
  create(project: Project, body: unknown, userId: number | null): ExportedAsset {
    const input = readExport(body)
    const now = this.#clock.now()
    const expires = input.expires_after !== undefined ? input.expires_after : iso(new Date(now + DEFAULT_LIFETIME_MS).setUTCHours(0, 0, 0, 0))
    prepared(this.#db, `DELETE FROM exported_assets WHERE expires_after < ?`).run(iso(now))
    const { lastInsertRowid } = prepared(
      this.#db,
      `INSERT INTO exported_assets (team_id, export_format, export_context, created_by, created_at, expires_after) VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(project.id, CSV, JSON.stringify(input.export_context), userId, iso(now), expires)
    return this.#read(project, Number(lastInsertRowid), false)
  }

  /** Keeps the rendered content, or the reason there is none (PostHog's `exception`). */
  finish(project: Project, id: number, outcome: { content: string } | { exception: string }): ExportedAsset {
    // Kept as text: a Buffer would be one more copy of up to 32 MiB on the way in and on the way out.
    const content = 'content' in outcome ? outcome.content : null
    const exception = 'exception' in outcome ? outcome.exception : null
    prepared(this.#db, `UPDATE exported_assets SET content = ?, exception = ? WHERE id = ? AND team_id = ?`).run(content, exception, id, project.id)
    return this.#read(project, id, false)
  }

  /** The caller's own assets in the project, newest first (PostHog lists only `created_by` the user). */
  list(project: Project, userId: number, query: ExportListQuery, page: Page): { count: number; results: ExportedAsset[] } {
    const where = [`team_id = @team`, `created_by = @user`, LIVE]
    const params: Record<string, unknown> = { team: project.id, user: userId, now: iso(this.#clock.now()) }
    if (query.contextPath) {
      // Django's icontains on the JSON's `path`: a LIKE without its wildcards, ASCII case folded.
      where.push(`instr(lower(json_extract(export_context, '$.path')), lower(@path)) > 0`)
      params.path = query.contextPath
    }
    if (query.exportFormat && (EXPORT_FORMATS as readonly string[]).includes(query.exportFormat)) {
      where.push(`export_format = @format`)
      params.format = query.exportFormat
    }
    const clause = where.join(' AND ')
    const { count } = prepared(this.#db, `SELECT count(*) AS count FROM exported_assets WHERE ${clause}`).get(params) as { count: number }
    const rows = prepared(this.#db, `SELECT ${COLUMNS} FROM exported_assets WHERE ${clause} ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset`).all({
      ...params,
      limit: page.limit,
      offset: page.offset,
    }) as ExportedAssetRow[]
    return { count, results: rows.map(toAsset) }
  }

  get(project: Project, id: number): ExportedAsset {
    return this.#read(project, id, true)
  }

  /** One asset of the project; `live`: not past its expiry (the one just written is answered either way). */
  #read(project: Project, id: number, live: boolean): ExportedAsset {
    const sql = `SELECT ${COLUMNS} FROM exported_assets WHERE id = @id AND team_id = @team${live ? ` AND ${LIVE}` : ''}`
    const row = prepared(this.#db, sql).get({ id, team: project.id, ...(live ? { now: iso(this.#clock.now()) } : {}) }) as ExportedAssetRow | undefined
    if (!row) throw new AppError('not_found')
    return toAsset(row)
  }

  /** The rendered content; 404 while there is none (PostHog's get_content_response). */
  content(project: Project, id: number): { asset: ExportedAsset; content: string } {
    const asset = this.get(project, id)
    const row = prepared(this.#db, `SELECT content FROM exported_assets WHERE id = ?`).get(id) as { content: string | null }
    if (row.content === null) throw new AppError('not_found', { detail: asset.exception ?? 'The export has no content.' })
    return { asset, content: row.content }
  }
}
