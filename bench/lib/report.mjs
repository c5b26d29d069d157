// The Markdown summary and the SVG chart of a run (hand-written SVG: no dependency).
import { round } from './system.mjs'
import { findBaseline, ratios, shown } from './targets.mjs'
import { threadLabel } from './profile.mjs'

const n = (v, digits = 0) => (v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }))
const ms = (v) => (v === null || v === undefined ? '–' : v >= 100 ? n(v) : v >= 10 ? n(v, 1) : n(v, 2))
const x = (v) => (v === null || v === undefined ? '–' : `${n(v, 2)}×`)
const disturbed = (report, run) => `${n(run.otherCores, 2)}${run.otherCores > (report.options.disturbedAboveCores ?? 0.25) ? ' ⚠' : ''}`
/** The vCPU probe's reading for a window (bench/lib/speed.mjs); results from before it have none. */
const probe = (speed) => n(speed?.nsPerUnit)
/** Text inside a Markdown table cell. */
const esc = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ')
/** Text inside SVG (element content; the charts here and the flame graphs). */
export const xml = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

export function renderMarkdown(report, svgName) {
  const m = report.machine
  const o = report.options
  const lines = []
  lines.push(`# Benchmark ${report.runId}`, '')
  lines.push(
    `${report.date} · commit \`${report.git.sha}\`${report.git.dirty ? ' (uncommitted changes in the tree)' : ''} · ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB · ${m.kernel} · Node ${m.node} · autocannon ${m.autocannon}${m.wrk ? ` · ${m.wrk}` : ''}${m.clickhouse ? ` · ClickHouse ${m.clickhouse}` : ''}`,
    '',
    `Load: ${o.connections} connections, pipelining ${o.pipelining}, ${o.warmupS} s warm-up + ${o.durationS} s per run, unpinned (the load generator shares the ${m.cores} cores). ` +
      `Server env: ${Object.entries(o.serverEnv).map(([k, v]) => `\`${k}=${v}\``).join(', ')}; everything else at the product defaults (README, Configuration).`,
    '',
  )
  if (report.autocannon) lines.push(`autocannon options: \`${JSON.stringify(report.autocannon)}\``, '')
  if (report.wrkCommand) lines.push(`wrk: \`${report.wrkCommand}\``, '')
  for (const note of report.notes) lines.push(`- ${note}`)
  lines.push('')

  lines.push('## Scenarios', '', `![throughput and p99 per scenario beside its baselines](${svgName})`, '')
  lines.push('| scenario | sink | load gen | req/s | events/s | p50 ms | p99 ms | × raw uWS | × node:http | stored events/s (during load) | ingestion lag p50 / max s | ELU | server cores (main thread) | load gen cores | other cores | CPU probe ns | peak RSS MB |')
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const s of report.scenarios) {
    if (s.status !== 'ok') {
      lines.push(`| ${esc(s.title ?? s.name)} | ${s.sink} | ${s.loadgen} | **${s.status}** | | | | | | ${esc((s.reason ?? '').slice(0, 120))} | | | | | | | |`)
      continue
    }
    const r = ratios(report, s)
    const e2e = s.e2e ? `${n(s.e2e.storedPerS)} (${n(s.e2e.storedPerSDuringLoad)})${s.e2e.drained ? '' : ' †'}` : '–'
    const lag = s.ingestionLagS ? `${n(s.ingestionLagS.p50, 2)} / ${n(s.ingestionLagS.max, 2)}` : '–'
    const floor = s.generatorFloorMs ? ` (generator alone: p99 ${ms(s.generatorFloorMs.p99)} ms)` : ''
    const rate = s.load.overallRate ? ` @ ${n(s.load.overallRate)}/s offered${floor}` : ''
    const bad = s.non2xx || s.errors ? ` ‡ ${n(s.non2xx + s.errors)} non-2xx/errors` : ''
    lines.push(
      `| ${esc(s.title)}${rate} | ${s.sink} | ${s.loadgen} | ${n(s.rps)}${bad} | ${s.eventsPerRequest ? n(s.eventsPerS) : '–'} | ${ms(s.latencyMs.p50)} | ${ms(s.latencyMs.p99)} | ${x(r.uws)} | ${x(r.node)} | ${e2e} | ${lag} | ${n(s.elu, 2)} | ${n(s.serverCores, 2)} (${n(s.serverThreadCores?.main, 2)}) | ${n(s.loadgenCores, 2)} | ${disturbed(report, s)} | ${probe(s.cpuSpeed)} | ${n(s.peakRssMB)} |`,
    )
  }
  lines.push(
    '',
    '† the backlog was not drained within the wait: the rate is over the window until then (the sink was busy all along). Stored = counted in the store; "during load" = stored between the end of the warm-up and the end of the load. ' +
      'Ingestion lag: the server\'s skylark_ingestion_lag_seconds (how long the oldest acknowledged event the store has not confirmed has waited), sampled every 250 ms of the load. ' +
      `⚠ = disturbed: other processes on the machine used more than ${report.options.disturbedAboveCores ?? 0.25} cores during the run, so the figure is low by an unknown amount. "Other cores" include the hypervisor's steal (the JSON keeps it apart as stealCores).`,
    '',
  )

  const onClickHouse = report.scenarios.filter((s) => s.status === 'ok' && s.clickhouseThreadCores)
  if (onClickHouse.length > 0) {
    lines.push('ClickHouse server CPU during each ClickHouse scenario, by thread (merges: its background pool; HTTP: inserts and queries):', '')
    lines.push('| scenario | load gen | ClickHouse cores | merges | HTTP | other |')
    lines.push('|---|---|---|---|---|---|')
    for (const s of onClickHouse) {
      const t = s.clickhouseThreadCores
      lines.push(`| ${esc(s.title)} | ${s.loadgen} | ${n(s.clickhouseCores, 2)} | ${n(t.merges, 2)} | ${n(t.http, 2)} | ${n(t.other, 2)} |`)
    }
    lines.push('')
  }

  const beside = report.scenarios.filter((s) => s.status === 'ok' && s.background?.latencyMs)
  if (beside.length > 0) {
    lines.push('What the requests made beside the load got (a scenario\'s background load, from a second before the warm-up to the end of the load):', '')
    lines.push('| scenario | sink | load gen | background req/s | p50 ms | p99 ms | max ms | non-2xx |')
    lines.push('|---|---|---|---|---|---|---|---|')
    for (const s of beside) {
      const b = s.background
      lines.push(`| ${esc(s.title)} | ${s.sink} | ${s.loadgen} | ${n(b.rps, 1)} | ${ms(b.latencyMs.p50)} | ${ms(b.latencyMs.p99)} | ${ms(b.latencyMs.max)} | ${n(b.non2xx)} |`)
    }
    lines.push('')
  }

  lines.push('## Baselines (same run, same load settings)', '')
  lines.push('| server | body | load gen | req/s | p50 ms | p99 ms | server cores | load gen cores | other cores | CPU probe ns |')
  lines.push('|---|---|---|---|---|---|---|---|---|---|')
  for (const b of report.baselines) {
    lines.push(`| ${b.name} | ${b.body} | ${b.loadgen} | ${n(b.rps)} | ${ms(b.latencyMs.p50)} | ${ms(b.latencyMs.p99)} | ${n(b.serverCores, 2)} | ${n(b.loadgenCores, 2)} | ${disturbed(report, b)} | ${probe(b.cpuSpeed)} |`)
  }
  lines.push('')

  if (report.lag.length > 0) {
    lines.push('## Acknowledged → visible', '')
    lines.push('| sink | background load req/s | probes | events API p50 / p99 / max ms | persons API p50 / p99 / max ms | /decide p50 / p99 / max ms | timeouts | poll ms | peak RSS MB |')
    lines.push('|---|---|---|---|---|---|---|---|---|')
    for (const l of report.lag) {
      if (l.status !== 'ok') {
        lines.push(`| ${l.sink} | **${l.status}** ${esc(l.reason ?? '')} | | | | | | | |`)
        continue
      }
      // Results from before the /decide probes have no decideMs.
      const lags = [l.eventsMs, l.personsMs, l.decideMs].map((s) => (s ? `${ms(s.p50)} / ${ms(s.p99)} / ${ms(s.max)}` : '–'))
      lines.push(`| ${l.sink} | ${n(l.backgroundRps)} | ${l.probes} | ${lags.join(' | ')} | ${l.timeouts + l.failures} | ${l.pollMs} | ${n(l.peakRssMB)} |`)
    }
    lines.push('')
  }

  if (report.ceilings.length > 0) {
    lines.push('## Sink insert ceilings (same rows as /batch/)', '')
    lines.push('| sink | rows per insert | rows/s (best) | runs | CPU probe ns per run | /batch/ 100 stored/s | ratio | /batch/ 1,000 stored/s | ratio |')
    lines.push('|---|---|---|---|---|---|---|---|---|')
    for (const c of report.ceilings) {
      if (c.status !== 'ok') {
        lines.push(`| ${c.sink} | **${c.status}** ${esc(c.reason ?? '')} | | | | | | | |`)
        continue
      }
      const e2e = (name) => report.scenarios.find((s) => s.name === name && s.sink === c.sink && s.status === 'ok')?.e2e?.storedPerS ?? null
      // As the targets table judges it: three decimals where two would round it onto 0.5.
      const ratio = (v) => {
        if (v === null) return '–'
        const r = shown(v / c.rowsPerS, 0.5)
        return round(r, 2) === r ? x(r) : `${r}×`
      }
      const warmup = c.warmupRowsPerS ? ` (after a warm-up insert at ${n(c.warmupRowsPerS)}, not counted)` : ''
      lines.push(`| ${c.sink} | ${n(c.rows)} | ${n(c.rowsPerS)} | ${c.allRowsPerS.map((v) => n(v)).join(', ')}${warmup} | ${c.cpuSpeeds ? c.cpuSpeeds.map(probe).join(', ') : '–'} | ${n(e2e('batch-100'))} | ${ratio(e2e('batch-100'))} | ${n(e2e('batch-1000'))} | ${ratio(e2e('batch-1000'))} |`)
    }
    lines.push('')
  }

  if (report.targets?.length > 0) {
    lines.push('## Targets', '')
    lines.push('| target | where | value | met | detail |')
    lines.push('|---|---|---|---|---|')
    for (const t of report.targets) lines.push(`| ${t.target} | ${esc(t.where)} | ${t.value ?? '–'} | ${t.met === null ? 'not measured' : t.met ? 'yes' : '**no**'} | ${esc(t.detail)} |`)
    lines.push('')
  }

  const profiled = report.scenarios.filter((s) => s.profile)
  if (profiled.length > 0) {
    lines.push('## CPU profiles (server, self time)', '')
    const seen = new Set()
    for (const s of profiled) {
      if (seen.has(s.serverKey)) continue
      seen.add(s.serverKey)
      for (const p of s.profile) {
        const flame = p.flame ? `, [flame graph](${p.flame})` : ''
        lines.push(`**${s.serverKey}**, ${threadLabel(p)} (${n(p.busyMs)} ms busy, ${n(p.idleMs)} ms idle${flame}):`, '')
        for (const f of p.top.slice(0, 10)) lines.push(`- ${n(f.pct, 1)} % ${esc(f.fn)}${f.caller ? ` ← ${esc(f.caller)}` : ''}`)
        lines.push('')
      }
    }
  }
  return lines.join('\n') + '\n'
}

