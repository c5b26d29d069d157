/**
 * Backup holds on spool segments. `skylark backup` copies persons.db, then events.db, then the spool; the
 * copy's checkpoints need every segment from where they stand, and the running consumer would otherwise delete
 * segments as its own checkpoints move past them meanwhile. While a hold stands the consumer deletes nothing
 * (segment-release.ts).
 *
 * A hold is a file in `<spool>/holds/` whose text is when it lapses (ms since the epoch, wall clock: the CLI
 * and the server are different processes). The CLI rewrites it while it works and removes it when done; one
 * left by a killed CLI lapses by itself, so a crash costs disk for a while, never the spool's deletions for good.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

function holdsDir(spoolDir: string): string {
  return join(spoolDir, 'holds')
}

/** The shortest a hold stands unrefreshed: the CLI's holds last this much longer the bigger the databases. */
export const HOLD_MIN_TTL_MS = 5 * 60_000

/**
 * Whether some hold stands at `now`. A file whose text is not a time (a hold being replaced is renamed into
 * place whole, so it was written some other way) stands for HOLD_MIN_TTL_MS from its last change: keeping
 * segments a while is the safe side, but kept for good they would fill the spool and stop ingestion.
 */
export function spoolHeld(spoolDir: string, now: number): boolean {
  let names: string[]
  try {
    names = readdirSync(holdsDir(spoolDir))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  return names.some((name) => {
    if (name.endsWith('.tmp')) return false
    const file = join(holdsDir(spoolDir), name)
    try {
      const until = Number(readFileSync(file, 'utf8'))
      return (Number.isFinite(until) ? until : statSync(file).mtimeMs + HOLD_MIN_TTL_MS) > now
    } catch {
      return false // removed while listed
    }
  })
}

/** One hold, placed by the CLI from before its copy of persons.db until the spool is copied. */
export class SpoolHold {
  readonly #file: string
  readonly #ttlMs: number
  #until = 0
  #lapsed = false

  constructor(spoolDir: string, ttlMs: number, now: number) {
    mkdirSync(holdsDir(spoolDir), { recursive: true })
    this.#file = join(holdsDir(spoolDir), `${process.pid}-${randomBytes(4).toString('hex')}`)
    this.#ttlMs = ttlMs
    this.refresh(now)
  }

  /** Pushes the lapse back; remembers whether the hold had already lapsed (the consumer may then have deleted). */
  refresh(now: number): void {
    if (this.#until !== 0 && now >= this.#until) this.#lapsed = true
    this.#until = now + this.#ttlMs
    writeFileSync(`${this.#file}.tmp`, String(this.#until))
    renameSync(`${this.#file}.tmp`, this.#file)
  }

  /** True when the hold stood without a gap from its placing until `now`. */
  unbroken(now: number): boolean {
    return !this.#lapsed && now < this.#until
  }

  release(): void {
    rmSync(this.#file, { force: true })
    rmSync(`${this.#file}.tmp`, { force: true })
  }
}
