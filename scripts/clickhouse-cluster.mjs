// A throwaway ClickHouse cluster for the tests and the micro benchmarks: ZooKeeper (Debian's `zookeeper` package,
// run in the foreground with the JRE it brings) and a clickhouse-server (clickhouse-local.mjs) for each replica of
// each shard (by default two shards of one replica), named `skylark` in every server's `remote_servers`, with the
// `{shard}`/`{replica}` macros and the distributed DDL queue that CLICKHOUSE_CLUSTER needs. Shared by
// test/helpers/clickhouse-cluster.ts and bench/micro/clickhouse-insert.mjs.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { clickhouseBinary, clickhouseQuery, freePort, prepareClickHouse, preparePort, releasePorts, spawnClickHouse } from './clickhouse-local.mjs'

export const CLUSTER = 'skylark'
const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar'

/** What a cluster needs that is missing here ('clickhouse-server' or 'ZooKeeper'), or null. */
export function clusterMissing() {
  return !clickhouseBinary() ? 'clickhouse-server' : !existsSync(ZOOKEEPER_JAR) ? 'ZooKeeper' : null
}

/** Whether ZooKeeper serves: `srvr` names its version then (`ruok` says imok before it serves). */
function zookeeperServes(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.end('srvr'))
    // A server still starting may take the connection and say nothing.
    socket.setTimeout(1000, () => socket.destroy())
    let text = ''
    socket.on('data', (chunk) => (text += chunk))
    socket.on('close', () => resolve(text.startsWith('Zookeeper version')))
    socket.on('error', () => resolve(false))
  })
}

async function startZooKeeper(dir) {
  const port = await freePort()
  mkdirSync(join(dir, 'zookeeper'))
  // ZooKeeperServerMain: one standalone server from the command line, no config file. Its admin web server
  // would take port 8080.
  const proc = spawn(
    'java',
    ['-Xmx128m', '-Dzookeeper.admin.enableServer=false', '-Dzookeeper.4lw.commands.whitelist=srvr', '-cp', ZOOKEEPER_JAR, 'org.apache.zookeeper.server.ZooKeeperServerMain', String(port), join(dir, 'zookeeper')],
    { stdio: 'ignore' },
  )
  const deadline = Date.now() + 30_000
  while (!(await zookeeperServes(port))) {
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill('SIGKILL')
      throw new Error('ZooKeeper did not start within 30 s')
    }
    await sleep(100)
  }
  return { port, proc }
}

// Replicated tables need the interserver port even with one replica a shard: 18.16 fails the table's start
// without it (and, with ZooKeeper not yet serving, crashed in one trial).
// `shards`: each shard's replicas' TCP ports.
const clusterXml = (zookeeperPort, shards, shard, replica, interserverPort) => `<yandex>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <interserver_http_port>${interserverPort}</interserver_http_port>
  <zookeeper><node><host>127.0.0.1</host><port>${zookeeperPort}</port></node></zookeeper>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
  <macros><shard>${shard}</shard><replica>r${replica}</replica></macros>
  <remote_servers><${CLUSTER}>
    ${shards.map((ports) => `<shard><internal_replication>true</internal_replication>${ports.map((port) => `<replica><host>127.0.0.1</host><port>${port}</port></replica>`).join('')}</shard>`).join('\n    ')}
  </${CLUSTER}></remote_servers>
</yandex>
`

/**
 * Starts ZooKeeper and a server for each replica of each shard (`replicas[i]`: shard i+1's count), `settings`
 * in every server's default profile; `destroy()` kills them and removes their folders. Servers are numbered
 * shard by shard: `servers[0]` is the first shard's first replica, and skylark's CLICKHOUSE_URL in the tests.
 */
export async function startClickHouseCluster(maxMemoryBytes, replicas = [1, 1], settings = {}) {
  const binary = clickhouseBinary()
  if (!binary) throw new Error('clickhouse-server not found')
  const dir = mkdtempSync(join(tmpdir(), 'skylark-cluster-'))
  const folders = [dir]
  const children = []
  const servers = []
  // Killed, not stopped: their data goes with them, and 18.16's clean stop takes about a second each.
  const destroy = async () => {
    await Promise.all(children.map((child) => (child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve).kill('SIGKILL')) : null)))
    children.length = 0
    await Promise.all(servers.map(releasePorts))
    for (const folder of folders) rmSync(folder, { recursive: true, force: true })
  }
  try {
    const zookeeper = await startZooKeeper(dir)
    children.push(zookeeper.proc)
    const places = replicas.flatMap((count, shard) => Array.from({ length: count }, (_, replica) => ({ shard: shard + 1, replica: replica + 1 })))
    for (const _ of places) servers.push(await prepareClickHouse('skylark-shard-', maxMemoryBytes, settings))
    folders.push(...servers.map((s) => s.dir))
    const ports = replicas.map((_, shard) => servers.filter((_, i) => places[i].shard === shard + 1).map((s) => s.tcpPort))
    for (const [i, server] of servers.entries()) {
      mkdirSync(join(server.dir, 'config.d'))
      writeFileSync(join(server.dir, 'config.d', 'cluster.xml'), clusterXml(zookeeper.port, ports, places[i].shard, places[i].replica, await preparePort(server)))
    }
    for (const server of servers) children.push(await spawnClickHouse(binary, server, 30_000))
    const urls = servers.map((s) => s.url)
    // A clean stop: its ZooKeeper session ends with it, so the replica is active again as soon as it restarts
    // (after a kill, 18.16 waits for the old session to expire).
    const stopServer = async (server) => {
      const child = children[server + 1]
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    }
    const startServer = async (server) => {
      children[server + 1] = await spawnClickHouse(binary, servers[server], 30_000)
    }
    return {
      url: urls[0],
      servers: urls,
      // Read when asked: a restarted server is another process.
      get pids() {
        return children.slice(1).map((c) => c.pid)
      },
      query: (sql, server = 0) => clickhouseQuery(urls[server], sql),
      stopServer,
      startServer,
      destroy,
    }
  } catch (error) {
    await destroy()
    throw error
  }
}
