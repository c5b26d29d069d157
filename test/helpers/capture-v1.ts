/** A capture v1 request's headers as posthog-node 5.70.0 sends them (its request clock is 2026-03-19T14:30:00Z). */
import type { V1Headers } from '../../src/ingestion/capture-v1/request.js'

export const V1_HEADERS: Readonly<V1Headers> = Object.freeze({
  authorization: 'Bearer phc_test',
  contentType: 'application/json',
  userAgent: 'posthog-node/5.70.0',
  sdkInfo: 'posthog-node/5.70.0',
  attempt: '1',
  requestId: '019cf0a2-7b1c-7d3e-9f00-123456789abc',
  requestTimestamp: '2026-03-19T14:30:00.000Z',
})
