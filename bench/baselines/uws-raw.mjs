// Baseline: uWebSockets.js (the same native build skylark loads) that reads the whole body into one buffer
// sized from Content-Length, exactly as src/http/server.ts does, and answers 200 {"status":1} without work.
// Any method, any path. Prints {"port": N} on stdout once listening. Usage: node uws-raw.mjs [port]
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)
const packageDir = dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json'))
const uws = require(join(packageDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`))

const OK = '{"status":1}'
const app = uws.App()
app.any('/*', (res, req) => {
  const declared = Number(req.getHeader('content-length') || 0)
  let aborted = false
  res.onAborted(() => (aborted = true))
  let body = declared > 0 ? Buffer.allocUnsafe(declared) : null
  const chunks = []
  let size = 0
  res.onData((chunk, isLast) => {
    const n = chunk.byteLength
    if (body !== null && size + n <= body.length) body.set(new Uint8Array(chunk), size)
    else if (n > 0) chunks.push(Buffer.from(new Uint8Array(chunk)))
    size += n
    if (!isLast || aborted) return
    if (body === null) body = Buffer.concat(chunks, size)
    res.cork(() => {
      res.writeStatus('200 OK')
      res.writeHeader('Content-Type', 'application/json')
      res.end(OK)
    })
  })
})
app.listen('127.0.0.1', Number(process.argv[2] ?? 0), (socket) => {
  if (!socket) {
    process.stderr.write('uws-raw: could not listen\n')
    process.exit(1)
  }
  process.stdout.write(JSON.stringify({ port: uws.us_socket_local_port(socket) }) + '\n')
})
