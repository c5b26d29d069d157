/**
 * Whether a person's events make a behavioural cohort's sequence, as PostHog's `performed_event_sequence` reads it
 * now (a two-step funnel, its conversion window in seconds): an event of the first step, then one of the second
 * at the same time or later, no more than `windowMs` after it. Where both steps are one, two of its events, the
 * second no more than `windowMs` after the first (`thens` null). Times are ms, each list ascending.
 */
export function sequenceHolds(firsts: readonly number[], thens: readonly number[] | null, windowMs: number): boolean {
  if (thens === null) {
    for (let i = 1; i < firsts.length; i++) if (firsts[i]! - firsts[i - 1]! <= windowMs) return true
    return false
  }
  // For each second-step event, the latest first-step event at or before it is the nearest.
  let i = -1
  for (const then of thens) {
    while (i + 1 < firsts.length && firsts[i + 1]! <= then) i++
    if (i >= 0 && then - firsts[i]! <= windowMs) return true
  }
  return false
}

/**
 * A person's sequence over the rows of its distinct ids (`[id, true]` where that id's events make it alone, else
 * `[id, ...times]`, a list per step): the `skylark_sequence` aggregate over persons.db's ids of a person.
 */
export class PersonSequence {
  #holds = false
  readonly #lists: number[][] = []

  add(row: readonly unknown[]): this {
    if (row[1] === true) this.#holds = true
    else if (!this.#holds) {
      for (let k = 1; k < row.length; k++) {
        const list = (this.#lists[k - 1] ??= [])
        for (const at of row[k] as number[]) list.push(at)
      }
    }
    return this
  }

  holds(windowMs: number): boolean {
    if (this.#holds) return true
    const [firsts = [], thens] = this.#lists.map((list) => list.sort((a, b) => a - b))
    return sequenceHolds(firsts, thens ?? null, windowMs)
  }
}
