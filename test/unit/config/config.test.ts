import t from 'tap'
import { ConfigError, loadConfig, siteUrl } from '../../../src/config/index.js'

t.test('loadConfig', async (t) => {
  t.test('applies defaults for an empty environment', async (t) => {
    const config = loadConfig({})
    t.equal(config.http.port, 8000)
    t.equal(config.http.host, '127.0.0.1')
    t.equal(config.http.batchMaxBytes, 20 * 1024 * 1024)
    t.equal(config.clickhouse.url, null, 'embedded store by default')
    t.match(config.dataDir, /\/data$/)
  })

  t.test('parses sizes with units', async (t) => {
    t.equal(loadConfig({ BATCH_MAX_BYTES: '5mb' }).http.batchMaxBytes, 5 * 1024 * 1024)
    t.equal(loadConfig({ BATCH_MAX_BYTES: '2048' }).http.batchMaxBytes, 2048)
  })

  t.test('reports every problem in one error', async (t) => {
    const error = t.throws(() => loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud', CLICKHOUSE_URL: 'ftp://x' })) as ConfigError
    t.ok(error instanceof ConfigError)
    t.equal(error.problems.length, 3)
    t.match(error.message, /PORT/)
    t.match(error.message, /LOG_LEVEL/)
    t.match(error.message, /CLICKHOUSE_URL/)
  })

  t.test('returns a deeply frozen object', async (t) => {
    const config = loadConfig({})
    t.ok(Object.isFrozen(config))
    t.ok(Object.isFrozen(config.http))
    t.throws(() => {
      ;(config.http as { port: number }).port = 1
    })
  })

  t.test('derives the site URL from the bound port unless SITE_URL is set', async (t) => {
    t.equal(siteUrl(loadConfig({}), 1234), 'http://127.0.0.1:1234')
    t.equal(siteUrl(loadConfig({ SITE_URL: 'https://a.example/' }), 1234), 'https://a.example')
  })
})
