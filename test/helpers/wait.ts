/** Polling for state a server reaches asynchronously (the consumer applying what was acknowledged). */

/** Reads until `done` holds for what was read, every 100 ms; throws naming `what` and the last reading after the timeout. */
export async function readUntil<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last = await read()
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)?.slice(0, 500)}`)
    await new Promise((r) => setTimeout(r, 100))
    last = await read()
  }
  return last
}

/** Polls `check` until it holds (a throw counts as not yet); throws naming `what` after the timeout. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await Promise.resolve().then(check).catch(() => false)) return
    await new Promise((r) => setTimeout(r, everyMs))
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`)
}
