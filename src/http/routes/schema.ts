/**
 * GET /api/schema/ — the OpenAPI 3.1 document of the management API, built once at start from the same
 * operation tables the routes are registered from and the same schemas the validators and serializers
 * compile. Public, like PostHog's.
 */
import { openApiDocument, type OperationDoc } from '../../schemas/openapi.js'
import { rawJson } from '../reply.js'
import type { Router } from '../router.js'
import { ACTION_COMPONENTS, ACTION_OPERATIONS } from './actions.js'
import { ANNOTATION_COMPONENTS, ANNOTATION_OPERATIONS } from './annotations.js'
import { EXPORT_COMPONENTS, EXPORT_OPERATIONS } from './exports.js'
import { COHORT_PERSONS_COMPONENTS, COHORT_PERSONS_OPERATIONS } from './cohort-persons.js'
import { COHORT_COMPONENTS, COHORT_OPERATIONS } from './cohorts.js'
import { EARLY_ACCESS_FEATURE_COMPONENTS, EARLY_ACCESS_FEATURE_OPERATIONS } from './early-access-features.js'
import { EXPERIMENT_HOLDOUT_COMPONENTS, EXPERIMENT_HOLDOUT_OPERATIONS } from './experiment-holdouts.js'
import { EXPERIMENT_COMPONENTS, EXPERIMENT_OPERATIONS } from './experiments.js'
import { SAVED_METRIC_COMPONENTS, SAVED_METRIC_OPERATIONS } from './experiment-saved-metrics.js'
import { FEATURE_FLAG_COMPONENTS, FEATURE_FLAG_OPERATIONS } from './feature-flags.js'
import { DASHBOARD_COMPONENTS, DASHBOARD_OPERATIONS } from './dashboards.js'
import { DEFINITION_COMPONENTS, DEFINITION_OPERATIONS } from './definitions.js'
import { environmentOperations } from './environments.js'
import { EVENT_COMPONENTS, EVENT_OPERATIONS } from './events.js'
import { GROUP_COMPONENTS, GROUP_OPERATIONS } from './groups.js'
import { LOG_COMPONENTS, LOG_OPERATIONS } from './logs.js'
import { METRIC_COMPONENTS, METRIC_OPERATIONS } from './metrics.js'
import { FLAG_EVALUATION_COMPONENTS, FLAG_EVALUATION_OPERATIONS } from './flag-evaluation.js'
import { REMOTE_CONFIG_COMPONENTS, REMOTE_CONFIG_OPERATIONS } from './remote-config.js'
import { ORGANIZATION_COMPONENTS, ORGANIZATION_OPERATIONS } from './organizations.js'
import { PERSON_COMPONENTS, PERSON_OPERATIONS } from './persons.js'
import { PROJECT_COMPONENTS, PROJECT_OPERATIONS } from './projects.js'
import { QUERY_COMPONENTS, QUERY_OPERATIONS } from './query.js'
import { USER_COMPONENTS, USER_OPERATIONS } from './users.js'
import { SCHEDULED_CHANGE_COMPONENTS, SCHEDULED_CHANGE_OPERATIONS } from './scheduled-changes.js'

export const SCHEMA_OPERATION: OperationDoc = {
  operationId: 'schema_retrieve',
  method: 'get',
  path: '/api/schema/',
  summary: 'This document.',
  tag: 'schema',
  scope: null,
  responses: { 200: null },
}

export function managementApiDocument(): Record<string, unknown> {
  const operations = [
    ...USER_OPERATIONS,
    ...ORGANIZATION_OPERATIONS,
    ...PROJECT_OPERATIONS,
    ...FEATURE_FLAG_OPERATIONS,
    ...FLAG_EVALUATION_OPERATIONS,
    ...DASHBOARD_OPERATIONS,
    ...REMOTE_CONFIG_OPERATIONS,
    ...COHORT_OPERATIONS,
    ...COHORT_PERSONS_OPERATIONS,
    ...EARLY_ACCESS_FEATURE_OPERATIONS,
    ...SCHEDULED_CHANGE_OPERATIONS,
    ...ANNOTATION_OPERATIONS,
    ...EXPORT_OPERATIONS,
    ...ACTION_OPERATIONS,
    ...EXPERIMENT_OPERATIONS,
    ...EXPERIMENT_HOLDOUT_OPERATIONS,
    ...SAVED_METRIC_OPERATIONS,
    ...QUERY_OPERATIONS,
    ...EVENT_OPERATIONS,
    ...PERSON_OPERATIONS,
    ...GROUP_OPERATIONS,
    ...DEFINITION_OPERATIONS,
    ...LOG_OPERATIONS,
    ...METRIC_OPERATIONS,
    SCHEMA_OPERATION,
  ]
  return openApiDocument(
    {
      title: 'skylark management API',
      version: '1',
      description: "PostHog-compatible project management API. Authenticate with `Authorization: Bearer <personal API key>`.",
    },
    [...operations, ...environmentOperations(operations)],
    {
      ...FEATURE_FLAG_COMPONENTS,
      ...FLAG_EVALUATION_COMPONENTS,
      ...DASHBOARD_COMPONENTS,
      ...REMOTE_CONFIG_COMPONENTS,
      ...COHORT_COMPONENTS,
      ...COHORT_PERSONS_COMPONENTS,
      ...EARLY_ACCESS_FEATURE_COMPONENTS,
      ...SCHEDULED_CHANGE_COMPONENTS,
      ...ANNOTATION_COMPONENTS,
      ...EXPORT_COMPONENTS,
      ...ACTION_COMPONENTS,
      ...EXPERIMENT_COMPONENTS,
      ...QUERY_COMPONENTS,
      ...EXPERIMENT_HOLDOUT_COMPONENTS,
      ...SAVED_METRIC_COMPONENTS,
      ...EVENT_COMPONENTS,
      ...PERSON_COMPONENTS,
      ...GROUP_COMPONENTS,
      ...DEFINITION_COMPONENTS,
      ...LOG_COMPONENTS,
      ...METRIC_COMPONENTS,
      ...USER_COMPONENTS,
      ...ORGANIZATION_COMPONENTS,
      ...PROJECT_COMPONENTS,
    },
  )
}

export function registerSchemaRoutes(router: Router): void {
  const body = JSON.stringify(managementApiDocument())
  router.add('get', SCHEMA_OPERATION.path, () => rawJson(200, body), { maxBodyBytes: 0, cors: true })
}
