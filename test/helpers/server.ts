/**
 * Starts the real server (the compiled CLI, `skylark serve`) on a free port against a temp data folder,
 * and speaks HTTP to it. Tests get the project and an all-scopes personal key created beforehand through
 * the same code the `bootstrap` command uses.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { systemClock } from '../../src/common/clock.js'
import { bootstrap, createManagement, type BootstrapResult } from '../../src/management/index.js'
import { openManagementDb, prepareDataDir } from '../../src/storage/index.js'
import { tempDir } from './temp.js'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const CLI = join(ROOT, 'bin', 'skylark.js')

export interface ServerOptions {
  env?: Record<string, string>
  /** Reuse a data folder (restart tests); a new temp folder otherwise. */
  dataDir?: string
  /** Skip creating the default project before start (to test first-run behaviour). */
  fresh?: boolean
  /** Node flags before the CLI (`--cpu-prof` may not go in NODE_OPTIONS). */
  nodeArgs?: string[]
}

export interface TestServer {
  readonly baseUrl: string
  readonly port: number
  readonly dataDir: string
  readonly proc: ChildProcess
  /** Default project and a personal key with every scope (absent when `fresh`). */
  readonly boot: BootstrapResult
  readonly stdout: string[]
  readonly stderr: string[]
  /** JSON request helper: returns status, headers and parsed body (or raw text). */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>
  /** Authenticated management request with the all-scopes key. */
  api(method: string, path: string, body?: unknown, key?: string): Promise<TestResponse>
  /** SIGTERM and wait for exit; resolves the exit code. */
  stop(): Promise<number | null>
  /** SIGKILL and wait. */
  kill(): Promise<void>
  /** Remove the data folder (call after stop). */
  cleanup(): void
}

export interface RequestOptions {
  body?: unknown
  rawBody?: Buffer | string
  headers?: Record<string, string>
}

export interface TestResponse {
  status: number
  headers: Headers
  text: string
  body: any
}

export { tempDir }

export function bootstrapDataDir(dataDir: string): BootstrapResult {
  const paths = prepareDataDir(dataDir)
  const db = openManagementDb(paths)
  try {
    const management = createManagement(db, systemClock)
    return bootstrap(management.accounts, management.keys, { createKey: true })
  } finally {
    db.close()
  }
}

export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir()
  const boot = options.fresh
    ? ({ organization_id: '', project_id: 0, project_api_key: '', project_secret_api_key: '', personal_api_key: '', created: false } as BootstrapResult)
    : bootstrapDataDir(dataDir)
  const proc = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const stdout: string[] = []
  const stderr: string[] = []
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  createInterface({ input: proc.stderr! }).on('line', (line) => stderr.push(line))
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stdout.join('\n')}\n${stderr.join('\n')}`)), 30_000)
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      stdout.push(line)
      if (line.includes('"msg":"listening"')) {
        clearTimeout(timer)
        resolve(JSON.parse(line).port as number)
      }
    })
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code} before listening:\n${stdout.join('\n')}\n${stderr.join('\n')}`))
    })
  })
  const baseUrl = `http://127.0.0.1:${port}`

  const request = async (method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...opts.headers }
    let body: Buffer | string | undefined
    if (opts.rawBody !== undefined) body = opts.rawBody
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await fetch(baseUrl + path, { method, headers, body })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text === '' ? null : JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, text, body: parsed }
  }

  return {
    baseUrl,
    port,
    dataDir,
    proc,
    boot,
    stdout,
    stderr,
    request,
    api: (method, path, body, key = boot.personal_api_key ?? '') =>
      request(method, path, { body, headers: { authorization: `Bearer ${key}` } }),
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM')
      return exited
    },
    kill: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
      await exited
    },
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
  }
}

/** Starts a server whose stop and data-folder removal are registered as `t`'s teardown. */
export async function serverFor(t: { teardown(fn: () => unknown): void }, options: ServerOptions = {}): Promise<TestServer> {
  const server = await startServer(options)
  t.teardown(async () => {
    await server.stop()
    server.cleanup()
  })
  return server
}

/** Runs the compiled CLI and returns its exit code and output. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    proc.stdout.on('data', (d) => (stdout += d))
    proc.stderr.on('data', (d) => (stderr += d))
    proc.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}
