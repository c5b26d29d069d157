/**
 * The furthest step an entity's events reach in a funnel metric, for each `funnel_order_type`. Pure, and
 * shared by both stores (experiment-rows.ts on SQLite's read thread, clickhouse-experiment.ts over the
 * per-entity arrays ClickHouse sends).
 *
 * PostHog's experiment funnel (experiment_funnel_query_builder.py, `funnel_evaluation_expr` in
 * base_query_utils.py) hands each entity's events to its `aggregate_funnel_array` UDF (funnel-udf/src/steps.rs
 * and unordered_steps.rs) with the exposure as the funnel's step 0, the metric's series after it, the order
 * type and the conversion window (three years without one). The events are the entity's exposures and the
 * events matching any step, by time; unordered funnels read only those at or after the first exposure.
 * `ordered` keeps skylark's walk from the first series step (furthestStep in experiment-aggregate.ts); the
 * two others follow the UDF step for step here, the exposure being an event with EXPOSURE_BIT set:
 *
 * - `strict`: the ordered walk — every exposure starts a chain, each later event of the next step advances
 *   it while it is within the window of that exposure (inclusive) — where every event also clears each
 *   chain at a step it does not match. Only the events read break a chain: the exposures and those matching
 *   a step, never an event of the entity matching none. Events at one instant whose steps differ are split
 *   into one event per step and taken in step order without clearing, one event advancing a chain once.
 * - `unordered`: the steps' events, exposures included, in time order, each kept for the step among its
 *   own whose latest kept event is the oldest (an empty step first, then the lowest); before an event is
 *   taken, those older than it by more than the window are dropped. The value is the most steps holding an event at
 *   once, so reaching step k is having k + 2 of the exposure and the series' steps, in any order and
 *   whichever they are, within one window.
 *
 * The answer is the series' step index reached (−1: none): PostHog's value minus one, its 0 being the
 * exposure alone.
 */
import { funnelWindow, furthestStep, type StepEvent } from './experiment-aggregate.js'
import { EXPOSURE_BIT, funnelEventNames, type ExperimentAggregation, type ExperimentEventsQuery, type FunnelOrder } from './types.js'

const funnelOrder = (a: ExperimentAggregation): FunnelOrder => a.funnelOrder ?? 'ordered'

/** Whether the aggregation walks the exposures among the metric events (EXPOSURE_BIT): unordered and strict funnels. */
export const readsExposures = (a: ExperimentAggregation): boolean => a.type === 'funnel' && funnelOrder(a) !== 'ordered'

/** The names the metric events can have (null: any), the exposure's among them when the exposures are read too. */
export function metricEventNames(q: ExperimentEventsQuery, withExposures: boolean): string[] | null {
  const names = funnelEventNames(q.metric)
  const exposure = q.exposure.event
  if (!withExposures || names === null) return names
  if (exposure === undefined) return null
  return [...new Set([...names, ...(typeof exposure === 'string' ? [exposure] : exposure)])]
}

/** The series' step (0-based) an entity's events reach under the aggregation's order, −1 for none. */
export function funnelReached(a: ExperimentAggregation, events: readonly StepEvent[], steps: number): number {
  const order = funnelOrder(a)
  if (order === 'strict') return strictFurthestStep(events, steps, funnelWindow(a))
  if (order === 'unordered') return unorderedFurthestStep(events, steps, funnelWindow(a))
  return furthestStep(events, steps, funnelWindow(a))
}

/** An event's funnel positions, ascending: 1 for the exposure, k + 2 for series step k (the UDF's numbering). */
function positions(mask: number, steps: number): number[] {
  const out = (mask & EXPOSURE_BIT) !== 0 ? [1] : []
  for (let k = 0; k < steps; k++) if ((mask & (1 << k)) !== 0) out.push(k + 2)
  return out
}

/** The UDF's furthest position (1-based, 0: none) as the series' step index. */
const seriesStep = (position: number): number => Math.max(position - 2, -1)

/** A chain: the time of the exposure that started it and the events (indices) it took. */
interface Chain {
  start: number
  used: readonly number[]
}

/** PostHog's strict funnel (steps.rs with `funnel_order_type` "strict"); events oldest first. */
export function strictFurthestStep(events: readonly StepEvent[], steps: number, windowMs: number): number {
  const last = steps + 1
  // entered[p]: the chain that has reached position p; entered[0] is the instant being read.
  const entered: Array<Chain | null> = new Array<Chain | null>(last + 1).fill(null)
  let furthest = 0
  const advance = (t: number, p: number, id: number, split: boolean): void => {
    const previous = entered[p - 1]
    if (previous === null || t - previous.start > windowMs) return
    // The step already reached from the same exposure keeps its events.
    if (entered[p]?.start === previous.start) return
    if (split && previous.used.includes(id)) return
    entered[p] = { start: previous.start, used: [...previous.used, id] }
    furthest = Math.max(furthest, p)
  }
  for (let i = 0; i < events.length && entered[last] === null; ) {
    const t = events[i][0]
    let j = i
    while (j < events.length && events[j][0] === t) j++
    entered[0] = { start: t, used: [] }
    if (events.slice(i, j).every((e) => e[1] === events[i][1])) {
      for (let k = i; k < j; k++) {
        const own = positions(events[k][1], steps)
        // From the furthest step back, so one event advances a chain by one step at most.
        for (let s = own.length - 1; s >= 0; s--) advance(t, own[s], k, false)
        for (let p = 1; p <= last; p++) if (!own.includes(p)) entered[p] = null
      }
    } else {
      const pieces: Array<[position: number, id: number]> = []
      for (let k = i; k < j; k++) for (const p of positions(events[k][1], steps)) pieces.push([p, k])
      // A stable sort: events of one step stay in (time, uuid) order.
      pieces.sort((x, y) => x[0] - y[0])
      for (const [p, k] of pieces) advance(t, p, k, true)
    }
    i = j
  }
  return seriesStep(furthest)
}

/** PostHog's unordered funnel (unordered_steps.rs); events oldest first, none before the first exposure. */
export function unorderedFurthestStep(events: readonly StepEvent[], steps: number, windowMs: number): number {
  const count = steps + 1
  // Each position's kept times, oldest first, read from `head` on (dropped ones stay behind it).
  const kept = Array.from({ length: count }, () => ({ times: [] as number[], head: 0 }))
  const isEmpty = (q: { times: number[]; head: number }) => q.head >= q.times.length
  let held = 0
  let most = 0
  for (let i = 0; i < events.length; i++) {
    const [t, mask] = events[i]
    for (;;) {
      let oldest = -1
      for (let p = 0; p < count; p++) {
        if (!isEmpty(kept[p]) && (oldest < 0 || kept[p].times[kept[p].head] < kept[oldest].times[kept[oldest].head])) oldest = p
      }
      if (oldest < 0 || (held < count && kept[oldest].times[kept[oldest].head] + windowMs >= t)) break
      most = Math.max(most, held)
      kept[oldest].head++
      if (isEmpty(kept[oldest])) held--
    }
    const own = positions(mask, steps).map((p) => p - 1)
    if (own.length > 0) {
      const latest = (p: number) => (isEmpty(kept[p]) ? Number.NEGATIVE_INFINITY : kept[p].times[kept[p].times.length - 1])
      let chosen = own[0]
      for (const p of own) if (latest(p) < latest(chosen)) chosen = p
      if (isEmpty(kept[chosen])) held++
      kept[chosen].times.push(t)
    }
    // As the UDF, the count is taken when events are dropped and after the last one.
    if (most === count) break
    if (i === events.length - 1) most = Math.max(most, held)
  }
  return seriesStep(most)
}
