/**
 * One consumer loop's sleep, which the other loop (or stop()) can end early. A wake clears the sleep's
 * timer: a stopped consumer must not hold the process open for the rest of a long flush interval.
 */
export class Alarm {
  #wake: (() => void) | null = null

  /** Until wake() is called or `ms` pass; null: only wake(). */
  sleep(ms: number | null): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        if (this.#wake === done) this.#wake = null
        resolve()
      }
      const timer = ms === null ? undefined : setTimeout(done, ms)
      this.#wake = done
    })
  }

  /** Ends the current sleep; nothing when the loop is not asleep. */
  wake(): void {
    this.#wake?.()
  }
}
