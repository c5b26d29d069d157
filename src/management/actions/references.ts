/**
 * What refers to an action, as PostHog's `find_action_references` finds it (products/actions/backend/api/
 * action.py): live experiments whose metrics, filters, parameters or settings hold an ActionsNode with its id,
 * an `actionId`, an `actions`-typed entity or an `actions` list item with it, then live cohorts with a
 * behavioural filter on it; 50 at most. The id counts as a number or as its text, as PostHog's JSON paths
 * compare it. Skylark has no insights or destinations, the other kinds PostHog lists.
 */
import { isPlainObject, tryParseJson } from '../../common/json.js'
import { prepared, type Db } from '../../storage/sqlite/database.js'

export interface ActionReference {
  type: 'experiment' | 'cohort'
  id: string
  name: string
  url: string
  created_at: string
  created_by_id: number | null
}

const CAP = 50
/** PostHog's `_EXPERIMENT_JSON_FIELDS` that skylark's experiments have. */
const EXPERIMENT_FIELDS = ['metrics', 'metrics_secondary', 'filters', 'parameters', 'exposure_criteria', 'stats_config', 'scheduling_config'] as const

type Row = { id: number; name: string; created_at: string; created_by_id: number | null } & Record<string, unknown>

const sameId = (value: unknown, id: number) => value === id || value === String(id)

/** Any node of the value, itself included, for which `test` holds. */
function anyNode(value: unknown, test: (node: Record<string, unknown>) => boolean): boolean {
  if (Array.isArray(value)) return value.some((item) => anyNode(item, test))
  if (!isPlainObject(value)) return false
  return test(value) || Object.values(value).some((item) => anyNode(item, test))
}

function experimentRefers(field: unknown, id: number): boolean {
  const topLevel = isPlainObject(field) && Array.isArray(field.actions) && field.actions.some((a) => isPlainObject(a) && sameId(a.id, id))
  return (
    topLevel ||
    anyNode(field, (n) => (n.kind === 'ActionsNode' && sameId(n.id, id)) || sameId(n.actionId, id) || (n.type === 'actions' && sameId(n.id, id)))
  )
}

const cohortRefers = (filters: unknown, id: number): boolean =>
  anyNode(filters, (n) => (n.event_type === 'actions' && sameId(n.key, id)) || (n.seq_event_type === 'actions' && sameId(n.seq_event, id)))

const parsed = (text: unknown): unknown => (typeof text === 'string' ? tryParseJson(text) : null)

interface Referrer {
  reference: ActionReference
  refers(id: number): boolean
}

/** The project's live experiments, then its live cohorts, each read once. */
export function referrers(db: Db, teamId: number): Referrer[] {
  const experiments = prepared(db, `SELECT id, name, created_at, created_by_id, ${EXPERIMENT_FIELDS.join(', ')} FROM experiments WHERE team_id = ? AND deleted = 0 ORDER BY id`).all(teamId) as Row[]
  const cohorts = prepared(db, 'SELECT id, name, created_at, created_by_id, filters FROM cohorts WHERE team_id = ? AND deleted = 0 ORDER BY id').all(teamId) as Row[]
  const base = (type: ActionReference['type'], row: Row, path: string) => ({
    type,
    id: String(row.id),
    name: row.name || 'Unnamed',
    url: `/${path}/${row.id}`,
    created_at: row.created_at,
    created_by_id: row.created_by_id,
  })
  return [
    ...experiments.map((e) => {
      const fields = EXPERIMENT_FIELDS.map((field) => parsed(e[field]))
      return { reference: base('experiment', e, 'experiments'), refers: (id: number) => fields.some((f) => experimentRefers(f, id)) }
    }),
    ...cohorts.map((c) => {
      const filters = parsed(c.filters)
      return { reference: base('cohort', c, 'cohorts'), refers: (id: number) => cohortRefers(filters, id) }
    }),
  ]
}

/** What refers to the action, 50 at most (PostHog's cap). */
export const findActionReferences = (all: readonly Referrer[], id: number): ActionReference[] =>
  all.filter((r) => r.refers(id)).slice(0, CAP).map((r) => r.reference)

/** How many things refer to each action (PostHog's `include_reference_count`, uncapped). */
export const countActionReferences = (all: readonly Referrer[], id: number): number => all.filter((r) => r.refers(id)).length
