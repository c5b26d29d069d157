/**
 * `/static/…`: the installed posthog-js build's JavaScript files, as PostHog's assets host serves them to the
 * HTML snippet (`/static/array.js`) and to posthog-js loading its extensions (`/static/<version>/<name>.js`,
 * then `/static/<name>.js?v=`). Byte for byte the files of node_modules/posthog-js/dist, and nothing else.
 */
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import t from 'tap'
import { serverFor, type TestServer } from '../../helpers/server.js'

const ORIGIN = 'http://shop.example:3000'
const require = createRequire(import.meta.url)
const DIST = join(require.resolve('posthog-js/package.json'), '..', 'dist')
const VERSION: string = JSON.parse(readFileSync(join(DIST, '..', 'package.json'), 'utf8')).version

/** A GET whose path goes on the wire as written: fetch would resolve `..` and `%2e%2e` before sending. */
function rawGet(server: TestServer, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('static posthog-js files', async (t) => {
  const server = await serverFor(t)

  t.test('the snippet path serves dist/array.js as JavaScript with CORS and a short cache', async (t) => {
    const res = await server.request('GET', '/static/array.js', { headers: { origin: ORIGIN } })
    t.equal(res.status, 200)
    t.equal(res.text, readFileSync(join(DIST, 'array.js'), 'utf8'), 'the installed file, byte for byte')
    t.equal(res.headers.get('content-type'), 'application/javascript')
    t.equal(res.headers.get('cache-control'), 'public, max-age=300')
    t.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
    const again = await server.request('GET', '/static/array.js')
    t.equal(again.text, res.text, 'a second request answers the same (kept in memory)')
  })

  t.test("an extension at the installed version's path is cached as immutable", async (t) => {
    const res = await server.request('GET', `/static/${VERSION}/surveys.js`, { headers: { origin: ORIGIN } })
    t.equal(res.status, 200)
    t.equal(res.text, readFileSync(join(DIST, 'surveys.js'), 'utf8'))
    t.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    t.equal(res.headers.get('access-control-allow-origin'), ORIGIN)
  })

  t.test("the fallback path with ?v= serves the installed build whatever the version", async (t) => {
    for (const v of [VERSION, '1.0.0']) {
      const res = await server.request('GET', `/static/surveys.js?v=${v}`)
      t.equal(res.status, 200, `v=${v}`)
      t.equal(res.text, readFileSync(join(DIST, 'surveys.js'), 'utf8'), `v=${v}`)
    }
  })

  t.test('another version under /static/<version>/ is 404, so the SDK falls back to the unversioned path', async (t) => {
    const res = await server.request('GET', '/static/1.0.0/surveys.js', { headers: { origin: ORIGIN } })
    t.equal(res.status, 404)
    t.match(res.body, { type: 'invalid_request', code: 'not_found', detail: `This server serves posthog-js ${VERSION} only.` })
    t.equal(res.headers.get('access-control-allow-origin'), ORIGIN, 'the 404 carries CORS too')
  })

  t.test('names that are not JavaScript files of the dist folder are 404', async (t) => {
    for (const path of ['/static/nope.js', '/static/array.js.map', '/static/integrity.json', '/static/array.d.ts', `/static/${VERSION}/nope.js`]) {
      const res = await server.request('GET', path)
      t.equal(res.status, 404, path)
      t.equal(res.body.code, 'not_found', path)
    }
  })

  t.test('traversal attempts reach no other file', async (t) => {
    for (const path of [
      '/static/../package.json',
      '/static/../../package.json',
      '/static/..%2Fpackage.json',
      '/static/%2e%2e/package.json',
      '/static/%2e%2e%2f%2e%2e%2fpackage.json',
      `/static/${VERSION}/..%2F..%2Fpackage.json`,
      '/static/src%2Findex.js',
      '/static/%2Fetc%2Fpasswd',
    ]) {
      const res = await rawGet(server, path)
      t.not(res.status, 200, path)
      t.notMatch(res.body, /"name"|root:/, `${path}: no file content`)
    }
  })

  t.test('OPTIONS answers the preflight; HEAD has the headers and no body', async (t) => {
    const options = await server.request('OPTIONS', '/static/array.js', { headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } })
    t.equal(options.status, 204)
    t.equal(options.headers.get('allow'), 'GET, OPTIONS, HEAD')
    t.equal(options.headers.get('access-control-allow-origin'), ORIGIN)
    const head = await server.request('HEAD', `/static/${VERSION}/array.js`)
    t.equal(head.status, 200)
    t.equal(head.headers.get('content-type'), 'application/javascript')
    t.equal(head.text, '')
  })
})
