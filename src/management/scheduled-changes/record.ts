/** A scheduled change as stored (one row of `scheduled_changes`) and as the domain handles it. */

/** PostHog's `ScheduledChange.AllowedModels`: only flags. */
export const MODEL_NAMES = ['FeatureFlag'] as const
/** PostHog's `RecurrenceInterval`, in its order. */
export const RECURRENCE_INTERVALS = ['daily', 'weekly', 'monthly', 'yearly'] as const
/** PostHog's `OperationType`. */
export const OPERATIONS = ['update_status', 'add_release_condition', 'update_variants'] as const

export type RecurrenceInterval = (typeof RECURRENCE_INTERVALS)[number]

export interface ScheduledChangeRecord {
  id: number
  team_id: number
  record_id: string
  model_name: string
  /** Any JSON, as PostHog's JSONField keeps it; checked only when applied. */
  payload: unknown
  scheduled_at: string
  executed_at: string | null
  /** PostHog's stored form: JSON with the error and its retry state (see failure.ts), or null. */
  failure_reason: string | null
  failure_count: number
  is_recurring: boolean
  recurrence_interval: RecurrenceInterval | null
  /** A five-field cron expression (in `timezone`), the other way to recur; '' is kept as given and means none. */
  cron_expression: string | null
  last_executed_at: string | null
  end_date: string | null
  /**
   * The project's timezone when the change was made (PostHog's ScheduledChange.timezone): the wall clock its
   * cron expression reads, kept when the project's timezone changes later.
   */
  timezone: string
  created_by_id: number | null
  created_at: string
  updated_at: string
}

export interface ScheduledChangeRow extends Omit<ScheduledChangeRecord, 'payload' | 'is_recurring'> {
  payload: string
  is_recurring: number
}

export const toRecord = (row: ScheduledChangeRow): ScheduledChangeRecord => ({ ...row, payload: JSON.parse(row.payload) as unknown, is_recurring: row.is_recurring === 1 })

export const toRow = (r: ScheduledChangeRecord): ScheduledChangeRow => ({ ...r, payload: JSON.stringify(r.payload ?? null), is_recurring: r.is_recurring ? 1 : 0 })

/** Whether the row carries a recurrence, an interval or a cron expression (PostHog's `has_recurrence_config`). */
export const hasRecurrence = (r: Pick<ScheduledChangeRecord, 'recurrence_interval' | 'cron_expression'>): boolean => r.recurrence_interval !== null || !!r.cron_expression

/**
 * PostHog's pause: a row that keeps its recurrence but is no longer recurring. The applier skips it; setting
 * `is_recurring` back resumes it.
 */
export const isPaused = (r: Pick<ScheduledChangeRecord, 'is_recurring' | 'recurrence_interval' | 'cron_expression'>): boolean => !r.is_recurring && hasRecurrence(r)
