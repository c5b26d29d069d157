// What the machine is and how busy it is: CPU model, versions, /proc samples of a process (RSS, CPU time)
// and of the whole machine, and a wait for a quiet machine before each run (other sessions share the cores).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'

const TICKS = 100 // USER_HZ; `getconf CLK_TCK` is 100 on every Linux build we run on

/**
 * Busy and total jiffies of the machine (first line of /proc/stat), and its steal: time its vCPUs were runnable
 * but the hypervisor ran something else (counted as busy, as the machine's time lost to it).
 */
export function machineTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields
  return { busy: user + nice + system + irq + softirq + steal, total: fields.slice(0, 8).reduce((a, b) => a + b, 0), idle: idle + iowait, steal }
}

/** The fields of /proc/<pid>/stat after the name (fields[0] is the state, the 3rd field), or null when it is gone. */
function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return null
  }
}

/** CPU seconds (user + system, all threads) of a process, or null when it is gone. */
export function processCpuSeconds(pid) {
  const fields = statFields(pid)
  return fields && (Number(fields[11]) + Number(fields[12])) / TICKS
}

/** Minor page faults of a process (or of one thread: `pid/task/tid`), or null when it is gone. */
export function minorFaults(pid) {
  const fields = statFields(pid)
  return fields && Number(fields[7])
}

/** CPU seconds of each thread of a process: { tid: seconds } (the main thread's tid is the pid). */
export function threadCpuSeconds(pid) {
  const out = {}
  let tids = []
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const tid of tids) {
    const seconds = processCpuSeconds(`${pid}/task/${tid}`)
    if (seconds !== null) out[tid] = seconds
  }
  return out
}

/** CPU seconds of a process's threads summed by thread name (`comm`: ClickHouse names its pools). */
export function threadCpuByName(pid) {
  const out = {}
  for (const [tid, seconds] of Object.entries(threadCpuSeconds(pid))) {
    let name = '?'
    try {
      name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
    } catch {
      // the thread ended between the two reads
    }
    out[name] = (out[name] ?? 0) + seconds
  }
  return out
}

/** VmRSS and VmHWM of a process in bytes, or null when it is gone. */
export function processMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') }
  } catch {
    return null
  }
}

/** Polls a process's RSS every 100 ms until the returned function is called, which answers the peak. */
export function rssWatch(pid) {
  let peak = 0
  const read = () => {
    const mem = processMemory(pid)
    if (mem) peak = Math.max(peak, mem.rss)
  }
  read()
  const timer = setInterval(read, 100)
  return () => {
    clearInterval(timer)
    read()
    return peak
  }
}

/**
 * Samples processes and the machine every `intervalMs` until stopped. `pids` maps a role (server, loadgen,
 * clickhouse…) to a pid, 'self', or a function answering one (wrk is spawned after the sampler starts).
 */
export function startSampler(pids, intervalMs = 100) {
  const roles = Object.keys(pids)
  const pidOf = (role) => (typeof pids[role] === 'function' ? pids[role]() : pids[role])
  const first = {
    machine: machineTicks(),
    cpu: {},
    wall: performance.now(),
    threads: pids.server ? threadCpuSeconds(pids.server) : {},
    clickhouseThreads: pids.clickhouse ? threadCpuByName(pids.clickhouse) : {},
  }
  const last = { cpu: {} }
  const peakRss = {}
  const sample = () => {
    for (const role of roles) {
      const pid = pidOf(role)
      if (!pid) continue
      // 'self' is this process (autocannon runs in it): its own CPU time, all threads.
      const self = pid === 'self'
      const usage = self ? process.cpuUsage() : null
      const seconds = self ? (usage.user + usage.system) / 1e6 : processCpuSeconds(pid)
      if (seconds !== null) {
        first.cpu[role] ??= seconds
        last.cpu[role] = seconds
      }
      const mem = processMemory(self ? process.pid : pid)
      if (mem) peakRss[role] = Math.max(peakRss[role] ?? 0, mem.rss)
    }
  }
  sample()
  const timer = setInterval(sample, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      sample()
      const wall = (performance.now() - first.wall) / 1000
      const machine = machineTicks()
      const cores = {}
      for (const role of roles) if (role in last.cpu) cores[role] = (last.cpu[role] - first.cpu[role]) / wall
      const machineCores = (machine.busy - first.machine.busy) / TICKS / wall
      // Server threads: the main thread, then the busiest others (pool workers, the ingest consumer, libuv).
      const threads = pids.server ? threadCpuSeconds(pids.server) : {}
      const perThread = Object.entries(threads).map(([tid, s]) => [tid, (s - (first.threads[tid] ?? 0)) / wall])
      const main = perThread.find(([tid]) => Number(tid) === pids.server)?.[1] ?? null
      const others = perThread.filter(([tid]) => Number(tid) !== pids.server).map(([, c]) => c).sort((a, b) => b - a)
      const known = Object.values(cores).reduce((a, b) => a + b, 0)
      // ClickHouse by thread name: its background pool (merges) against its HTTP handlers (inserts, queries).
      const clickhouseThreads = {}
      if (pids.clickhouse) {
        for (const [name, s] of Object.entries(threadCpuByName(pids.clickhouse))) clickhouseThreads[name] = (s - (first.clickhouseThreads[name] ?? 0)) / wall
      }
      const stealCores = (machine.steal - first.machine.steal) / TICKS / wall
      return { wall, cores, machineCores, otherCores: machineCores - known, stealCores, peakRss, serverThreads: { main, others: others.filter((c) => c >= 0.02) }, clickhouseThreads }
    },
  }
}

