// One vCPU's speed, for bench/lib/speed.mjs, which runs one of these pinned to each vCPU for a whole run.
// Every TICK_MS it times BURSTS short bursts of a fixed unit of work (parse, change, stringify and SHA-1 a
// /capture/ event: the server's kind of work) and prints `<Date.now()> <ns a unit>` for the second-fastest
// burst. Short bursts and a low rank: a burst that a server thread preempted or a scavenge hit reads slow and
// drops out, and what is left is how fast this vCPU runs at the moment. 0.5–0.9 ms of work a tick.
import { hash } from 'node:crypto'

const TICK_MS = 200
const BURSTS = 8
const UNITS = 16
const body = JSON.stringify({
  event: '$pageview',
  distinct_id: 'user-000001',
  properties: { $current_url: 'https://app.example.com/projects/1000/insights?tab=trends', $browser: 'Chrome', $browser_version: 131, $os: 'Mac OS X', plan: 'pro', $ip: '81.2.0.10' },
})
const unit = () => {
  const event = JSON.parse(body)
  event.properties.n = 1
  return hash('sha1', JSON.stringify(event)).length
}

for (let i = 0; i < 20_000; i++) unit() // compiled before the first tick
const times = new Float64Array(BURSTS)
const timer = setInterval(() => {
  for (let i = 0; i < UNITS; i++) unit() // caches warm again after whatever ran on this vCPU since the last tick
  for (let b = 0; b < BURSTS; b++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < UNITS; i++) unit()
    times[b] = Number(process.hrtime.bigint() - start) / UNITS
  }
  times.sort()
  process.stdout.write(`${Date.now()} ${Math.round(times[1])}\n`)
}, TICK_MS)
// The runner gone (its end of the pipe closed), this probe ends too.
process.stdout.on('error', () => clearInterval(timer))
