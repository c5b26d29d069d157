/**
 * Management: projects, users, personal API keys, scopes, roles (and, in their own folders, flags, cohorts,
 * early access features, scheduled changes, annotations, actions, exports and the activity log). Owns management.db. Imports: common/, storage/sqlite, config types. Never http/.
 */
import type { Clock } from '../common/clock.js'
import type { Db } from '../storage/sqlite/database.js'
import { Accounts } from './accounts.js'
import { ActivityLog } from './activity-log.js'
import { PersonalKeys } from './api-keys.js'
import { Actions } from './actions/index.js'
import { Annotations } from './annotations/index.js'
import { Exports } from './exports/index.js'
import { Authenticator } from './auth.js'
import { Cohorts } from './cohorts/index.js'
import { Dashboards } from './dashboards.js'
import { EarlyAccessFeatures } from './early-access/index.js'
import { FeatureFlags, FlagRoleAccess } from './feature-flags/index.js'
import { ProjectDirectory } from './project-directory.js'
import { Roles } from './roles.js'
import { ScheduledChanges } from './scheduled-changes/index.js'

export { Accounts, MembershipLevel, userSummary, type Organization, type Project, type User, type UserSummary } from './accounts.js'
export {
  ActivityLog,
  activityPageEnvelope,
  changesBetween,
  jsonEqual,
  parseActivityPage,
  type ActivityEntry,
  type ActivityEntryInput,
  type ActivityPage,
  type ActivityPageEnvelope,
  type ActivityPageRequest,
  type Change,
} from './activity-log.js'
export {
  Cohorts,
  addCsvMembers,
  addPersonsToStaticCohort,
  cohortCondition,
  cohortId,
  CohortCalculator,
  behaviouralReading,
  cohortCount,
  cohortLeaves,
  cohortMembership,
  createCohort,
  csvMembers,
  evaluatedCohortCondition,
  evaluatedCohortsNamed,
  performedReader,
  removePersonFromStaticCohort,
  type CalculationObject,
  type CohortActor,
  type CohortById,
  type CohortCount,
  type CohortListQuery,
  type CohortObject,
  type CohortRecord,
  type CohortSource,
  type BehaviouralReading,
  type PerformedReader,
  type StaticCohortMembers,
} from './cohorts/index.js'
export {
  activeFlagDefinitions,
  canEditFlag,
  FeatureFlags,
  flagStatus,
  flagStatusReason,
  FlagRoleAccess,
  liveFlagDefinitions,
  minimalFlag,
  normaliseTags,
  rolloutInfo,
  type FeatureFlagObject,
  type FeatureFlagRecord,
  type FlagDefinition,
  type MinimalFlag,
  type RoleAccessObject,
} from './feature-flags/index.js'
export {
  organizationBasic,
  organizationObject,
  organizationSlugs,
  projectObject,
  projectUuid,
  teamBasic,
  userObject,
  type ProjectFacts,
} from './account-objects.js'
export { bounceRule, parseProjectPatch, requireProjectAdmin } from './project-settings.js'
export { PersonalKeys, hashPersonalKey, maskPersonalKey } from './api-keys.js'
export { Authenticator, requireScope, type Principal } from './auth.js'
export { bootstrap, type BootstrapResult } from './bootstrap.js'
export { ProjectDirectory, type ProjectRef } from './project-directory.js'
export { Dashboards, type DashboardObject } from './dashboards.js'
export { Annotations, type AnnotationObject } from './annotations/index.js'
export { Exports, toExportObject, filenameOf, type ExportedAsset, type ExportListQuery } from './exports/index.js'
export { Actions, actionCondition, chainCondition, compileAction, stepEvents, stepRunnable, storesCanRun, type ActionObject, type ActionRecord, type ActionStep, type EventTest, type MatchableEvent } from './actions/index.js'
export { EarlyAccessFeatures, type EarlyAccessFeatureObject, type PublicEarlyAccessFeature } from './early-access/index.js'
export { ManagementFlagSource, type ProjectFlagData } from './flag-source.js'
export { createProjectResolver, type ProjectResolver, type ResolvedProject } from './project-resolver.js'
export { Roles, type RoleObject } from './roles.js'
export { ScheduledChangeApplier, ScheduledChanges, type ScheduledChangeObject } from './scheduled-changes/index.js'
export { ALL_SCOPES, hasScope, isValidScope, type Scope } from './scopes.js'

export function createManagement(db: Db, clock: Clock) {
  const accounts = new Accounts(db, clock)
  const keys = new PersonalKeys(db, clock)
  const roles = new Roles(db, accounts, clock)
  const activity = new ActivityLog(db, clock)
  const cohorts = new Cohorts(db, accounts, clock, activity)
  const dashboards = new Dashboards(db, accounts, clock)
  const featureFlags = new FeatureFlags({ db, clock, accounts, roles, cohorts, activity, dashboards })
  return {
    db,
    accounts,
    keys,
    roles,
    activity,
    cohorts,
    featureFlags,
    flagRoleAccess: new FlagRoleAccess(db, clock, featureFlags, roles),
    earlyAccess: new EarlyAccessFeatures({ db, clock, accounts, featureFlags }),
    scheduledChanges: new ScheduledChanges({ db, clock, accounts, featureFlags }),
    annotations: new Annotations({ db, clock, accounts, activity }),
    exports: new Exports(db, clock),
    actions: new Actions({ db, clock, accounts, activity }),
    dashboards,
    auth: new Authenticator(accounts, keys),
    projects: new ProjectDirectory(db),
  }
}

export type Management = ReturnType<typeof createManagement>
