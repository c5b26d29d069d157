/**
 * `require` for packages a server may never use, loaded by their first user instead of at start: @clickhouse/client
 * on the embedded store, piscina until a task needs the pool, tldts until a cookieless event or request. Each cost
 * ≈20–60 ms of start CPU in every thread whose modules imported it. The packages ship CommonJS, so the load stays
 * synchronous where it is asked for.
 */
import { createRequire } from 'node:module'

export const requireOnUse = createRequire(import.meta.url)
