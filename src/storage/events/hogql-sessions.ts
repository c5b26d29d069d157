/**
 * PostHog's `sessions` table of a HogQL query, read here as a query of the events grouped by `$session_id`
 * (hogql-query.ts plans it as a subquery of FROM), so both stores compute it as any other query and nothing is kept
 * apart from the events. Its columns are those of PostHog's sessions (v2) that the events give: the session's
 * first and last times, duration, counts of pageviews, autocaptures and screens (distinct events, as PostHog's uniq
 * states count them), distinct URLs, the entry and exit URL and path and the entry referrer and UTM tags (the first and
 * last event in time that has one), and `$is_bounce` by the project's bounce rule, as experiments' session properties
 * compute them (session-values.ts).
 */
import type { BounceRule } from './experiment-types.js'

/** A column the query names apart from the field it reads (a column reading its own name would read its alias). */
export const SESSION_RENAMED: ReadonlyMap<string, string> = new Map([['_last_distinct_id', 'distinct_id']])

/** The entry (first in time) and exit (last) values of event properties. */
const ENTRIES: ReadonlyArray<readonly [string, string]> = [
  ['$entry_current_url', 'argMin(properties.$current_url, timestamp)'],
  ['$end_current_url', 'argMax(properties.$current_url, timestamp)'],
  ['$exit_current_url', 'argMax(properties.$current_url, timestamp)'],
  ['$entry_pathname', 'argMin(properties.$pathname, timestamp)'],
  ['$end_pathname', 'argMax(properties.$pathname, timestamp)'],
  ['$exit_pathname', 'argMax(properties.$pathname, timestamp)'],
  ['$entry_referring_domain', 'argMin(properties.$referring_domain, timestamp)'],
  ['$entry_referrer', 'argMin(properties.$referrer, timestamp)'],
  ...['source', 'campaign', 'medium', 'term', 'content'].map((tag) => [`$entry_utm_${tag}`, `argMin(properties.utm_${tag}, timestamp)`] as const),
]

/** The HogQL text of the sessions of the events, `$is_bounce` by `bounce`. */
export function sessionsQuery(bounce: BounceRule): string {
  const engaged = bounce.mode === 'uniq_page_screen_autocaptures' ? "uniqIf(uuid, event in ('$pageview', '$screen', '$autocapture')) = 1" : '$pageview_count = 1 AND $autocapture_count = 0'
  const columns = [
    ['session_id', '$session_id'],
    ['id', '$session_id'],
    ['_last_distinct_id', 'argMax(distinct_id, timestamp)'],
    ['$start_timestamp', 'min(timestamp)'],
    ['$end_timestamp', 'max(timestamp)'],
    ['$session_duration', "dateDiff('second', min(timestamp), max(timestamp))"],
    ['duration', "dateDiff('second', min(timestamp), max(timestamp))"],
    ['$pageview_count', "uniqIf(uuid, event = '$pageview')"],
    ['$autocapture_count', "uniqIf(uuid, event = '$autocapture')"],
    ['$screen_count', "uniqIf(uuid, event = '$screen')"],
    ['$num_uniq_urls', "uniqIf(properties.$current_url, properties.$current_url != '')"],
    ...ENTRIES,
    ['$is_bounce', `if(${engaged} AND $session_duration < ${bounce.seconds}, 1, 0)`],
  ]
  return `SELECT ${columns.map(([name, expr]) => `${expr} AS ${name}`).join(', ')} FROM events WHERE $session_id != '' GROUP BY $session_id`
}
