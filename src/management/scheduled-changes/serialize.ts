/** The scheduled change object the API answers: PostHog's ScheduledChangeSerializer fields, in its order. */
import type { UserSummary } from '../accounts.js'
import type { ScheduledChangeRecord } from './record.js'
import { formatFailureReason } from './schedule.js'

/** The record less what PostHog keeps to itself (the failure count, the creator's id), plus its answered fields. */
export type ScheduledChangeObject = Omit<ScheduledChangeRecord, 'failure_count' | 'created_by_id'> & {
  created_by: UserSummary | null
}

export function toScheduledChangeObject(r: ScheduledChangeRecord, createdBy: UserSummary | null): ScheduledChangeObject {
  return {
    id: r.id,
    team_id: r.team_id,
    record_id: r.record_id,
    model_name: r.model_name,
    payload: r.payload,
    scheduled_at: r.scheduled_at,
    executed_at: r.executed_at,
    failure_reason: formatFailureReason(r.failure_reason),
    created_at: r.created_at,
    created_by: createdBy,
    updated_at: r.updated_at,
    is_recurring: r.is_recurring,
    recurrence_interval: r.recurrence_interval,
    cron_expression: r.cron_expression,
    last_executed_at: r.last_executed_at,
    end_date: r.end_date,
    timezone: r.timezone,
  }
}
