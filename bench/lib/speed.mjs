// How fast the machine's CPUs ran while each run was measured. On the Firecracker VM of 2026-11-29 (Intel
// Xeon, family 6 model 207) each vCPU ran the same JSON loop at ≈0.7 or ≈1.4 µs an iteration, switching every
// few seconds and independently of the other vCPU, with no steal time reported: two runs a few minutes apart,
// which every ratio of the suite compares, can see CPUs that differ by that much. One probe process pinned to
// each vCPU (speed-probe.mjs) reports every 200 ms for the whole run; a run records the median of each vCPU's
// reports within its window, and their mean. Higher is slower. Each probe works 0.5–0.9 ms a tick.
import { execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const PROBE = join(import.meta.dirname, 'speed-probe.mjs')

/**
 * The speed in a window [from, to] (Date.now() ms) from each vCPU's reports ([at, ns] pairs, in a Map keyed
 * by vCPU): per vCPU the median ns a unit, and `nsPerUnit` their mean; null when no vCPU reported in it.
 */
export function speedIn(reportsByCpu, from, to) {
  const perCpu = []
  for (const [cpu, reports] of reportsByCpu) {
    const ns = reports.filter(([at]) => at >= from && at <= to).map(([, value]) => value).sort((a, b) => a - b)
    if (ns.length > 0) perCpu.push({ cpu, nsPerUnit: ns[ns.length >> 1], reports: ns.length })
  }
  if (perCpu.length === 0) return null
  return { nsPerUnit: Math.round(perCpu.reduce((sum, c) => sum + c.nsPerUnit, 0) / perCpu.length), perCpu }
}

function hasTaskset() {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** The vCPUs this process may run on, from a list such as `0-1` or `0,2-3`. Pure. */
export function parseCpuList(list) {
  return list
    .trim()
    .split(',')
    .flatMap((part) => {
      const [from, to = from] = part.split('-').map(Number)
      return Array.from({ length: to - from + 1 }, (_, i) => from + i)
    })
}

/** The vCPUs to probe: those this process may run on (a container's cpuset need not start at 0); null when unknown. */
function allowedCpus() {
  try {
    const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]
    return list ? parseCpuList(list) : null
  } catch {
    return null
  }
}

/** Starts a probe on each vCPU (one unpinned probe where util-linux's taskset or the vCPU list is missing). */
export function startSpeedProbe() {
  const cpus = hasTaskset() ? allowedCpus() : null
  const pinned = cpus !== null
  const reports = new Map()
  const children = []
  for (const cpu of cpus ?? ['any']) {
    const list = []
    reports.set(cpu, list)
    const [command, args] = pinned ? ['taskset', ['-c', String(cpu), process.execPath, PROBE]] : [process.execPath, [PROBE]]
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'] })
    let partial = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      const lines = (partial + chunk).split('\n')
      partial = lines.pop()
      for (const line of lines) {
        const [at, ns] = line.split(' ').map(Number)
        if (Number.isFinite(at) && Number.isFinite(ns)) list.push([at, ns])
      }
    })
    children.push(child)
  }
  return {
    pinned,
    cpus: [...reports.keys()],
    between: (from, to) => speedIn(reports, from, to),
    stop: () => children.forEach((child) => child.kill()),
  }
}
