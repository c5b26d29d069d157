/**
 * What a feature does to its flag, as pure functions: the flag's key from the feature's name (Django's
 * `slugify`) and its filters for each stage (PostHog's `_set_enrollment_filters`).
 */
import type { JsonObject } from '../../common/json.js'

// Python's `\s` on text also matches the ASCII separators U+001C–U+001F; JavaScript's does not.
const NOT_SLUG = /[^\w\s\x1c-\x1f-]/g
const SEPARATORS = /[-\s\x1c-\x1f]+/g

/** Django's `slugify` (allow_unicode off): ASCII letters, digits, `_` and single hyphens, lower-case. */
export function slugify(value: string): string {
  const ascii = value.normalize('NFKD').replace(/[^\x00-\x7f]/g, '')
  return ascii.toLowerCase().replace(NOT_SLUG, '').replace(SEPARATORS, '-').replace(/^[-_]+|[-_]+$/g, '')
}

/** The condition of a flag PostHog creates for a feature: nobody, but for the enrolled when the stage serves them. */
export const NEW_FLAG_GROUPS: readonly JsonObject[] = Object.freeze([{ properties: [], rollout_percentage: 0, variant: null }])

/**
 * The flag's filters with enrollment on (`true`: people who opted in get the flag, whatever the conditions say)
 * or off (`null`), and any `overrides`; the legacy `super_groups` condition that enrollment replaced is dropped.
 */
export function withEnrollment(filters: JsonObject, enrolled: true | null, overrides: JsonObject = {}): JsonObject {
  const next: JsonObject = { ...filters, feature_enrollment: enrolled, ...overrides }
  delete next.super_groups
  return next
}

/** A general-availability release to everyone: one condition at 100%, enrollment off. */
export const rolledOutToAll = (filters: JsonObject): JsonObject => withEnrollment(filters, null, { groups: [{ properties: [], rollout_percentage: 100 }] })
