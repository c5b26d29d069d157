// The native uWebSockets.js build skylark loads (src/http/uws.ts), for the uWS baselines, and their listen:
// `{"port": N}` on stdout once listening, which bench/lib/servers.mjs waits for.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)
const packageDir = dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json'))
export const uws = require(join(packageDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`))

export function listenAndReport(app, name, port) {
  app.listen('127.0.0.1', port, (socket) => {
    if (!socket) {
      process.stderr.write(`${name}: could not listen\n`)
      process.exit(1)
    }
    process.stdout.write(JSON.stringify({ port: uws.us_socket_local_port(socket) }) + '\n')
  })
}
