/**
 * Which regexes an action step may hold: ones skylark's safe engine compiles and that need none of the
 * backtracking features (look-around, backreferences) re2 lacks, since ClickHouse runs them with re2 (PostHog's
 * serializer refuses what re2 cannot compile). A stored step with another one (written before this check, or a
 * `tag_name`, which PostHog does not check) matches nothing on every store instead of failing the query.
 */
import { compileSearchRegex } from '../../flags/index.js'
import { parseRegex } from '../../flags/regex/parse.js'

export function storesCanRun(pattern: string): boolean {
  try {
    return !parseRegex(pattern).fancy && compileSearchRegex(pattern) !== null
  } catch {
    return false
  }
}
