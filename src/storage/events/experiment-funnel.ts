/**
 * The furthest step an entity's events reach in a funnel metric, for each `funnel_order_type`. Pure, and
 * shared by both stores (experiment-rows.ts on SQLite's read thread, clickhouse-experiment.ts over the
 * per-entity arrays ClickHouse sends).
 *
 * PostHog's experiment funnel (experiment_funnel_query_builder.py, `funnel_evaluation_expr` in
 * base_query_utils.py) hands each entity's events to its `aggregate_funnel_array` UDF (funnel-udf/src/steps.rs
 * and unordered_steps.rs) with the exposure as the funnel's step 0, the metric's series after it, the order
 * type and the conversion window as set (three years without one; 0 leaves only what shares the exposure's
 * instant). The events are the entity's exposures and the events matching any step, by time; unordered
 * funnels read only those at or after the first exposure (the others, read earlier too, can do nothing with
 * an event before any exposure). The UDF is followed step for step here, the exposure being an event with
 * EXPOSURE_BIT set:
 *
 * - `ordered`: every exposure starts a chain; each later event of a chain's next step advances it while it is
 *   within the window of that exposure (inclusive at its end). A chain that has reached a step keeps it: a
 *   later event of that step from the same exposure changes nothing, a later exposure's chain takes the step
 *   over when it gets there. Events at one instant whose steps differ are split into one event per step and
 *   taken in step order, one event advancing a chain once (so a step and the next at one millisecond both
 *   count, whatever their uuids). The walk stops once a chain completes.
 * - `strict`: the ordered walk where every event also clears each chain at a step it does not match. Only the
 *   events read break a chain: the exposures and those matching a step, never an event of the entity matching
 *   none. Events split at one instant clear nothing.
 * - `unordered`: the steps' events, exposures included, in time order, each kept for the step among its
 *   own whose latest kept event is the oldest (an empty step first, then the lowest); before an event is
 *   taken, those older than it by more than the window are dropped. The value is the most steps holding an event at
 *   once, so reaching step k is having k + 2 of the exposure and the series' steps, in any order and
 *   whichever they are, within one window.
 *
 * The answer is the series' step index reached (−1: none): PostHog's value minus one, its 0 being the
 * exposure alone.
 */
import { funnelWindow, type StepEvent } from './experiment-aggregate.js'
import { EXPOSURE_BIT, funnelEventNames, type EventFilter, type ExperimentAggregation, type ExperimentEventsQuery, type FunnelOrder } from './types.js'

const funnelOrder = (a: ExperimentAggregation): FunnelOrder => a.funnelOrder ?? 'ordered'

/** Whether the aggregation walks the exposures among the metric events (EXPOSURE_BIT): funnels of every order. */
export const readsExposures = (a: ExperimentAggregation): boolean => a.type === 'funnel'

/** The events that are an entity's exposure among its metric events: the activation events in activation mode. */
export const exposureStep = (q: ExperimentEventsQuery): EventFilter => q.activation ?? q.exposure

/** The names the metric events can have (null: any), the exposure's among them when the exposures are read too. */
export function metricEventNames(q: ExperimentEventsQuery, withExposures: boolean): string[] | null {
  const names = funnelEventNames(q.metric)
  const exposure = exposureStep(q).event
  if (!withExposures || names === null) return names
  if (exposure === undefined) return null
  return [...new Set([...names, ...(typeof exposure === 'string' ? [exposure] : exposure)])]
}

/** The series' step (0-based) an entity's events reach under the aggregation's order, −1 for none. */
export function funnelReached(a: ExperimentAggregation, events: readonly StepEvent[], steps: number): number {
  const order = funnelOrder(a)
  if (order === 'unordered') return unorderedFurthestStep(events, steps, funnelWindow(a))
  return chainFurthestStep(events, steps, funnelWindow(a), order === 'strict')
}

/** Each funnel position's bit in an event's mask (index 0 unused): EXPOSURE_BIT for 1, step k's for k + 2 (the UDF's numbering). */
function bitsByPosition(steps: number): number[] {
  return [0, EXPOSURE_BIT, ...Array.from({ length: steps }, (_, k) => 1 << k)]
}

/** The UDF's furthest position (1-based, 0: none) as the series' step index. */
const seriesStep = (position: number): number => Math.max(position - 2, -1)

/** The UDF's "no timestamp yet" for a position no chain has reached (PostHog's 0.0). */
const NONE = Number.NEGATIVE_INFINITY
/** The events a chain took, kept only within one instant's split pieces: only they compare ids (`already_used_event`). */
const NO_IDS: readonly number[] = []

/**
 * PostHog's ordered and strict funnels (steps.rs, the same walk; `strict` adds the clearing); events oldest first.
 * Every exposure starts a chain; an event of a chain's next step advances it while within the window of that
 * exposure, inclusive.
 */
export function chainFurthestStep(events: readonly StepEvent[], steps: number, windowMs: number, strict: boolean): number {
  const last = steps + 1
  const bits = bitsByPosition(steps)
  // start[p]: the exposure time of the chain that has reached position p (NONE: none); start[0] is the instant read.
  const start = new Array<number>(last + 1).fill(NONE)
  // used[p]: the events (indices) that chain took at the instant being read, which one event may not advance twice.
  const used = new Array<readonly number[]>(last + 1).fill(NO_IDS)
  let furthest = 0
  const advance = (t: number, p: number, id: number, split: boolean): void => {
    const from = start[p - 1]
    if (from === NONE || t - from > windowMs) return
    // The step already reached from the same exposure keeps its events.
    if (start[p] === from) return
    if (split && used[p - 1].includes(id)) return
    start[p] = from
    used[p] = split ? [...used[p - 1], id] : NO_IDS
    if (p > furthest) furthest = p
  }
  for (let i = 0; i < events.length && start[last] === NONE; ) {
    const t = events[i][0]
    let j = i + 1
    let alike = true
    for (; j < events.length && events[j][0] === t; j++) if (events[j][1] !== events[i][1]) alike = false
    start[0] = t
    used[0] = NO_IDS
    if (alike) {
      for (let k = i; k < j; k++) {
        const mask = events[k][1]
        // From the furthest step back, so one event advances a chain by one step at most.
        for (let p = last; p >= 1; p--) if ((mask & bits[p]) !== 0) advance(t, p, k, false)
        if (strict) for (let p = 1; p <= last; p++) if ((mask & bits[p]) === 0) start[p] = NONE
      }
    } else {
      // One piece per event and step, in step order and, within a step, in (time, uuid) order; no clearing.
      for (let p = 1; p <= last; p++) for (let k = i; k < j; k++) if ((events[k][1] & bits[p]) !== 0) advance(t, p, k, true)
    }
    i = j
  }
  return seriesStep(furthest)
}

/** PostHog's unordered funnel (unordered_steps.rs); events oldest first, none before the first exposure. */
export function unorderedFurthestStep(events: readonly StepEvent[], steps: number, windowMs: number): number {
  const count = steps + 1
  const bits = bitsByPosition(steps)
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
    // The event's positions, ascending, as indices into `kept` (position − 1).
    const own: number[] = []
    for (let p = 1; p <= count; p++) if ((mask & bits[p]) !== 0) own.push(p - 1)
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
