/**
 * CORS for the public endpoints, as PostHog capture answers browsers: echo the Origin, allow credentials,
 * mirror the requested headers on preflight. Nothing is added for requests without an Origin.
 */
import type { RequestContext } from './types.js'

const DEFAULT_ALLOWED_HEADERS = 'X-Requested-With, Content-Type, Content-Encoding, traceparent, request-id'

export function corsHeaders(origin: string): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Credentials': 'true',
    Vary: 'Origin',
  }
}

export function preflightHeaders(ctx: RequestContext): Record<string, string> {
  const requested = ctx.headers['access-control-request-headers']
  return {
    ...corsHeaders(ctx.headers.origin ?? '*'),
    'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
    'Access-Control-Allow-Headers': requested && /^[\w\s,-]+$/.test(requested) ? requested : DEFAULT_ALLOWED_HEADERS,
    'Access-Control-Max-Age': '86400',
  }
}
