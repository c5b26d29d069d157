/**
 * Helpers shared by the reliability tests: a raw HTTP client over node:http (any body, any header, keep-alive
 * agents, per-request timeouts, no retries), the process memory of the server, every registered route (re-exported), and
 * the stored events of the embedded store.
 */
import http from 'node:http'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'

export { registeredRoutes } from '../../helpers/routes.js'

export interface RawRequest {
  method: string
  path: string
  headers?: Record<string, string>
  body?: Buffer | string
  timeoutMs?: number
  agent?: http.Agent
  /** Source address to connect from (127.0.0.x), to look like another client. */
  localAddress?: string
}

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
  ms: number
  /** The request went out on a kept-alive connection that had already carried a request. */
  reusedSocket: boolean
}

export class RequestFailed extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly reusedSocket: boolean,
    readonly ms: number,
  ) {
    super(message)
  }
}

/** One HTTP request; rejects with RequestFailed (code ETIMEDOUT, ECONNRESET, ECONNREFUSED, …). */
export function rawRequest(baseUrl: string, req: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl)
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers }
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body)
    const outgoing = http.request({
      host: url.hostname,
      port: url.port,
      method: req.method,
      path: req.path,
      headers,
      agent: req.agent ?? false,
      localAddress: req.localAddress,
    })
    let settled = false
    let previous = ''
    let socketState: { lastRequest?: string; lastAnswerAt?: number } = {}
    outgoing.on('socket', (socket) => {
      socketState = socket as unknown as typeof socketState
      previous = `${socketState.lastRequest ?? ''}, answered ${socketState.lastAnswerAt === undefined ? '?' : Math.round(performance.now() - socketState.lastAnswerAt)} ms before`
      socketState.lastRequest = `${req.method} ${req.path.slice(0, 80)} (${req.body?.length ?? 0} bytes)`
    })
    const fail = (code: string, message: string) => {
      if (settled) return
      settled = true
      outgoing.destroy()
      reject(new RequestFailed(code, `${message}${outgoing.reusedSocket ? ` (reused socket; previous request ${previous})` : ''}`, outgoing.reusedSocket, performance.now() - started))
    }
    const timer = setTimeout(() => fail('ETIMEDOUT', `no answer within ${req.timeoutMs} ms`), req.timeoutMs ?? 30_000)
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      fail(error.code ?? 'ERROR', error.message)
    })
    outgoing.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer)
        fail(error.code ?? 'ERROR', error.message)
      })
      res.on('end', () => {
        socketState.lastAnswerAt = performance.now()
        clearTimeout(timer)
        if (settled) return
        settled = true
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: performance.now() - started, reusedSocket: outgoing.reusedSocket })
      })
    })
    outgoing.end(req.body)
  })
}

/**
 * True when `body` is the contract's error envelope: `{type, code, detail, attr}` with the right types, `attr`
 * left out exactly where the contract's table says "absent".
 */
export function isEnvelope(body: Buffer): boolean {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false
    const attrAbsent = parsed.code === 'invalid_api_key' || parsed.code === 'invalid_personal_api_key'
    return (
      typeof parsed.type === 'string' && typeof parsed.code === 'string' && typeof parsed.detail === 'string' &&
      (attrAbsent ? !('attr' in parsed) : 'attr' in parsed && (parsed.attr === null || typeof parsed.attr === 'string'))
    )
  } catch {
    return false
  }
}

/** Resident and peak resident memory of a process, in bytes (Linux /proc). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
  return { rss: kb('VmRSS'), peak: kb('VmHWM') }
}

export const MB = 1024 * 1024

export { until } from '../../helpers/wait.js'

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Rows of the embedded event store (read-only connection; the server keeps writing). */
export function storedEvents(dataDir: string, where = '1 = 1', params: unknown[] = []): Array<{ uuid: string; team_id: number; event: string; distinct_id: string }> {
  const db = new Database(join(dataDir, 'events.db'), { readonly: true, fileMustExist: true })
  try {
    db.pragma('busy_timeout = 5000')
    return db.prepare(`SELECT uuid, team_id, event, distinct_id FROM events WHERE ${where}`).all(...params) as Array<{ uuid: string; team_id: number; event: string; distinct_id: string }>
  } finally {
    db.close()
  }
}

