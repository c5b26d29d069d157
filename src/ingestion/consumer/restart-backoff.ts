/**
 * How long a dead consumer thread waits before its restart. The first wait is 1 s; a thread that dies again
 * within STABLE_MS of its start waits twice as long as the last, up to 30 s; one that lived longer starts over
 * at 1 s. A thread that crashes at once every time (what it reads makes it throw) then costs a little CPU
 * instead of the ≈0.4 s of a core each start takes, and its log is not flooded.
 */
export const RESTART_MS = 1000
export const RESTART_MAX_MS = 30_000
export const STABLE_MS = 60_000

export class RestartBackoff {
  /** Deaths in a row, each after the one before within STABLE_MS of its thread's start (the first counts whatever it lived). */
  #quickDeaths = 0

  /** The wait before restarting a thread that died after living `livedMs`. */
  next(livedMs: number): number {
    this.#quickDeaths = livedMs < STABLE_MS ? this.#quickDeaths + 1 : 1
    return Math.min(RESTART_MS * 2 ** (this.#quickDeaths - 1), RESTART_MAX_MS)
  }
}
