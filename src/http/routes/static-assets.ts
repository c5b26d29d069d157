/**
 * `GET /static/<name>.js` and `/static/<version>/<name>.js`: the JavaScript files of the installed posthog-js
 * build (node_modules/posthog-js/dist; the package is licensed "Apache-2.0 AND MIT"), as PostHog's assets host
 * serves them. PostHog's HTML snippet loads `<api_host>/static/array.js`, and posthog-js loads its extensions
 * (surveys, recorder, …) from the API host: first `/static/<its version>/<name>.js`, then
 * `/static/<name>.js?v=<its version>` when that fails.
 *
 * Only names that are files of that dist folder are served: the request names a key of a list read once, never
 * a path, so `..` or an encoded slash can't reach another file. Each file is read on its first request and kept.
 *
 * Another version than the installed one is 404 under `/static/<version>/`: that path promises exactly that
 * build (PostHog caches it for a year), and an extension of another build may not fit the `__PosthogExtensions__`
 * of the page's posthog-js. The SDK's fallback, the unversioned path, gets the installed build whatever `?v=`
 * says, as PostHog's `/static/<name>.js` is its current build; it is cached for minutes, so an upgrade of
 * skylark's posthog-js reaches browsers soon.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { AppError } from '../../common/errors.js'
import type { Router } from '../router.js'
import type { Handler, Reply } from '../types.js'

const VERSIONED_CACHE = 'public, max-age=31536000, immutable'
const CURRENT_CACHE = 'public, max-age=300'

export interface PosthogJsBuild {
  version: string
  dir: string
}

/** The installed posthog-js: a runtime dependency, so its absence is a broken install and fails at boot. */
export function installedPosthogJs(): PosthogJsBuild {
  const manifest = createRequire(import.meta.url).resolve('posthog-js/package.json')
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }
  return { version, dir: join(dirname(manifest), 'dist') }
}

export function registerStaticAssetRoutes(router: Router, build: PosthogJsBuild = installedPosthogJs()): void {
  const names = new Set(readdirSync(build.dir).filter((name) => name.endsWith('.js')))
  const files = new Map<string, Promise<Buffer>>()

  const serve = async (name: string, cacheControl: string): Promise<Reply> => {
    if (!names.has(name)) throw new AppError('not_found', { detail: 'No such posthog-js file.' })
    let file = files.get(name)
    if (!file) {
      files.set(name, (file = readFile(join(build.dir, name))))
      // A failed read is not kept: the next request tries again.
      file.catch(() => files.delete(name))
    }
    return { status: 200, headers: { 'Content-Type': 'application/javascript', 'Cache-Control': cacheControl }, body: await file }
  }

  const current: Handler = (ctx) => serve(ctx.params.file, CURRENT_CACHE)
  const versioned: Handler = (ctx) => {
    if (ctx.params.version !== build.version) {
      throw new AppError('not_found', { detail: `This server serves posthog-js ${build.version} only.` })
    }
    return serve(ctx.params.file, VERSIONED_CACHE)
  }
  router.addBrowserGet('/static/:file', current).addBrowserGet('/static/:version/:file', versioned)
}
