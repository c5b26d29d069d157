import t from 'tap'
import { clickhouseConnection, ConfigError, loadConfig, siteUrl } from '../../../src/config/index.js'

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

  t.test('takes ClickHouse names as SQL names only, and a cluster with its connection', async (t) => {
    const error = t.throws(() => loadConfig({ CLICKHOUSE_DATABASE: 'a-b', CLICKHOUSE_CLUSTER: "x'; DROP" })) as ConfigError
    t.same(error.problems, ['CLICKHOUSE_DATABASE="a-b": expected a name of letters, digits and _', 'CLICKHOUSE_CLUSTER="x\'; DROP": expected a name of letters, digits and _'])
    t.equal(clickhouseConnection(loadConfig({ CLICKHOUSE_CLUSTER: 'main' })), null, 'no URL, no ClickHouse: the cluster alone changes nothing')
    t.same(clickhouseConnection(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123/', CLICKHOUSE_CLUSTER: 'main' })), {
      url: 'http://ch:8123',
      database: 'skylark',
      user: 'default',
      password: '',
      cluster: 'main',
    })
    t.equal(clickhouseConnection(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123' }))?.cluster, null)
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
