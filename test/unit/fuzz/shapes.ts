/**
 * Request shapes the fuzz tests start from: plausible flags, cohorts, experiments, capture events and
 * /decide bodies, with hostile values in the places a real client controls. `mutate()` then breaks them.
 */
import type { Rng } from './rng.js'
import { CATASTROPHIC_REGEXES, hostileString, randomJson, regexVictim } from './values.js'

export const OPERATORS = [
  'exact', 'is_not', 'is_set', 'is_not_set', 'icontains', 'not_icontains', 'icontains_multi', 'not_icontains_multi', 'regex',
  'not_regex', 'gt', 'gte', 'lt', 'lte', 'between', 'not_between', 'starts_with', 'not_starts_with', 'ends_with', 'not_ends_with',
  'semver_eq', 'semver_neq', 'semver_gt', 'semver_gte', 'semver_lt', 'semver_lte', 'semver_tilde', 'semver_caret',
  'semver_wildcard', 'is_date_exact', 'is_date_after', 'is_date_before', 'in', 'not_in', 'bogus',
]

function operand(rng: Rng, operator: string): unknown {
  if (operator.includes('regex')) return rng.pick(CATASTROPHIC_REGEXES)
  if (operator.startsWith('semver')) return rng.pick(['1.2.3', '1.2', '^1.0.0', '1.*', 'x', '99999999999999999999.0.0', hostileString(rng)])
  if (operator.startsWith('is_date')) return rng.pick(['-7d', '2024-01-01', '-1000000000y', 'tomorrow', '2024-02-30T25:00:00Z', hostileString(rng)])
  if (operator.includes('between')) return rng.pick([[1, 10], [10, 1], ['a', 'b'], [null], hostileString(rng)])
  if (operator.includes('multi') || operator === 'in' || operator === 'not_in') return [hostileString(rng), hostileString(rng)]
  return rng.chance(0.7) ? hostileString(rng) : randomJson(rng, 1)
}

export function propertyFilter(rng: Rng, cohortIds: readonly number[] = [], flagIds: readonly number[] = []): Record<string, unknown> {
  const type = rng.weighted<string>([[6, 'person'], [2, 'group'], [1, 'cohort'], [1, 'flag'], [1, 'event'], [1, hostileString(rng)]])
  const operator = rng.chance(0.9) ? rng.pick(OPERATORS.slice(0, -3)) : rng.pick(OPERATORS)
  const filter: Record<string, unknown> = {
    key: rng.chance(0.8) ? rng.pick(['email', 'plan', 'age', '$browser', 'name', '$geoip_country_code', 'fuzz_polluted', 'id']) : hostileString(rng),
    operator,
    value: operand(rng, operator),
    type,
  }
  if (type === 'group') filter.group_type_index = rng.pick([0, 1, 4, 5, -1, '0', null])
  if (type === 'cohort') {
    filter.key = 'id'
    filter.value = cohortIds.length > 0 && rng.chance(0.7) ? rng.pick(cohortIds) : rng.pick([0, -1, 999_999, '1', hostileString(rng)])
  }
  if (type === 'flag') {
    filter.key = flagIds.length > 0 && rng.chance(0.7) ? String(rng.pick(flagIds)) : hostileString(rng)
    filter.value = rng.pick([true, false, 'control', hostileString(rng)])
    filter.operator = 'flag_evaluates_to'
  }
  return filter
}

export function flagFilters(rng: Rng, cohortIds: readonly number[] = [], flagIds: readonly number[] = []): Record<string, unknown> {
  const variants = rng.chance(0.3)
    ? Array.from({ length: rng.range(1, 4) }, (_, i) => ({ key: rng.chance(0.9) ? `v${i}` : hostileString(rng), rollout_percentage: rng.chance(0.8) ? (i === 0 ? 100 : 0) : rng.pick([33.3, -5, 101]) }))
    : null
  const filters: Record<string, unknown> = {
    groups: Array.from({ length: rng.range(0, 3) }, () => ({
      properties: Array.from({ length: rng.range(0, 3) }, () => propertyFilter(rng, cohortIds, flagIds)),
      rollout_percentage: rng.chance(0.9) ? rng.pick([null, 0, 50, 100]) : rng.pick([100.5, -1, '50']),
      ...(variants && rng.chance(0.3) ? { variant: rng.pick(variants).key } : {}),
    })),
  }
  if (variants) filters.multivariate = { variants }
  if (rng.chance(0.3)) filters.payloads = { true: rng.pick(['{"a":1}', hostileString(rng), '[1,2']), ...(variants ? { v0: hostileString(rng) } : {}) }
  if (rng.chance(0.15)) filters.aggregation_group_type_index = rng.pick([0, 1, 4, 5, null, 'x'])
  if (rng.chance(0.1)) filters.super_groups = [{ properties: [propertyFilter(rng)], rollout_percentage: 100 }]
  if (rng.chance(0.1)) filters.holdout_groups = [{ properties: [], rollout_percentage: 10, variant: 'holdout-1' }]
  return filters
}

