/**
 * Personal API key scopes, PostHog style: `<object>:<read|write>`, `*` for everything, and `:write`
 * implies `:read`. Keys carry a list of scopes; each management route names the one it needs.
 */

export const SCOPE_OBJECTS = [
  'action',
  'activity_log',
  'annotation',
  'cohort',
  'dashboard',
  'early_access_feature',
  'event_definition',
  'experiment',
  'experiment_holdout',
  'experiment_saved_metric',
  'export',
  'feature_flag',
  'group',
  'logs',
  'metrics',
  'organization',
  'person',
  'project',
  'property_definition',
  'query',
  'user',
] as const

export type ScopeObject = (typeof SCOPE_OBJECTS)[number]
export type Scope = `${ScopeObject}:${'read' | 'write'}`

export const ALL_SCOPES: readonly Scope[] = SCOPE_OBJECTS.flatMap((o) => [`${o}:read`, `${o}:write`] as Scope[])

export function isValidScope(value: string): boolean {
  return value === '*' || (ALL_SCOPES as readonly string[]).includes(value)
}

export function hasScope(granted: readonly string[], required: Scope): boolean {
  if (granted.includes('*') || granted.includes(required)) return true
  if (required.endsWith(':read')) return granted.includes(required.slice(0, -5) + ':write')
  return false
}
