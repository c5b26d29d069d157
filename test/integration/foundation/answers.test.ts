// Answers reach their own requests: in order on a kept-alive connection that pipelines, and on many
// connections at once. uWS closes a connection whose next request arrives while an answer is still
// pending (it refuses asynchronous pipelining), so every answer a client may pipeline behind is written
// before its handler returns. Answers to POST /decide are batched (written after the event loop has read
// everything, src/http/server.ts): a client must not pipeline behind a POST (RFC 9112 §9.3.2), and a
// GET /decide?data=… stays pipelinable; HTTP_BATCH_ANSWERS=false answers them at once for clients that do.
import { connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { serverFor } from '../../helpers/server.js'

/** Reads `count` HTTP/1.1 answers (Content-Length framed) off the socket: status and X-Request-Id of each. */
function readAnswers(socket: Socket, count: number): Promise<{ status: number; requestId: string; body: string }[]> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0)
    const answers: { status: number; requestId: string; body: string }[] = []
    socket.on('error', reject)
    socket.on('close', () => reject(new Error(`connection closed after ${answers.length} of ${count} answers`)))
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n')
        if (end < 0) return
        const head = buffered.subarray(0, end).toString('latin1')
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
        if (buffered.length < end + 4 + length) return
        answers.push({
          status: Number(head.slice(9, 12)),
          requestId: /\r\nx-request-id: *([^\r]*)/i.exec(head)?.[1] ?? '',
          body: buffered.subarray(end + 4, end + 4 + length).toString('utf8'),
        })
        buffered = buffered.subarray(end + 4 + length)
        if (answers.length === count) resolve(answers)
      }
    })
  })
}

t.test('answers reach their own requests', async (t) => {
  const server = await serverFor(t)
  const token = server.boot.project_api_key

  const request = (method: string, path: string, id: string, body = ''): string =>
    `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

  t.test('pipelined requests on one connection are answered in order, each with its own answer', async (t) => {
    const socket = connect(server.port, '127.0.0.1')
    t.teardown(() => socket.destroy())
    const decide = encodeURIComponent(JSON.stringify({ token, distinct_id: 'pipelined-user' }))
    // one write: uWS parses all four in one read; the capture is refused before any store is involved
    socket.write(
      request('GET', '/_health', 'p-1') +
        request('GET', `/decide/?v=3&data=${decide}`, 'p-2') +
        request('POST', '/capture/', 'p-3', JSON.stringify({ api_key: 'phc_unknown', event: 'e', distinct_id: 'u' })) +
        request('GET', '/no-such-route', 'p-4'),
    )
    const answers = await readAnswers(socket, 4)
    t.same(
      answers.map((a) => [a.requestId, a.status]),
      [
        ['p-1', 200],
        ['p-2', 200],
        ['p-3', 401],
        ['p-4', 404],
      ],
    )
    t.match(JSON.parse(answers[1].body), { featureFlags: {}, errorsWhileComputingFlags: false })
    t.equal(JSON.parse(answers[2].body).type, 'authentication_error')
    t.equal(JSON.parse(answers[3].body).code, 'not_found')
  })

  t.test('POSTs to /decide arriving together on many connections each get their own answer, and the connections stay open', async (t) => {
    const sockets = Array.from({ length: 40 }, () => connect(server.port, '127.0.0.1'))
    t.teardown(() => sockets.forEach((s) => s.destroy()))
    await Promise.all(sockets.map((s) => new Promise((resolve) => s.once('connect', resolve))))
    const round = async (write: (i: number) => string) => {
      const answered = sockets.map((s) => readAnswers(s, 1).then(([a]) => [a.requestId, a.status, JSON.parse(a.body).featureFlags !== undefined]))
      for (const [i, s] of sockets.entries()) s.write(write(i))
      const results = await Promise.all(answered)
      sockets.forEach((s) => s.removeAllListeners('data').removeAllListeners('close').removeAllListeners('error'))
      return results
    }
    const decided = await round((i) => request('POST', '/decide/?v=3', `c-${i}-a`, JSON.stringify({ token, distinct_id: `user-${i}` })))
    t.same(
      decided,
      sockets.map((_, i) => [`c-${i}-a`, 200, true]),
    )
    const healthy = await round((i) => request('GET', '/_health', `c-${i}-b`))
    t.same(
      healthy,
      sockets.map((_, i) => [`c-${i}-b`, 200, false]),
    )
  })
})

t.test('answers to POST /decide', async (t) => {
  const pipelinedPosts = async (t: Test, env: Record<string, string>) => {
    const server = await serverFor(t, { env })
    const token = server.boot.project_api_key
    const post = (id: string) => {
      const body = JSON.stringify({ token, distinct_id: id })
      return `POST /decide/?v=3 HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
    }
    const socket = connect(server.port, '127.0.0.1')
    t.teardown(() => socket.destroy())
    socket.write(post('q-1') + post('q-2'))
    const outcome = await readAnswers(socket, 2).then(
      (answers) => answers.map((a) => [a.requestId, a.status]),
      (error: Error) => error.message,
    )
    // either way the server carries on: the batch skips the answer of the closed connection
    const after = await server.request('POST', '/decide/?v=3', { body: { token, distinct_id: 'after' } })
    t.equal(after.status, 200)
    return outcome
  }

  t.test('are batched by default: a request pipelined behind one loses its connection', async (t) => {
    t.equal(await pipelinedPosts(t, {}), 'connection closed after 0 of 2 answers')
  })

  t.test('with HTTP_BATCH_ANSWERS=false are written at once, so pipelining behind them works', async (t) => {
    t.same(await pipelinedPosts(t, { HTTP_BATCH_ANSWERS: 'false' }), [
      ['q-1', 200],
      ['q-2', 200],
    ])
  })
})
