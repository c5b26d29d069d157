/**
 * The account objects PostHog's tools read first, in the shapes of its serializers: the user of
 * /api/users/@me/ (posthog/api/user.py UserSerializer), organisations (posthog/api/organization.py
 * OrganizationSerializer, posthog/api/shared.py OrganizationBasicSerializer), and a project as the team
 * it also is (posthog/api/project.py ProjectBackwardCompatSerializer, shared.py TeamBasicSerializer and
 * ProjectBasicSerializer). A skylark project is its one environment, so its team id is its project id.
 * Fields skylark has data for are answered from it; the rest carry what PostHog answers for an account
 * that never set them, or the truth for a feature skylark lacks (no invites, no recordings, no plugins).
 */
import { createHash } from 'node:crypto'
import type { Organization, Project, User } from './accounts.js'

/** The project's uuid: a name-based UUID (RFC 4122 version 5) under its organisation's uuid, stable without storing one. */
export function projectUuid(project: Pick<Project, 'id' | 'organization_id'>): string {
  const namespace = Buffer.from(project.organization_id.replace(/-/g, ''), 'hex')
  const hash = createHash('sha1').update(namespace).update(String(project.id)).digest()
  hash[6] = (hash[6] & 0x0f) | 0x50
  hash[8] = (hash[8] & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Django's slugify: ASCII, lower case, words joined by `-`. */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[^\x00-\x7f]/g, '')
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
}

/**
 * Organisation slugs, as PostHog gives them at creation: the name's slug, and for a later organisation whose
 * name slugs the same, that slug with a suffix (here the start of its id, so it never changes).
 */
export function organizationSlugs(all: readonly Organization[]): Map<string, string> {
  const taken = new Set<string>()
  const slugs = new Map<string, string>()
  for (const org of all) {
    const base = slugify(org.name) || 'organization'
    const slug = taken.has(base) ? `${base}-${org.id.slice(0, 8)}` : base
    taken.add(slug)
    slugs.set(org.id, slug)
  }
  return slugs
}

/** ProjectBasicSerializer. */
export function projectBasic(project: Project) {
  return { id: project.id, organization_id: project.organization_id, name: project.name }
}

export interface GroupTypeObject {
  group_type: string
  group_type_index: number
  name_singular: string | null
  name_plural: string | null
}

/** What persons.db knows of a project (nothing, when the server runs without it). */
export interface ProjectFacts {
  /** Whether events of the project were ingested (it has event definitions). */
  ingested(projectId: number): boolean
  groupTypes(projectId: number): readonly GroupTypeObject[]
}

/** TeamBasicSerializer, and ProjectBackwardCompatBasicSerializer (the project list): the same fields. */
export function teamBasic(project: Project, facts: ProjectFacts) {
  return {
    id: project.id,
    uuid: projectUuid(project),
    organization: project.organization_id,
    project_id: project.id,
    api_token: project.api_token,
    name: project.name,
    completed_snippet_onboarding: false,
    has_completed_onboarding_for: null,
    ingested_event: facts.ingested(project.id),
    is_demo: false,
    timezone: project.timezone,
    access_control: false,
  }
}


/**
 * ProjectBackwardCompatSerializer / TeamSerializer: what GET /api/projects/:id/ and /api/environments/:id/
 * answer, for a caller at `membershipLevel` in the project's organisation. Only `name`, `anonymize_ips`,
 * `timezone`, `test_account_filters` and `modifiers` (its bounce rate's two) are settings skylark keeps; the others answered say what skylark does
 * (no recordings, no web apps, no primary dashboard).
 */
export function projectObject(project: Project, membershipLevel: number | null, facts: ProjectFacts) {
  const groupTypes = facts.groupTypes(project.id)
  return {
    ...teamBasic(project, facts),
    product_description: null,
    created_at: project.created_at,
    updated_at: project.updated_at,
    effective_membership_level: membershipLevel,
    has_group_types: groupTypes.length > 0,
    group_types: groupTypes,
    live_events_token: null,
    app_urls: [],
    anonymize_ips: project.anonymize_ips === 1,
    cookieless_server_hash_mode: project.cookieless_server_hash_mode,
    test_account_filters: JSON.parse(project.test_account_filters) as unknown[],
    modifiers: JSON.parse(project.modifiers) as unknown,
    session_recording_opt_in: false,
    week_start_day: null,
    primary_dashboard: null,
    inject_web_apps: false,
    product_intents: [],
    is_pending_deletion: false,
    user_access_level: membershipLevel === null ? 'none' : membershipLevel >= 8 ? 'admin' : 'member',
  }
}

/** OrganizationBasicSerializer (the user's `organizations`). */
export function organizationBasic(org: Organization, slug: string, membershipLevel: number | null) {
  return {
    id: org.id,
    name: org.name,
    slug,
    logo_media_id: null,
    membership_level: membershipLevel,
    members_can_use_personal_api_keys: true,
    is_active: true,
    is_not_active_reason: null,
    is_pending_deletion: false,
  }
}

export interface OrganizationContext {
  facts: ProjectFacts
  slug: string
  membershipLevel: number | null
  memberCount: number
  /** The organisation's projects the caller may see. */
  projects: readonly Project[]
}

/** OrganizationSerializer. skylark never changes an organisation after creating it, so updated_at is created_at. */
export function organizationObject(org: Organization, ctx: OrganizationContext) {
  return {
    id: org.id,
    name: org.name,
    slug: ctx.slug,
    logo_media_id: null,
    created_at: org.created_at,
    updated_at: org.created_at,
    membership_level: ctx.membershipLevel,
    plugins_access_level: 0,
    teams: ctx.projects.map((p) => teamBasic(p, ctx.facts)),
    projects: ctx.projects.map(projectBasic),
    available_product_features: [],
    is_member_join_email_enabled: false,
    metadata: {},
    customer_id: null,
    enforce_2fa: null,
    members_can_invite: false,
    members_can_use_personal_api_keys: true,
    allow_publicly_shared_resources: false,
    member_count: ctx.memberCount,
    is_ai_data_processing_approved: null,
    default_experiment_stats_method: 'bayesian',
    default_role_id: null,
  }
}

export interface UserContext {
  facts: ProjectFacts
  /** The current organisation's object (organizationObject), or null without one. */
  organization: ReturnType<typeof organizationObject> | null
  organizations: ReadonlyArray<ReturnType<typeof organizationBasic>>
  /** The current project, or null without one. */
  team: Project | null
}

/**
 * UserSerializer, for the user a personal key belongs to. skylark users have no password, session, 2FA,
 * social login, invites or UI preferences, so those answer as for a user who never had them; a key is
 * calling, so the user has one (PostHog's requires_credential_review), and no member joined by invitation.
 */
export function userObject(user: User, ctx: UserContext) {
  return {
    date_joined: user.created_at,
    uuid: user.uuid,
    distinct_id: user.distinct_id,
    first_name: user.first_name,
    last_name: user.last_name,
    email: user.email,
    pending_email: null,
    is_email_verified: user.is_email_verified === 1,
    notification_settings: {},
    notification_locks: [],
    anonymize_data: false,
    allow_impersonation: false,
    toolbar_mode: 'toolbar',
    has_password: false,
    id: user.id,
    is_staff: false,
    is_impersonated: false,
    is_impersonated_until: null,
    is_impersonated_read_only: null,
    is_impersonated_reason: null,
    sensitive_session_expires_at: null,
    fresh_reauth_expires_at: null,
    team: ctx.team ? teamBasic(ctx.team, ctx.facts) : null,
    organization: ctx.organization,
    organizations: ctx.organizations,
    events_column_config: { active: 'DEFAULT' },
    is_2fa_enabled: false,
    has_social_auth: false,
    has_sso_enforcement: false,
    has_seen_product_intro_for: null,
    scene_personalisation: [],
    theme_mode: null,
    hedgehog_config: user.hedgehog_config ? (JSON.parse(user.hedgehog_config) as Record<string, unknown>) : null,
    allow_sidebar_suggestions: null,
    shortcut_position: null,
    role_at_organization: null,
    passkeys_enabled_for_2fa: false,
    hide_mcp_hints: false,
    ui_configuration: null,
    onboarding_skipped_at: null,
    onboarding_skipped_reason: null,
    onboarding_skipped_organization_id: null,
    onboarding_delegated_to_invite: null,
    onboarding_delegated_to_organization_id: null,
    onboarding_delegation_accepted_at: null,
    is_organization_first_user: ctx.organization === null ? null : true,
    active_realtime_notification_types: [],
    pending_invites: [],
    requires_credential_review: true,
  }
}