// ── SVG ─────────────────────────────────────────────────────────────────────────────────────────────────
const COLORS = { skylark: '#2563eb', 'uws-raw': '#6b7280', 'node-http': '#c4c9d2' }

function logScale(min, max, width) {
  const a = Math.log10(min)
  const b = Math.log10(max)
  return (v) => (Math.max(Math.min(Math.log10(Math.max(v, min)), b), a) - a) / (b - a) * width
}

export function renderSvg(report) {
  const rows = report.scenarios.filter((s) => s.status === 'ok')
  const label = 250
  const panel = 330
  const gap = 40
  const top = 58
  const bar = 7
  const rowH = bar * 3 + 10
  const width = label + panel * 2 + gap + 20
  const height = top + rows.length * rowH + 40
  const rps = logScale(10, 1_000_000, panel)
  const lat = logScale(0.1, 10_000, panel)
  const x0 = label
  const x1 = label + panel + gap
  const out = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="11">`)
  out.push(`<rect width="100%" height="100%" fill="#fff"/>`)
  out.push(`<text x="10" y="18" font-size="13" font-weight="600">skylark ${xml(report.runId)}: throughput and p99 beside the baselines (same body, same load generator)</text>`)
  let lx = 10
  for (const [key, text] of [['skylark', 'skylark'], ['uws-raw', 'raw uWS baseline'], ['node-http', 'node:http baseline']]) {
    out.push(`<rect x="${lx}" y="28" width="10" height="10" fill="${COLORS[key]}"/><text x="${lx + 14}" y="37">${text}</text>`)
    lx += 30 + text.length * 6
  }
  out.push(`<text x="${x0}" y="${top - 6}" font-weight="600">requests/s (log)</text>`)
  out.push(`<text x="${x1}" y="${top - 6}" font-weight="600">p99 latency, ms (log)</text>`)
  const axisY = top + rows.length * rowH
  for (const t of [10, 100, 1000, 10_000, 100_000, 1_000_000]) {
    const px = x0 + rps(t)
    out.push(`<line x1="${px}" y1="${top}" x2="${px}" y2="${axisY}" stroke="#eee"/><text x="${px}" y="${axisY + 14}" text-anchor="middle" fill="#555">${t >= 1e6 ? '1M' : t >= 1000 ? `${t / 1000}k` : t}</text>`)
  }
  for (const t of [0.1, 1, 10, 100, 1000, 10_000]) {
    const px = x1 + lat(t)
    out.push(`<line x1="${px}" y1="${top}" x2="${px}" y2="${axisY}" stroke="#eee"/><text x="${px}" y="${axisY + 14}" text-anchor="middle" fill="#555">${t}</text>`)
  }
  const tenMs = x1 + lat(10)
  out.push(`<line x1="${tenMs}" y1="${top}" x2="${tenMs}" y2="${axisY}" stroke="#f59e0b" stroke-dasharray="3,3"/>`)
  rows.forEach((s, i) => {
    const y = top + i * rowH + 4
    const name = `${s.title}${s.load?.overallRate ? ' (rate-limited)' : ''}`
    out.push(`<text x="${label - 8}" y="${y + bar + 2}" text-anchor="end">${xml(name.length > 40 ? name.slice(0, 39) + '…' : name)}</text>`)
    out.push(`<text x="${label - 8}" y="${y + 2 * bar + 6}" text-anchor="end" fill="#666">${s.sink}, ${s.loadgen}</text>`)
    const series = [
      ['skylark', s],
      ['uws-raw', findBaseline(report, 'uws-raw', s.baseline, s.loadgen)],
      ['node-http', findBaseline(report, 'node-http', s.baseline, s.loadgen)],
    ]
    series.forEach(([key, r], k) => {
      if (!r) return
      const by = y + k * bar
      const w1 = rps(r.rps)
      const w2 = lat(r.latencyMs.p99 || 0.1)
      out.push(`<rect x="${x0}" y="${by}" width="${w1.toFixed(1)}" height="${bar - 1}" fill="${COLORS[key]}"><title>${key}: ${n(r.rps)} req/s</title></rect>`)
      out.push(`<rect x="${x1}" y="${by}" width="${w2.toFixed(1)}" height="${bar - 1}" fill="${COLORS[key]}"><title>${key}: p99 ${ms(r.latencyMs.p99)} ms</title></rect>`)
      if (key === 'skylark') {
        const events = s.eventsPerRequest > 1 ? ` (${n(s.eventsPerS)} events/s)` : ''
        out.push(`<text x="${(x0 + w1 + 4).toFixed(1)}" y="${by + bar - 1}" font-size="9">${n(r.rps)}${events}</text>`)
        out.push(`<text x="${(x1 + w2 + 4).toFixed(1)}" y="${by + bar - 1}" font-size="9">${ms(r.latencyMs.p99)}</text>`)
      }
    })
  })
  out.push(`<text x="10" y="${height - 8}" fill="#666" font-size="10">autocannon latencies have 1 ms resolution; autocannon saturates ≈80–90k req/s here (see the wrk rows). Dashed line: 10 ms.</text>`)
  out.push('</svg>')
  return out.join('\n') + '\n'
}
