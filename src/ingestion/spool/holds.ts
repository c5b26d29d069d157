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
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

function holdsDir(spoolDir: string): string {
  return join(spoolDir, 'holds')
}

/**
 * Whether some hold stands at `now`. A file that cannot be read as a time counts as standing: a hold being
 * replaced is renamed into place whole, so that is a hold written some other way, and keeping segments is the
 * safe side.
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
    let text: string
    try {
      text = readFileSync(join(holdsDir(spoolDir), name), 'utf8')
    } catch {
      return false // removed while listed
    }
    const until = Number(text)
    return !Number.isFinite(until) || until > now
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
