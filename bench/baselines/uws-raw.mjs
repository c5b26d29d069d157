// Baseline: uWebSockets.js (the same native build skylark loads) that reads the whole body into one buffer
// sized from Content-Length, exactly as src/http/server.ts does, and answers 200 {"status":1} without work.
// Any method, any path. Prints {"port": N} on stdout once listening. Usage: node uws-raw.mjs [port]
import { listenAndReport, uws } from './uws-native.mjs'

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
listenAndReport(app, 'uws-raw', Number(process.argv[2] ?? 0))