/** Busy cores of the whole machine over `ms`. */
export async function busyCores(ms = 1000) {
  const a = machineTicks()
  await sleep(ms)
  const b = machineTicks()
  return (b.busy - a.busy) / TICKS / (ms / 1000)
}

/**
 * Waits until the machine is quiet (busy cores below `threshold` over one second), at most `maxMs`.
 * Answers the last reading and whether it was quiet; the run goes ahead either way and records it.
 */
export async function waitForQuiet({ threshold = 0.3, maxMs = 10_000 } = {}) {
  const deadline = Date.now() + maxMs
  let cores = await busyCores(500)
  while (cores >= threshold && Date.now() < deadline) cores = await busyCores(1000)
  return { quiet: cores < threshold, busyCores: round(cores, 2) }
}

function command(file, args) {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  } catch (error) {
    return (error.stdout || error.stderr || '').toString().trim() || null
  }
}

/** Git commit and whether the tree has uncommitted changes (read-only git calls). */
export function gitInfo(root) {
  const sha = command('git', ['-C', root, 'rev-parse', '--short=10', 'HEAD'])
  const status = command('git', ['-C', root, 'status', '--porcelain', '--untracked-files=no'])
  return { sha: sha && /^[0-9a-f]+$/.test(sha) ? sha : 'unknown', dirty: Boolean(status) }
}

/**
 * The CPU as the results name it: the model string, and on x86 Linux its family and model numbers, since
 * machines of one vendor string ("AMD EPYC") have differed by 2–3× in the same session's figures.
 */
export function cpuLabel(model, cpuinfo) {
  const field = (name) => cpuinfo?.match(new RegExp(`^${name}\\s*: (\\d+)$`, 'm'))?.[1]
  const family = field('cpu family')
  const number = field('model')
  return family && number ? `${model} (family ${family}, model ${number})` : model
}

function readCpuinfo() {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8')
  } catch {
    return null
  }
}

export function machineInfo(root) {
  const require = createRequire(import.meta.url)
  const cpus = os.cpus()
  const version = (pkg) => {
    try {
      return require(`${pkg}/package.json`).version
    } catch {
      return null
    }
  }
  const wrkLine = command('wrk', ['-v'])?.split('\n')[0] ?? null
  return {
    cpu: cpuLabel(cpus[0]?.model ?? 'unknown', readCpuinfo()),
    cores: cpus.length,
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    autocannon: version('autocannon'),
    wrk: wrkLine && wrkLine.startsWith('wrk') ? wrkLine.split(' Copyright')[0] : null,
    uws: version('@trufflesuite/uws-js-unofficial'),
    betterSqlite3: version('better-sqlite3'),
    root,
  }
}

export function round(value, digits = 0) {
  if (value === null || value === undefined || !Number.isFinite(value)) return null
  const f = 10 ** digits
  return Math.round(value * f) / f
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return null
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index]
}
