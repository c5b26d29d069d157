// The floor of a durable /capture/ on this machine, the suite's third /capture/ baseline: uWebSockets.js reading
// the body as uws-raw.mjs does, JSON.parse of it, and 200 only once a group write of the bodies (O_DSYNC,
// libuv's thread pool, the next group gathering while one runs) has returned: what skylark's spool does, with
// nothing else. FILL=1 writes at offsets into a file zero-filled beforehand, as skylark's spool does
// (bench/lib/servers.mjs starts it so), otherwise it appends. By hand:
//
//   FILL=1 node bench/baselines/uws-durable.mjs 8124 /tmp/floor.seg &
//   wrk -t1 -c50 -d6s -s bench/wrk/post.lua http://127.0.0.1:8124/capture/ -- BODIES_FILE POST 1
import { closeSync, constants, fdatasyncSync, openSync, writeSync, writev } from 'node:fs'
import { listenAndReport, uws } from './uws-native.mjs'

const FILL_BYTES = 512 * 1024 * 1024
const fill = process.env.FILL === '1'
const path = process.argv[3] ?? '/tmp/uws-durable.seg'
if (fill) {
  // 16 KB writes and one sync, as the spool fills (src/ingestion/spool/writer.ts): larger writes leave large
  // page-cache folios that every later small write dirties whole.
  const zeros = Buffer.alloc(16 * 1024)
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC)
  for (let at = 0; at < FILL_BYTES; at += zeros.length) writeSync(fd, zeros, 0, zeros.length, at)
  fdatasyncSync(fd)
  closeSync(fd)
}
const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_DSYNC | (fill ? 0 : constants.O_APPEND | constants.O_TRUNC))
let position = 0
let bodies = []
let waiting = []
let writing = false

function answer(exchanges) {
  for (const x of exchanges) {
    if (x.aborted) continue
    x.res.cork(() => {
      x.res.writeStatus('200 OK')
      x.res.writeHeader('Content-Type', 'application/json')
      x.res.end('{"status":1}')
    })
  }
}

function write() {
  if (writing || bodies.length === 0) return
  const group = bodies
  const exchanges = waiting
  bodies = []
  waiting = []
  writing = true
  const at = fill ? position : null
  for (const b of group) position += b.length
  writev(fd, group, at, () => {
    writing = false
    answer(exchanges)
    write()
  })
}

const app = uws.App()
app.any('/*', (res, req) => {
  const body = Buffer.allocUnsafe(Number(req.getHeader('content-length') || 0))
  const exchange = { res, aborted: false }
  res.onAborted(() => (exchange.aborted = true))
  let size = 0
  res.onData((chunk, isLast) => {
    body.set(new Uint8Array(chunk), size)
    size += chunk.byteLength
    if (!isLast) return
    JSON.parse(body.latin1Slice(0, size))
    bodies.push(body.subarray(0, size))
    waiting.push(exchange)
    if (bodies.length === 1) setImmediate(write)
  })
})
listenAndReport(app, 'uws-durable', Number(process.argv[2] ?? 0))
