/**
 * The uWebSockets.js adapter: the only code that touches uWS objects. It copies what a handler needs out
 * of the stack-allocated HttpRequest, reads the body with a cap, runs the handler, and writes the reply
 * inside cork(). It also counts in-flight requests so shutdown can drain them, and asks admission control
 * (admission.ts) before keeping a request, so overload is answered with 429/503 instead of growing memory.
 */
import { STATUS_CODES } from 'node:http'
import { randomBytes } from 'node:crypto'
import { AppError, isAppError } from '../common/errors.js'
import type { Logger } from '../observability/logger.js'
import type { Metrics } from '../observability/metrics.js'
import { bodyBudgetSpent, type Admission, type Ticket } from './admission.js'
import { corsHeaders, preflightHeaders } from './cors.js'
import { errorReply, json } from './reply.js'
import type { Router } from './router.js'
import { REQUEST_HEADERS, type Handler, type Reply, type RequestContext, type RequestHeaders, type RouteOptions } from './types.js'
import { loadNativeUws, type HttpRequest, type HttpResponse, type us_listen_socket, type UwsModule } from './uws.js'

const STATUS_LINES = new Map<number, string>()
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status)
  if (!line) STATUS_LINES.set(status, (line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`))
  return line
}

const NO_BODY_METHODS = new Set(['get', 'head', 'options', 'delete'])
/** Bodies up to this size are read to the end before a 413, so the client gets the answer. */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024
const REQUEST_ID_PREFIX = randomBytes(4).toString('hex')
/**
 * Answer text a batch holds; answers beyond it are written at once. What a batch holds lives through
 * young-generation collections and is promoted: unbounded batches of 350-flag answers (≈13 K each) raised
 * peak RSS from 183 to 233 MB. 256 K holds ≈100 answers of 50 flags (≈2.4 K), more than 50 connections send.
 */
const BATCH_MAX_CHARS = 256 * 1024

/** The headers the service reads (REQUEST_HEADERS, and the conditional ones where they apply), each asked of uWS by name. */
function readHeaders(req: HttpRequest, method: string): RequestHeaders {
  const headers: RequestHeaders = {}
  for (const name of REQUEST_HEADERS) readHeader(req, headers, name)
  if (headers['content-length'] === undefined) readHeader(req, headers, 'transfer-encoding')
  if (method === 'get' || method === 'head') readHeader(req, headers, 'if-none-match')
  else if (method === 'options') readHeader(req, headers, 'access-control-request-headers')
  return headers
}

function readHeader(req: HttpRequest, headers: RequestHeaders, name: keyof RequestHeaders): void {
  const value = req.getHeader(name)
  if (value !== '') headers[name] = value
}

const UNMATCHED_OPTIONS: RouteOptions = { maxBodyBytes: 0, cors: true }

interface Exchange {
  ctx: RequestContext
  res: HttpResponse
  route: string
  finished: boolean
  /** The matched route's options, so answers the server makes itself (413) get CORS headers too. */
  options?: RouteOptions
  /** What admission control granted this request; released when it finishes. */
  ticket?: Ticket
  /** The answer while it waits in the batch (#send). */
  reply?: Reply
}

export interface HttpServerOptions {
  router: Router
  logger: Logger
  metrics: Metrics
  /** Limits on requests and body bytes in flight; none when absent. */
  admission?: Admission
  /** Write the answers of routes with `batchPostAnswers` in batches (#send). */
  batchAnswers: boolean
}

export class HttpServer {
  readonly #uws: UwsModule
  readonly #router: Router
  readonly #logger: Logger
  readonly #metrics: Metrics
  readonly #admission: Admission | null
  readonly #batchAnswers: boolean
  #listenSocket: us_listen_socket | null = null
  #inflight = 0
  #requestCounter = 0
  #drainWaiters: Array<() => void> = []
  /** Answers waiting to be written when this turn of the event loop has read everything (#send). */
  #batch: Exchange[] = []
  #batchChars = 0
  /** Shutting down: every answer closes its connection, so clients stop reusing it. */
  #stopping = false
  /** Drained: requests still arriving on open connections get 503 instead of meeting closing stores. */
  #drained = false

  constructor(options: HttpServerOptions) {
    this.#uws = loadNativeUws()
    this.#router = options.router
    this.#logger = options.logger
    this.#metrics = options.metrics
    this.#admission = options.admission ?? null
    this.#batchAnswers = options.batchAnswers
  }

  get inflight(): number {
    return this.#inflight
  }

  listen(host: string, port: number): Promise<number> {
    const app = this.#uws.App()
    app.any('/*', (res, req) => this.#onRequest(res, req))
    return new Promise((resolve, reject) => {
      app.listen(host, port, (socket) => {
        if (!socket) {
          reject(new Error(`Could not listen on ${host}:${port} (address in use or not available)`))
          return
        }
        this.#listenSocket = socket
        resolve(this.#uws.us_socket_local_port(socket))
      })
    })
  }

  /**
   * Stops accepting new connections; requests already in flight carry on, and from now on every answer
   * closes its connection, so a kept-alive client does not send another request into the shutdown.
   */
  stopAccepting(): void {
    this.#stopping = true
    if (this.#listenSocket) {
      this.#uws.us_listen_socket_close(this.#listenSocket)
      this.#listenSocket = null
    }
  }

  /** Resolves true when no request is in flight, false if the timeout came first. */
  drain(timeoutMs: number): Promise<boolean> {
    const drained = (done: boolean) => {
      this.#drained = true
      return done
    }
    if (this.#inflight === 0) return Promise.resolve(drained(true))
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(drained(false)), timeoutMs)
      this.#drainWaiters.push(() => {
        clearTimeout(timer)
        resolve(drained(true))
      })
    })
  }

  #onRequest(res: HttpResponse, req: HttpRequest): void {
    const ctx = this.#readContext(res, req)
    const match = this.#router.match(ctx.method, ctx.path)
    const exchange: Exchange = { ctx, res, route: 'unmatched', finished: false }
    this.#inflight++
    res.onAborted(() => {
      ctx.aborted = true
      this.#finish(exchange, 499)
    })

    const declared = ctx.headers['content-length']
    const length = declared === undefined ? -1 : Number(declared)
    const bodiless = length === 0 || (length < 0 && NO_BODY_METHODS.has(ctx.method) && !ctx.headers['transfer-encoding'])
    if (this.#drained) {
      this.#answerEarly(exchange, errorReply(new AppError('service_unavailable', { detail: 'The service is shutting down.', retryAfter: 1 })), bodiless, length)
      return
    }
    if (match.kind === 'not_found') {
      // With CORS headers, so a browser SDK calling a route skylark lacks sees the 404 (and its envelope),
      // not an opaque network error. A body is read and dropped first (as for 413): closing under a client
      // still sending is a reset.
      exchange.options = UNMATCHED_OPTIONS
      this.#answerEarly(exchange, errorReply(new AppError('not_found', { detail: `No route for ${ctx.path}` })), bodiless, length)
      return
    }
    if (match.kind === 'method_not_allowed') {
      const reply =
        ctx.method === 'options'
          ? { status: 204, headers: { Allow: [...match.allowed, 'OPTIONS'].join(', ') } }
          : errorReply(
              new AppError('method_not_allowed', { detail: `Method "${ctx.method.toUpperCase()}" not allowed.` }),
            )
      this.#answerEarly(exchange, reply, bodiless, length)
      return
    }

    const { route, params } = match
    exchange.route = route.options.label ?? route.pattern
    exchange.options = route.options
    ctx.params = params
    const options = route.options
    if (options.readsHeaders) for (const name of options.readsHeaders) readHeader(req, ctx.headers as RequestHeaders, name)
    if (length > options.maxBodyBytes) {
      this.#refuseTooLarge(exchange, length)
      return
    }
    if (this.#admission && !options.probe) {
      const admitted = this.#admission.admit(ctx.remoteAddress, length > 0 ? length : 0)
      if (admitted instanceof AppError) {
        this.#answerEarly(exchange, errorReply(admitted), bodiless, length, false)
        return
      }
      exchange.ticket = admitted
    }
    if (bodiless) {
      this.#run(exchange, route.handler)
      return
    }
    this.#readBody(exchange, options.maxBodyBytes, length, () => this.#run(exchange, route.handler))
  }

  #readContext(res: HttpResponse, req: HttpRequest): RequestContext {
    const method = req.getMethod()
    const headers = readHeaders(req, method)
    const incomingId = headers['x-request-id']
    const requestId =
      incomingId && incomingId.length <= 64 && /^[\w.-]+$/.test(incomingId)
        ? incomingId
        : `${REQUEST_ID_PREFIX}-${(++this.#requestCounter).toString(36)}`
    return {
      method,
      path: req.getUrl(),
      query: req.getQuery() ?? '',
      headers,
      // An address is ASCII: latin1 decodes it without UTF-8 validation.
      remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString('latin1'),
      requestId,
      params: {},
      body: null,
      aborted: false,
      startedAt: performance.now(),
    }
  }

  /**
   * Copies the body out of uWS chunks (they are neutered after each callback) and joins them at the end;
   * most bodies arrive in one chunk. Memory is counted against admission control as chunks arrive, not
   * from Content-Length, so a client that declares a large body and trickles it holds only what it sent.
   */
  #readBody(exchange: Exchange, limit: number, declared: number, done: () => void): void {
    const { res, ctx, ticket } = exchange
    const chunks: Buffer[] = []
    let size = 0
    let rejected = false
    res.onData((chunk, isLast) => {
      if (rejected) return
      const n = chunk.byteLength
      const tooLarge = size + n > limit || (declared > 0 && size + n > declared)
      // Over the route's limit (413), or the body budget is spent (503): let go of what this request holds
      // and answer once the rest is read.
      if (tooLarge || (ticket && !ticket.holdBody(n))) {
        rejected = true
        chunks.length = 0
        ticket?.dropBody()
        const reply = errorReply(tooLarge ? new AppError('request_too_large') : bodyBudgetSpent())
        if (isLast) this.#send(exchange, reply, true)
        else this.#drainThenSend(exchange, reply, -1)
        return
      }
      if (n > 0) chunks.push(Buffer.from(new Uint8Array(chunk)))
      size += n
      if (!isLast) return
      // Joined bodies over 4 KB get an ArrayBuffer of their own (Buffer.concat does not use the shared
      // pool for them), which the worker pool can take over instead of copying.
      ctx.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)
      done()
    })
  }

  /**
   * Answers 413. A client still uploading would see a reset instead of the answer if we closed at once,
   * so a body of reasonable size is read and thrown away first; anything larger is cut off.
   */
  #refuseTooLarge(exchange: Exchange, declared: number): void {
    this.#drainThenSend(exchange, errorReply(new AppError('request_too_large')), declared)
  }

  /**
   * Answers before reading the body: at once when there is none, else after reading and dropping it
   * (closing under a client still sending is a reset). A drained body always closes the connection.
   */
  #answerEarly(exchange: Exchange, reply: Reply, bodiless: boolean, declared: number, close = true): void {
    if (bodiless) this.#send(exchange, reply, close)
    else this.#drainThenSend(exchange, reply, declared)
  }

  /** Reads and discards the rest of the body (up to MAX_DRAIN_BYTES), then answers `reply` and closes. */
  #drainThenSend(exchange: Exchange, reply: Reply, declared: number): void {
    if (declared > MAX_DRAIN_BYTES) {
      this.#send(exchange, reply, true)
      return
    }
    let drained = 0
    exchange.res.onData((chunk, isLast) => {
      drained += chunk.byteLength
      if (isLast || drained > MAX_DRAIN_BYTES) this.#send(exchange, reply, true)
    })
  }

  #run(exchange: Exchange, handler: Handler): void {
    let result: Reply | Promise<Reply>
    try {
      result = handler(exchange.ctx)
    } catch (error) {
      this.#send(exchange, this.#errorToReply(exchange, error), false)
      return
    }
    if (result instanceof Promise) {
      result.then(
        (reply) => this.#send(exchange, reply, false),
        (error: unknown) => this.#send(exchange, this.#errorToReply(exchange, error), false),
      )
    } else {
      this.#send(exchange, result, false)
    }
  }

  #errorToReply(exchange: Exchange, error: unknown): Reply {
    if (isAppError(error)) {
      if (error.status >= 500) {
        this.#logger.error({ reqId: exchange.ctx.requestId, route: exchange.route, code: error.code }, error.detail)
      }
      return errorReply(error)
    }
    this.#logger.error(
      { reqId: exchange.ctx.requestId, route: exchange.route, err: error },
      'unhandled error in request handler',
    )
    return errorReply(new AppError('internal_error'))
  }

  /**
   * Writing an answer wakes the client when it sleeps waiting for it, and on this VM the waking is paid by
   * the sender: ≈5 µs, a fifth of a /decide (docs/performance.md). Answers of batched routes are written
   * together after the event loop's poll phase (setImmediate), so a client handling many connections is
   * woken once for all of them. Such an answer is pending until then, and uWS closes a connection whose
   * next request arrives while an answer is pending: only POSTs are batched, which a client must not
   * pipeline behind (RFC 9112 §9.3.2), and a closing answer is written at once. HTTP_BATCH_ANSWERS=false
   * turns batching off for clients that pipeline anyway.
   */
  #send(exchange: Exchange, reply: Reply, closeConnection: boolean): void {
    const batched = this.#batchAnswers && exchange.options?.batchPostAnswers && exchange.ctx.method === 'post'
    if (batched && !closeConnection && !this.#stopping && this.#batchChars < BATCH_MAX_CHARS) {
      exchange.reply = reply
      this.#batchChars += reply.body?.length ?? 0
      if (this.#batch.push(exchange) === 1) setImmediate(this.#writeBatch)
      return
    }
    this.#write(exchange, reply, closeConnection)
  }

  readonly #writeBatch = (): void => {
    const batch = this.#batch
    this.#batch = []
    this.#batchChars = 0
    for (const exchange of batch) this.#write(exchange, exchange.reply!, false)
  }

  #write(exchange: Exchange, reply: Reply, closeConnection: boolean): void {
    const { res, ctx, options } = exchange
    if (exchange.finished || ctx.aborted) return
    let headers = reply.headers
    const origin = ctx.headers.origin
    if (options?.cors && origin) {
      headers = { ...headers, ...(ctx.method === 'options' ? preflightHeaders(ctx) : corsHeaders(origin)) }
    }
    res.cork(() => {
      res.writeStatus(statusLine(reply.status))
      res.writeHeader('X-Request-Id', ctx.requestId)
      if (headers) for (const key in headers) res.writeHeader(key, headers[key])
      const body = reply.body
      const close = closeConnection || this.#stopping
      if (ctx.method === 'head') res.endWithoutBody(undefined, close)
      else res.end(body ?? undefined, close)
    })
    this.#finish(exchange, reply.status)
  }

  #finish(exchange: Exchange, status: number): void {
    if (exchange.finished) return
    exchange.finished = true
    exchange.ticket?.release()
    this.#metrics.http.route(exchange.route).record(status, (performance.now() - exchange.ctx.startedAt) / 1000)
    if (status >= 400 && status < 500 && status !== 499) {
      this.#logger.debug({ reqId: exchange.ctx.requestId, route: exchange.route, status }, 'client error')
    }
    if (--this.#inflight === 0 && this.#drainWaiters.length > 0) {
      const waiters = this.#drainWaiters
      this.#drainWaiters = []
      for (const wake of waiters) wake()
    }
  }
}

/** The standard answer for OPTIONS on public routes: CORS headers are added by the server. */
export const preflightReply: Handler = () => json(200, { status: 1 })