export function flagBody(rng: Rng, cohortIds: readonly number[] = [], flagIds: readonly number[] = []): Record<string, unknown> {
  return {
    key: rng.chance(0.85) ? `fuzz-${rng.int(1_000_000)}` : hostileString(rng),
    name: hostileString(rng),
    filters: flagFilters(rng, cohortIds, flagIds),
    active: rng.chance(0.8),
    ...(rng.chance(0.2) ? { ensure_experience_continuity: rng.chance(0.5) } : {}),
    ...(rng.chance(0.2) ? { tags: [hostileString(rng), 'a'] } : {}),
    ...(rng.chance(0.1) ? { rollback_conditions: randomJson(rng, 2) } : {}),
    ...(rng.chance(0.1) ? { is_remote_configuration: rng.chance(0.5) } : {}),
    ...(rng.chance(0.1) ? { version: rng.pick([0, 1, 2, -1, 'x']) } : {}),
    ...(rng.chance(0.1) ? { deleted: rng.chance(0.5) } : {}),
  }
}

export function cohortBody(rng: Rng, cohortIds: readonly number[] = []): Record<string, unknown> {
  const leaf = () =>
    rng.chance(0.8)
      ? propertyFilter(rng, cohortIds)
      : { type: 'behavioral', key: hostileString(rng), value: 'performed_event', event_type: 'events', time_value: rng.pick([30, -1, 'x']), time_interval: 'day' }
  return {
    name: hostileString(rng),
    description: hostileString(rng),
    is_static: rng.chance(0.1),
    filters: { properties: { type: rng.pick(['AND', 'OR', 'XOR']), values: [{ type: rng.pick(['AND', 'OR']), values: [leaf(), leaf()] }] } },
    ...(rng.chance(0.2) ? { groups: [{ properties: [propertyFilter(rng)] }] } : {}),
  }
}

export function experimentBody(rng: Rng, flagKeys: readonly string[] = []): Record<string, unknown> {
  return {
    name: hostileString(rng),
    description: hostileString(rng),
    feature_flag_key: flagKeys.length > 0 && rng.chance(0.3) ? rng.pick(flagKeys) : `exp-${rng.int(1_000_000)}`,
    ...(rng.chance(0.5) ? { start_date: rng.pick(['2024-01-01T00:00:00Z', '2024-13-01', hostileString(rng)]) } : {}),
    ...(rng.chance(0.3) ? { end_date: rng.pick(['2023-01-01T00:00:00Z', '2030-01-01', hostileString(rng)]) } : {}),
    parameters: rng.chance(0.5)
      ? { feature_flag_variants: [{ key: 'control', rollout_percentage: 50 }, { key: rng.chance(0.9) ? 'test' : hostileString(rng), rollout_percentage: 50 }] }
      : randomJson(rng, 2),
    filters: rng.chance(0.5)
      ? { events: [{ id: hostileString(rng), order: 0 }, { id: '$pageview', order: 1, properties: [propertyFilter(rng)] }], insight: rng.pick(['FUNNELS', 'TRENDS', 'x']) }
      : randomJson(rng, 2),
    secondary_metrics: rng.chance(0.3) ? [{ name: hostileString(rng), filters: { events: [{ id: 'e' }], insight: 'TRENDS' } }] : randomJson(rng, 1),
    ...(rng.chance(0.2) ? { archived: rng.chance(0.5) } : {}),
    ...(rng.chance(0.3)
      ? {
          feature_flag: rng.chance(0.7)
            ? {
                filters: {
                  multivariate: { variants: [{ key: rng.pick(['control', 'Control', hostileString(rng)]), split_percent: 50 }, { key: 'test', rollout_percentage: rng.int(120) }] },
                  groups: [{ properties: rng.chance(0.8) ? [] : [propertyFilter(rng)], rollout_percentage: rng.pick([rng.int(120), null, hostileString(rng)]) }],
                },
                ensure_experience_continuity: rng.pick([true, 'yes', null, hostileString(rng)]),
              }
            : randomJson(rng, 2),
        }
      : {}),
    ...(rng.chance(0.3)
      ? {
          metrics: rng.chance(0.7)
            ? [
                {
                  kind: rng.pick(['ExperimentMetric', 'ExperimentTrendsQuery', hostileString(rng)]),
                  metric_type: rng.pick(['mean', 'funnel', 'ratio', 'retention', 'constructor', hostileString(rng)]),
                  source: rng.chance(0.8) ? { kind: 'EventsNode', event: hostileString(rng) } : randomJson(rng, 1),
                  series: [{ kind: rng.pick(['EventsNode', 'ActionsNode']), event: 'e', id: rng.int(10) }],
                  ...(rng.chance(0.5) ? { uuid: rng.pick(['dup', hostileString(rng)]) } : {}),
                },
              ]
            : randomJson(rng, 2),
          metrics_secondary: rng.chance(0.5) ? [{ kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'x' }, uuid: 'dup' }] : randomJson(rng, 1),
        }
      : {}),
    ...(rng.chance(0.2)
      ? {
          stats_config: rng.pick([{ method: 'frequentist' }, { baseline_variant_key: hostileString(rng) }, randomJson(rng, 1)]),
          exposure_criteria: rng.chance(0.5) ? { filterTestAccounts: rng.pick([true, 'no']), exposure_config: randomJson(rng, 1) } : randomJson(rng, 2),
          excluded_variants: rng.pick([['test'], [hostileString(rng)], randomJson(rng, 1)]),
          running_time_calculation: randomJson(rng, 1),
          primary_metrics_ordered_uuids: rng.pick([[], ['dup'], null, randomJson(rng, 1)]),
          conclusion: rng.pick(['won', hostileString(rng), null]),
        }
      : {}),
  }
}

