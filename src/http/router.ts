/**
 * A small router: exact paths are a Map lookup (the capture hot path), patterns with `:params` are
 * matched segment by segment. A trailing slash is optional everywhere, as PostHog's SDKs use both.
 * A path that exists with another method gives 405 rather than 404.
 */
import type { Handler, Reply, RouteOptions } from './types.js'

/** A browser GET's preflight: 204 with what the route allows (HEAD is GET without the body). */
const BROWSER_GET_OPTIONS: Reply = { status: 204, headers: { Allow: 'GET, OPTIONS, HEAD' } }

export interface Route {
  readonly method: string
  readonly pattern: string
  readonly handler: Handler
  readonly options: RouteOptions
}

export type Match =
  | { kind: 'route'; route: Route; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' }

interface PatternEntry {
  segments: string[]
  routes: Map<string, Route>
}

function trimSlashes(path: string): string {
  let end = path.length
  while (end > 1 && path.charCodeAt(end - 1) === 47) end--
  return end === path.length ? path : path.slice(0, end)
}

export class Router {
  readonly #exact = new Map<string, Map<string, Route>>()
  readonly #patterns: PatternEntry[] = []

  add(method: string | string[], pattern: string, handler: Handler, options: RouteOptions): this {
    const methods = Array.isArray(method) ? method : [method]
    const key = trimSlashes(pattern)
    for (const m of methods) {
      const route: Route = { method: m, pattern, handler, options }
      if (!key.includes(':') && !key.includes('*')) {
        let byMethod = this.#exact.get(key)
        if (!byMethod) this.#exact.set(key, (byMethod = new Map()))
        byMethod.set(m, route)
        continue
      }
      const segments = key.split('/').slice(1)
      let entry = this.#patterns.find((p) => p.segments.join('/') === segments.join('/'))
      if (!entry) {
        this.#patterns.push((entry = { segments, routes: new Map() }))
        // Most specific first: `/flags/local_evaluation` must win over `/flags/:id` whatever the order of add().
        this.#patterns.sort((a, b) => compareSpecificity(a.segments, b.segments))
      }
      entry.routes.set(m, route)
    }
    return this
  }

  /** A public GET that pages on any origin call (remote config, posthog-js's files and lists): CORS, OPTIONS 204. */
  addBrowserGet(pattern: string, handler: Handler): this {
    const options = { maxBodyBytes: 0, cors: true, label: pattern }
    return this.add('get', pattern, handler, options).add('options', pattern, () => BROWSER_GET_OPTIONS, options)
  }

  match(method: string, rawPath: string): Match {
    const path = trimSlashes(rawPath)
    const exact = this.#exact.get(path)
    if (exact) return pick(exact, method, {})
    const parts = path.split('/').slice(1)
    for (const entry of this.#patterns) {
      const params = matchSegments(entry.segments, parts)
      if (params) return pick(entry.routes, method, params)
    }
    return { kind: 'not_found' }
  }

  routes(): Route[] {
    const all: Route[] = []
    for (const byMethod of this.#exact.values()) all.push(...byMethod.values())
    for (const entry of this.#patterns) all.push(...entry.routes.values())
    return all
  }
}

function pick(routes: Map<string, Route>, method: string, params: Record<string, string>): Match {
  const route = routes.get(method) ?? (method === 'head' ? routes.get('get') : undefined)
  if (route) return { kind: 'route', route, params }
  return { kind: 'method_not_allowed', allowed: [...routes.keys()].map((m) => m.toUpperCase()) }
}

/** Orders patterns so that, at the first differing position, a literal beats `:param` beats `*`. */
function compareSpecificity(a: string[], b: string[]): number {
  const rank = (seg: string | undefined) => (seg === undefined ? 3 : seg === '*' ? 2 : seg.startsWith(':') ? 1 : 0)
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const diff = rank(a[i]) - rank(b[i])
    if (diff !== 0) return diff
  }
  return 0
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  const last = pattern[pattern.length - 1]
  const wildcard = last === '*'
  if (wildcard ? parts.length < pattern.length : parts.length !== pattern.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < pattern.length; i++) {
    const seg = pattern[i]
    if (seg === '*') {
      params['*'] = parts.slice(i).join('/')
      return params
    }
    if (seg.charCodeAt(0) === 58) {
      let value: string
      try {
        value = decodeURIComponent(parts[i])
      } catch {
        return null
      }
      if (value === '') return null
      params[seg.slice(1)] = value
    } else if (seg !== parts[i]) {
      return null
    }
  }
  return params
}
