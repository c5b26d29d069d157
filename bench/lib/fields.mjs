// A run's figures as the report keeps them: the load generator's result and the CPU sampler's usage, rounded.
import { round } from './system.mjs'

export function usageFields(usage) {
  return {
    serverCores: round(usage.cores.server, 2),
    serverThreadCores: { main: round(usage.serverThreads.main, 2), others: usage.serverThreads.others.map((c) => round(c, 2)) },
    loadgenCores: round(usage.cores.loadgen, 2),
    clickhouseCores: usage.cores.clickhouse === undefined ? undefined : round(usage.cores.clickhouse, 2),
    clickhouseThreadCores: usage.cores.clickhouse === undefined ? undefined : clickhouseThreadCores(usage.clickhouseThreads),
    otherCores: round(usage.otherCores, 2),
    // Part of otherCores: the hypervisor's. A vCPU taken away for tens of ms stalls every process on it.
    stealCores: round(usage.stealCores, 3),
  }
}

/**
 * The ClickHouse server's CPU split by thread name: merges (the background pool, `BackgrProcPool` in 18.x and
 * `MergeMutate` later), HTTP handlers (the inserts and the counting queries), the rest.
 */
function clickhouseThreadCores(byName) {
  const split = { merges: 0, http: 0, other: 0 }
  for (const [name, cores] of Object.entries(byName)) {
    const kind = /backgr|merge|mutat/i.test(name) ? 'merges' : /http/i.test(name) ? 'http' : 'other'
    split[kind] += cores
  }
  return { merges: round(split.merges, 2), http: round(split.http, 2), other: round(split.other, 2) }
}

export function loadFields(result) {
  return {
    rps: round(result.rps),
    ok: result.ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: result.statusCodes,
    latencyMs: Object.fromEntries(Object.entries(result.latencyMs).map(([k, v]) => [k, round(v, 2)])),
  }
}
