/** Messages between the main thread and the ingest consumer thread. */
import type { Lane } from '../types.js'

export type ToConsumer =
  | { type: 'durable'; lane: Lane; segment: number; offset: number }
  | { type: 'stop' }
  /** Shutdown stopped waiting: give up retrying the event store; the spool keeps the rows. */
  | { type: 'abandon' }

export interface ConsumerStats {
  stored: number
  personsProcessed: number
  deadLettered: number
  /** Cookieless events dropped (the project's setting off, no user agent, …: persons/cookieless-ingest.ts). */
  cookielessDropped: number
  sinkErrors: number
  sinkUp: boolean
  /** Durable spool bytes not read yet (LaneReader.backlogBytes over the lanes); the rows waiting for the sink are `queuedRows`. */
  backlogBytes: number
  queuedRows: number
  lastError: string | null
}

export type FromConsumer =
  | { type: 'ready' }
  | { type: 'stats'; stats: ConsumerStats }
  | { type: 'freed'; bytes: number }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; msg: string; fields?: Record<string, unknown> }
  | { type: 'stopped' }

/**
 * The consumer thread's stats sender: passes stats on only when they differ from the last ones sent. The thread
 * reads its stats twice a second, and each message wakes the request thread, also on an idle server.
 */
export function statsWhenChanged(send: (stats: ConsumerStats) => void): (stats: ConsumerStats) => void {
  let sent = ''
  return (stats) => {
    const json = JSON.stringify(stats)
    if (json === sent) return
    sent = json
    send(stats)
  }
}