export function captureEvent(rng: Rng, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const event = rng.weighted<string>([[5, '$pageview'], [2, '$identify'], [1, '$create_alias'], [1, '$groupidentify'], [1, '$merge_dangerously'], [2, hostileString(rng)]])
  return {
    event,
    distinct_id: rng.chance(0.8) ? `fuzz-${rng.int(500)}` : hostileString(rng),
    timestamp: rng.pick([undefined, '2025-01-01T00:00:00Z', 'not a date', 1735689600000, -1, 1e20]),
    properties: {
      $current_url: hostileString(rng),
      $set: { email: hostileString(rng), [hostileString(rng).slice(0, 30)]: hostileString(rng) },
      $set_once: { first: hostileString(rng) },
      $groups: { company: hostileString(rng) },
      $group_type: rng.pick(['company', hostileString(rng)]),
      $group_key: hostileString(rng),
      $group_set: { name: hostileString(rng) },
      // Unique-ish, so merges pair random persons instead of collapsing everyone into one giant person.
      alias: `${hostileString(rng).slice(0, 100)}-${rng.int(1e9)}`,
      $anon_distinct_id: `${hostileString(rng).slice(0, 100)}-${rng.int(1e9)}`,
      $process_person_profile: rng.pick([undefined, true, false]),
      [`$feature/${hostileString(rng).slice(0, 20)}`]: hostileString(rng),
    },
    ...extra,
  }
}

export function decideBody(rng: Rng, token: string): Record<string, unknown> {
  return {
    api_key: token,
    distinct_id: rng.chance(0.9) ? `fuzz-${rng.int(500)}` : hostileString(rng),
    ...(rng.chance(0.5) ? { $anon_distinct_id: hostileString(rng) } : {}),
    groups: rng.chance(0.5) ? { company: hostileString(rng), [hostileString(rng).slice(0, 20)]: rng.int(100) } : randomJson(rng, 1),
    person_properties: { email: rng.chance(0.5) ? regexVictim(rng) : hostileString(rng), plan: hostileString(rng), age: rng.pick([1, '2', null, {}]) },
    group_properties: { company: { name: regexVictim(rng) } },
    ...(rng.chance(0.1) ? { flag_keys_to_evaluate: [hostileString(rng)] } : {}),
    ...(rng.chance(0.1) ? { geoip_disable: rng.pick([true, 'yes']) } : {}),
    ...(rng.chance(0.05) ? { disable_flags: true } : {}),
  }
}

