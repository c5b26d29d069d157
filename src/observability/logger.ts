/**
 * Structured JSON logs (pino) on stdout. Secrets never reach a log line: callers log key masks, and the
 * redaction list below is a second guard for fields that might carry a credential by mistake.
 */
import { pino, type Logger } from 'pino'
import type { LogLevel } from '../config/index.js'

export type { Logger } from 'pino'

export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'api_key',
  'token',
  'personal_api_key',
  'project_api_key',
  'secret',
  '*.authorization',
  '*.api_key',
  '*.token',
]

/**
 * Logged with `{ thread, threadId }` when the service starts a worker thread (and again if one restarts):
 * `threadId` is the number V8 puts in the thread's `--cpu-prof` file name, so a profile can be named by role.
 */
export const THREAD_STARTED = 'thread started'

/** Logs a `thread` (its role) starting, given its id: the one shape bench/lib/profile.mjs reads. */
export const logThreadStart =
  (logger: Logger, thread: string) =>
  (threadId: number): void =>
    logger.info({ thread, threadId }, THREAD_STARTED)

export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'skylark' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  )
}
