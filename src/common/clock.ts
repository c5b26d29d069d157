/** Time as an input: pure code takes a Clock so tests can pin "now". */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

export function fixedClock(ms: number): Clock {
  return { now: () => ms }
}

/** ISO 8601 with milliseconds and Z, the timestamp format of every API response. */
export function iso(ms: number): string {
  return new Date(ms).toISOString()
}
