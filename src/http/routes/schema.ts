/**
 * GET /api/schema/ — the OpenAPI 3.1 document of the management API, built once at start from the same
 * operation tables the routes are registered from and the same schemas the validators and serializers
 * compile. Public, like PostHog's.
 */
import { openApiDocument, type OperationDoc } from '../../schemas/openapi.js'
import { rawJson } from '../reply.js'
import type { Router } from '../router.js'
import { COHORT_COMPONENTS, COHORT_OPERATIONS } from './cohorts.js'
import { FEATURE_FLAG_COMPONENTS, FEATURE_FLAG_OPERATIONS } from './feature-flags.js'

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
  return openApiDocument(
    {
      title: 'skylark management API',
      version: '1',
      description: "PostHog-compatible project management API. Authenticate with `Authorization: Bearer <personal API key>`.",
    },
    [...FEATURE_FLAG_OPERATIONS, ...COHORT_OPERATIONS, SCHEMA_OPERATION],
    { ...FEATURE_FLAG_COMPONENTS, ...COHORT_COMPONENTS },
  )
}

export function registerSchemaRoutes(router: Router): void {
  const body = JSON.stringify(managementApiDocument())
  router.add('get', SCHEMA_OPERATION.path, () => rawJson(200, body), { maxBodyBytes: 0, cors: true })
}
