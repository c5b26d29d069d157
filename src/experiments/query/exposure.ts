/**
 * Which events expose an entity to an experiment, read from its `exposure_criteria` as PostHog's
 * exposure_query_logic.py (`get_exposure_event_and_property`, `has_activation_config`) and
 * experiment_exposure_query_builder.py (`build_exposure_event_predicate`, `build_variant_property`) read it:
 *
 * - The default exposure, with no `exposure_config` or one naming `$feature_flag_called` or
 *   `$experiment_exposure`: that event (`$feature_flag_called` when none is named) with `$feature_flag` = the
 *   flag's key and the variant in `$feature_flag_response`. `$experiment_exposure` is PostHog's ingestion-side
 *   copy of a multivariate `$feature_flag_called`, carrying the same properties; PostHog makes it the default
 *   only for experiments started from 2026-09-01 in teams flagged into its rollout (`resolve_default_exposure_event`,
 *   a flag on PostHog's own instance) and skylark's ingestion makes no copy, so the default stays
 *   `$feature_flag_called` here, as for every team outside that rollout.
 * - A custom event (any other name): that event with the variant in `$feature/<flag key>`.
 * - An ActionsNode: the events of that action (none when it does not exist), the variant in `$feature/<flag key>`.
 * - The config's property filters narrow every kind, the default event's too (`event_or_action_to_filter`).
 * - Activation mode (`activation_config`, an event config or an ActionsNode, honoured only on the default
 *   exposure): an entity is exposed by its first activation event at or after its first flag exposure, that
 *   event giving its exposure time and breakdowns while the flag exposures still give its variant. The stores
 *   join the two (ExperimentEventsQuery's `activation`).
 *
 * The window is the experiment's for every kind. Pure: the caller looks actions up, and person and cohort
 * filters (person-filters.ts: the distinct ids of the persons they match).
 */
import { ValidationError } from '../../common/errors.js'
import { isPlainObject, type JsonObject } from '../../common/json.js'
import type { EventFilter, PropertyNode } from '../../storage/events/index.js'
import { propertyFilters, type PersonLookup } from '../metrics.js'
import { actionId, actionMatch, type ActionLookup } from './metric.js'

export const FLAG_CALLED = '$feature_flag_called'
export const EXPERIMENT_EXPOSURE = '$experiment_exposure'
const DEFAULT_EVENTS: readonly string[] = [FLAG_CALLED, EXPERIMENT_EXPOSURE]

export interface ExposurePlan {
  /** The exposure events, with the variant among `variants`. */
  filter: EventFilter
  variantProperty: string
  /** Activation mode's events, else null. */
  activation: EventFilter | null
}

interface Window {
  teamId: number
  after: number
  before: number
}

/** PostHog's runner validates the stored config with pydantic; one it can't read is its invalid setup. */
const unreadable = () => new ValidationError('invalid', 'Invalid experiment configuration detected. Please check your experiment setup.')

/** How a config's conditions are read: its actions, and its person and cohort filters (null: refused). */
interface Readers {
  actionById: ActionLookup
  person: PersonLookup | null
}

/** An event config's or ActionsNode's own conditions: the event or action, and its property filters. */
function configMatch(config: JsonObject, window: Window, { actionById, person }: Readers): EventFilter {
  const properties: PropertyNode[] = propertyFilters(config.properties, person)
  if (config.kind === 'ActionsNode') return { ...window, properties: [actionMatch(config.id, actionById), ...properties] }
  return { ...window, event: config.event as string, properties }
}

/** A config that is none, or an event config naming one of the default exposure events (`is_default_exposure_config`). */
function isDefault(config: JsonObject | null): boolean {
  return config === null || (config.kind !== 'ActionsNode' && typeof config.event === 'string' && DEFAULT_EVENTS.includes(config.event))
}

/** The activation config when it applies (`has_activation_config`), or a 400 when it is no config PostHog reads. */
function activationOf(criteria: JsonObject | null, exposure: JsonObject | null, window: Window, readers: Readers): EventFilter | null {
  const config = criteria?.activation_config
  if (config === undefined || config === null || !isDefault(exposure)) return null
  if (!isPlainObject(config)) throw unreadable()
  const readable = config.kind === 'ActionsNode' ? actionId(config.id) !== null : (config.kind ?? 'ExperimentEventExposureConfig') === 'ExperimentEventExposureConfig' && typeof config.event === 'string'
  if (!readable || (config.properties !== undefined && config.properties !== null && !Array.isArray(config.properties))) throw unreadable()
  return configMatch(config, window, readers)
}

export function exposureOf(
  criteria: JsonObject | null,
  flagKey: string,
  variants: readonly string[],
  window: Window,
  actionById: ActionLookup,
  person: PersonLookup | null = null,
): ExposurePlan {
  const readers = { actionById, person }
  const config = isPlainObject(criteria?.exposure_config) ? criteria.exposure_config : null
  const activation = activationOf(criteria, config, window, readers)
  if (config !== null && !isDefault(config) && (config.kind === 'ActionsNode' || typeof config.event === 'string')) {
    const variantProperty = `$feature/${flagKey}`
    const match = configMatch(config, window, readers)
    return { filter: { ...match, properties: [{ key: variantProperty, operator: 'exact', value: [...variants] }, ...match.properties!] }, variantProperty, activation }
  }
  const variantProperty = '$feature_flag_response'
  const own = config === null ? [] : propertyFilters(config.properties, person)
  const event = config?.event === EXPERIMENT_EXPOSURE ? EXPERIMENT_EXPOSURE : FLAG_CALLED
  const properties: PropertyNode[] = [{ key: variantProperty, operator: 'exact', value: [...variants] }, { key: '$feature_flag', operator: 'exact', value: flagKey }, ...own]
  return { filter: { ...window, event, properties }, variantProperty, activation }
}