/** An early access feature body: its fields, often of the wrong type, shape or size, and flags to link. */
export function earlyAccessFeatureBody(rng: Rng, flagIds: readonly number[] = [], roleIds: readonly string[] = []): Record<string, unknown> {
  const stages = ['draft', 'concept', 'alpha', 'beta', 'general-availability', 'archived']
  const body: Record<string, unknown> = {
    name: rng.chance(0.8) ? `feature ${rng.int(1000)}` : rng.pick([hostileString(rng), '', 'x'.repeat(201), null, 7]),
    stage: rng.chance(0.8) ? rng.pick(stages) : rng.pick([hostileString(rng), null, 1, true, '']),
  }
  if (rng.chance(0.5)) body.description = rng.chance(0.8) ? hostileString(rng) : randomJson(rng, 1)
  if (rng.chance(0.4)) {
    body.documentation_url = rng.pick(['https://docs.example.com/x?y=1#z', 'javascript:alert(1)', 'http://[::1]:99999/', `https://${'a'.repeat(70)}.com/`, `https://x.io/${'a'.repeat(800)}`, hostileString(rng)])
  }
  if (rng.chance(0.4)) body.payload = randomJson(rng, 2)
  if (rng.chance(0.4)) {
    body.feature_flag_id = flagIds.length > 0 && rng.chance(0.6) ? rng.pick(flagIds) : rng.pick([0, -1, '12', 1.5, true, null, 2 ** 60, hostileString(rng)])
  }
  if (rng.chance(0.3)) {
    const role = roleIds.length > 0 ? rng.pick(roleIds) : 'x'
    body.assignee = rng.pick([null, { type: 'user', id: rng.pick([1, '1', 'x', 999_999, null]) }, { type: 'role', id: rng.pick([role, 'x', 1]) }, { type: hostileString(rng), id: 1 }, hostileString(rng), []])
  }
  if (rng.chance(0.2)) body.rollout_to_all = randomJson(rng, 1)
  return body
}

/**
 * A scheduled change: usually one the server takes, due now or soon so the applier meets its payload (which is
 * checked only then), with hostile operations, values, variants and dates among them.
 */
export function scheduledChangeBody(rng: Rng, flagIds: readonly number[] = [], cohortIds: readonly number[] = []): Record<string, unknown> {
  const variants = () => rng.pick([[{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }], [{ key: 'a', rollout_percentage: 'x' }], [1], 'x', null])
  const value = () =>
    rng.pick([
      rng.pick([true, false, 'true', 1, null]),
      { groups: rng.pick([flagFilters(rng, cohortIds, flagIds).groups, 'x', [1], null]) },
      { variants: variants(), payloads: rng.pick([{ a: '1' }, { z: 1 }, [], null]) },
      randomJson(rng, 2),
    ])
  const operation = rng.chance(0.85) ? rng.pick(['update_status', 'add_release_condition', 'update_variants']) : rng.pick([hostileString(rng), null, 1, ['update_status']])
  const payload = rng.chance(0.85) ? { operation, value: value() } : randomJson(rng, 2)
  const when = rng.chance(0.8) ? new Date(Date.now() + rng.pick([-60_000, 0, 200, 2_000])).toISOString() : rng.pick(['2025-13-01', hostileString(rng), 0, null, '9999-12-31T23:59:59Z'])
  const body: Record<string, unknown> = {
    record_id: flagIds.length > 0 && rng.chance(0.8) ? rng.pick(flagIds) : rng.pick(['0', 'x', -1, 2 ** 60, null, hostileString(rng)]),
    model_name: rng.chance(0.9) ? 'FeatureFlag' : rng.pick(['Survey', null, hostileString(rng)]),
    payload,
    scheduled_at: when,
  }
  if (rng.chance(0.3)) body.is_recurring = rng.pick([true, false, 'yes', null])
  if (rng.chance(0.3)) body.recurrence_interval = rng.pick(['daily', 'weekly', 'monthly', 'yearly', 'hourly', null, 1])
  if (rng.chance(0.15)) body.end_date = rng.pick([null, '2099-01-01T00:00:00Z', '2000-01-01', hostileString(rng)])
  // croniter's corners too: every minute (due again soon), no date ever, a random minute, a never-matching nth.
  if (rng.chance(0.15)) body.cron_expression = rng.pick([null, '', '0 9 * * 1-5', '* * * * *', '0 0 31 2 *', 'R * * * *', '0 0 13 * 5#3', '60 * * * *', '@daily', hostileString(rng)])
  return body
}
