/**
 * Loads the native uWebSockets.js build directly. The package's own entry point silently falls back to a
 * pure-JS server that is an order of magnitude slower; skylark would rather not start than run on it.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type * as Uws from '@trufflesuite/uws-js-unofficial'

export type UwsModule = typeof Uws
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial'

export class NativeUwsUnavailable extends Error {
  constructor(binary: string, cause: unknown) {
    super(
      `The native uWebSockets.js build could not be loaded from ${binary}: ${String(cause)}. ` +
        'skylark refuses to start on the pure-JS fallback of @trufflesuite/uws-js-unofficial because it is ' +
        'several times slower. Run Node 20 (ABI 115) on linux-x64 or linux-arm64 with glibc 2.36 or newer.',
    )
    this.name = 'NativeUwsUnavailable'
  }
}

export function loadNativeUws(): UwsModule {
  const require = createRequire(import.meta.url)
  const packageDir = dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json'))
  const binary = join(
    packageDir,
    'binaries',
    `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`,
  )
  try {
    return require(binary) as UwsModule
  } catch (error) {
    throw new NativeUwsUnavailable(binary, error instanceof Error ? error.message : error)
  }
}
