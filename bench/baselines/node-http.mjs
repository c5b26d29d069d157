// Baseline: plain node:http that reads the whole body into one buffer and answers 200 {"status":1} without
// work. Any method, any path. Prints {"port": N} on stdout once listening. Usage: node node-http.mjs [port]
import { createServer } from 'node:http'

const OK = '{"status":1}'
const server = createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    Buffer.concat(chunks)
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': OK.length })
    res.end(OK)
  })
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n')
})
