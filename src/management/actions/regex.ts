/**
 * Which regexes an action step may hold: ones skylark's safe engine compiles as re2 reads them and that need none of
 * the backtracking features (look-around, backreferences) re2 lacks, since ClickHouse runs them with re2 (PostHog's
 * serializer refuses what re2 cannot compile). A stored step with another one (written before this check, or a
 * `tag_name`, which PostHog does not check) matches nothing on every store instead of failing the query.
 */
import { compileSearchRegex } from '../../flags/index.js'

export function storesCanRun(pattern: string): boolean {
  const compiled = compileSearchRegex(pattern)
  return compiled !== null && !compiled.fancy
}
