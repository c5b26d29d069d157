// A throwaway clickhouse-server for the tests and the benchmarks: Debian's package from PATH, configured in a
// temp folder (loopback only, free ports, user `default` without a password), started and awaited. Shared by
// test/helpers/clickhouse.ts (which stops, kills and restarts it) and bench/lib/servers.mjs.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

/** The clickhouse-server binary, or null when it is not installed. */
export function clickhouseBinary() {
  const found = spawnSync('sh', ['-c', 'command -v clickhouse-server || ls /usr/sbin/clickhouse-server 2>/dev/null'], { encoding: 'utf8' })
  return found.stdout.trim().split('\n')[0] || null
}

/**
 * The lowest port the kernel hands out to outgoing connections (Linux's default when it can't be read). A port
 * from that range, free when picked, can be taken by any connect() before the server binds it (a cluster test
 * lost a shard's start to that once), so freePort picks below it.
 */
function ephemeralLow() {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    if (Number.isInteger(low) && low > 2048) return low
  } catch {
    // not Linux
  }
  return 32768
}

const PORTS_TO = ephemeralLow() - 1
const PORTS_FROM = Math.max(1024, PORTS_TO - 12_000)

/** A server listening on `port` on 127.0.0.1 (unreferenced: it never keeps the process alive), or null when taken. */
function listenOn(port) {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(null))
    server.listen(port, '127.0.0.1', () => resolve(server.unref()))
  })
}

const close = (server) => new Promise((resolve) => server.close(() => resolve()))

/** A TCP port nothing listens on at the moment, on 127.0.0.1, outside the range outgoing connections take theirs from. */
export async function freePort() {
  const server = await heldPort()
  const { port } = server.address()
  await close(server)
  return port
}

// A port picked free stays listened on here until its server is spawned: another test file's freePort, running
// meanwhile in another process, would otherwise pick it too (a cluster lost a shard's start to that: its five
// ports are picked seconds before the last server binds them).
async function heldPort() {
  for (let tries = 0; tries < 200; tries++) {
    const server = await listenOn(PORTS_FROM + Math.floor(Math.random() * (PORTS_TO - PORTS_FROM + 1)))
    if (server) return server
  }
  throw new Error(`no free port in ${PORTS_FROM}–${PORTS_TO}`)
}

/** Another free port for a prepared server (a cluster's interserver port), held with its own until it is spawned. */
export async function preparePort(prepared) {
  const server = await heldPort()
  prepared.held.push(server)
  return server.address().port
}

/** Lets go of the ports held for a prepared server: before it is spawned, or when it is thrown away unstarted. */
export async function releasePorts(prepared) {
  await Promise.all(prepared.held.splice(0).map(close))
}

// `settings`: more of the default profile's settings, by name (a cluster test's insert_quorum).
const usersXml = (maxMemoryBytes, settings) => `<yandex>
  <profiles><default><max_memory_usage>${maxMemoryBytes}</max_memory_usage>${Object.entries(settings).map(([name, value]) => `<${name}>${value}</${name}>`).join('')}</default></profiles>
  <users><default><password></password><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`

const configXml = (dir, httpPort, tcpPort) => `<yandex>
  <logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/error.log</errorlog><console>0</console></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <mark_cache_size>5368709</mark_cache_size>
  <max_concurrent_queries>50</max_concurrent_queries>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mlock_executable>false</mlock_executable>
</yandex>
`

/**
 * A new temp folder (named from `prefix`) configured for a server on two free ports; nothing started yet. More
 * settings go into its `config.d/` (a cluster's, clickhouse-cluster.mjs); `settings` into the default profile.
 */
export async function prepareClickHouse(prefix, maxMemoryBytes, settings = {}) {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const held = [await heldPort(), await heldPort()]
  const [httpPort, tcpPort] = held.map((server) => server.address().port)
  writeFileSync(join(dir, 'config.xml'), configXml(dir, httpPort, tcpPort))
  writeFileSync(join(dir, 'users.xml'), usersXml(maxMemoryBytes, settings))
  return { dir, url: `http://127.0.0.1:${httpPort}`, tcpPort, held }
}

/**
 * One HTTP request to ClickHouse on a connection of its own, closed after it: on SIGTERM ClickHouse waits
 * for its open connections (≈7 s for the keep-alive one `fetch` leaves), and tests and benchmarks stop it often.
 */
function clickhouseRequest(url, body, timeoutMs = 0) {
  return new Promise((resolve, reject) => {
    const client = url.startsWith('https:') ? https : http
    const req = client.request(url, { method: body === undefined ? 'GET' : 'POST', agent: false, timeout: timeoutMs }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.on('timeout', () => req.destroy(new Error('no answer in time')))
    req.end(body)
  })
}

/** Runs `sql` (with `body` as its data, if any) and resolves to the answer's text; throws on an error status. */
export async function clickhouseQuery(url, sql, body = '') {
  const res = await clickhouseRequest(`${url}/?query=${encodeURIComponent(sql)}`, body)
  if (res.status !== 200) throw new Error(`ClickHouse ${res.status}: ${res.text.slice(0, 500)}`)
  return res.text
}

/** The last lines of a log, or why there are none. */
function logTail(file) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-8).join('\n')
  } catch (error) {
    return `(${error.message})`
  }
}

/** Starts the server of a prepared folder and resolves once it answers /ping; it may be started again after it stopped. */
export async function spawnClickHouse(binary, prepared, timeoutMs) {
  await releasePorts(prepared)
  const proc = spawn(binary, [`--config-file=${join(prepared.dir, 'config.xml')}`], { cwd: prepared.dir, stdio: 'ignore' })
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      // Bounded: whatever else holds the port may accept and never answer.
      if ((await clickhouseRequest(`${prepared.url}/ping`, undefined, 2_000)).status === 200) return proc
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill('SIGKILL')
      // The folder is often removed by the caller's cleanup: the log's end goes into the message.
      const why = proc.exitCode !== null ? `exited with code ${proc.exitCode}` : `did not start within ${timeoutMs / 1000} s`
      throw new Error(`clickhouse-server ${why}; the end of ${prepared.dir}/error.log:\n${logTail(join(prepared.dir, 'error.log'))}`)
    }
    await sleep(100)
  }
}
