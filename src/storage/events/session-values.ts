/**
 * The session properties' values (SESSION_PROPERTIES) over one session's rows, in either store's SQL: the
 * stores name the pieces, this puts them together, so both compute the same thing.
 */
import type { BounceRule, SessionProperty } from './experiment-types.js'

export interface SessionSql {
  /** Whole seconds from the session's first event to its last. */
  seconds: string
  /** Its distinct events named. */
  distinctOf(...events: string[]): string
  /** Its distinct non-empty `$current_url` texts. */
  uniqueUrls: string
  /** 1 where `condition` holds, else 0. */
  oneIf(condition: string): string
}

export function sessionValue(property: SessionProperty, bounce: BounceRule, sql: SessionSql): string {
  switch (property) {
    case '$session_duration':
      return sql.seconds
    case '$pageview_count':
      return sql.distinctOf('$pageview')
    case '$autocapture_count':
      return sql.distinctOf('$autocapture')
    case '$screen_count':
      return sql.distinctOf('$screen')
    case '$num_uniq_urls':
      return sql.uniqueUrls
    case '$is_bounce': {
      const engaged =
        bounce.mode === 'uniq_page_screen_autocaptures'
          ? `${sql.distinctOf('$pageview', '$screen', '$autocapture')} = 1`
          : `${sql.distinctOf('$pageview')} = 1 AND ${sql.distinctOf('$autocapture')} = 0`
      return sql.oneIf(`${engaged} AND ${sql.seconds} < ${bounce.seconds}`)
    }
  }
}
