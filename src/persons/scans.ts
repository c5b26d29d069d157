/**
 * The persons.db reads of the API that scan (lists and their counts, searches and property filters, the
 * definitions lists, group property keys and values), and the thread they run on. better-sqlite3 is
 * synchronous: on the main thread a persons list filtered on a property no person has walked every person of
 * the project and held every /capture/ and /decide behind it (100,000 persons of 20 properties, asked back to
 * back: /capture/ at 54 req/s, p50 751 ms; docs/performance.md, "Persons reads off the main thread"). The
 * service asks them of a read thread (src/storage/read-thread.ts; workers/person-query.ts is its entry) with
 * a read-only connection of its own. Keyed lookups (a person by uuid, a group by key, a definition by id) and
 * /decide's cached reads stay on the calling thread: they answer in microseconds, where a call through the
 * thread costs about a millisecond and queues behind any scan.
 */
import type { MessagePort } from 'node:worker_threads'
import { registerFilterFunctions, type RegexEngine } from '../storage/events/index.js'
import { openDatabase, type Db } from '../storage/index.js'
import { ReadThread, serveReads } from '../storage/read-thread.js'
import { DefinitionReads } from './definition-reads.js'
import { GroupReads } from './group-reads.js'
import { PersonListing } from './listing.js'

interface Readers {
  listing: PersonListing
  groups: GroupReads
  definitions: DefinitionReads
}

/** The scanning reads, by the reader that has them. */
const SCANS = {
  listing: ['listPersons', 'countPersons', 'hogqlQuery', 'distinctIdsMatching', 'distinctIdsInCohort', 'distinctIdsByProperty', 'groupKeysByProperty', 'lookupValues', 'groupKeysMatching', 'listGroups', 'countGroups', 'listIngestionWarnings', 'countIngestionWarnings'],
  groups: ['propertyDefinitions', 'propertyValues', 'personsOf'],
  definitions: ['events', 'properties'],
} as const satisfies { [R in keyof Readers]: ReadonlyArray<keyof Readers[R]> }

type Scans = typeof SCANS
type Later<F> = F extends (...args: infer A) => infer T ? (...args: A) => Promise<T> : never

/** The scanning reads, each answered later (by the read thread, or in place). */
export type PersonScans = { [R in keyof Scans]: { [M in Scans[R][number]]: M extends keyof Readers[R] ? Later<Readers[R][M]> : never } }

type Call = (reader: keyof Readers, method: string, args: unknown[]) => unknown
type Read = (...args: unknown[]) => unknown

/** Every scanning read as a pair of its reader and its method. */
const EACH = (Object.entries(SCANS) as Array<[keyof Readers, readonly string[]]>).flatMap(([reader, methods]) => methods.map((method) => [reader, method] as const))

/** `regex` runs the regex operators of person and group filters (none given: a scan with one fails). */
function readersOf(db: Db, regex: RegexEngine | null): Readers {
  // Person and group filters reach the scans as conditions: HogQL ones and the regex operators call these.
  registerFilterFunctions(db, regex)
  return { listing: new PersonListing(db, regex), groups: new GroupReads(db), definitions: new DefinitionReads(db) }
}

/** The scanning reads, each made by `call`. */
function scansBy(call: Call): PersonScans {
  const scans: Record<string, Record<string, Read>> = {}
  for (const [reader, method] of EACH) (scans[reader] ??= {})[method] = (...args) => call(reader, method, args)
  return scans as unknown as PersonScans
}

/** Reads a reader's method on the calling thread. */
function readIn(readers: Readers): Call {
  return (reader, method, args) => (readers[reader] as unknown as Record<string, Read>)[method]!.apply(readers[reader], args)
}

/** The same reads on the calling thread: for a connection no other thread can open (tests' `:memory:`). */
export function inPlaceScans(db: Db, regex: RegexEngine | null = null): PersonScans {
  const read = readIn(readersOf(db, regex))
  return scansBy(async (reader, method, args) => read(reader, method, args))
}

const ENTRY = new URL('../../workers/person-query.js', import.meta.url)

export interface PersonScanThreadOptions {
  /** persons.db. */
  file: string
  /** The thread's entry module; the compiled workers/person-query.js by default. */
  entry?: URL
  /** Told the thread's id each time one starts (for logs). */
  onThreadStart?: (threadId: number) => void
  /** The thread's niceness (ReadThreadOptions.nice). */
  nice?: number
}

/** The scanning reads on a thread of their own; `close` ends it (a later read starts another). */
export function personScanThread(options: PersonScanThreadOptions): PersonScans & { close(): Promise<void> } {
  const thread = new ReadThread({ entry: options.entry ?? ENTRY, workerData: options.file, name: 'the persons query thread', onThreadStart: options.onThreadStart, nice: options.nice })
  return { ...scansBy((reader, method, args) => thread.call(`${reader}.${method}`, args)), close: () => thread.close() }
}

/**
 * The thread's side: its own read-only connection to persons.db, opened at the first read. The entry hands in
 * the flags' safe engine as `regex` (persons may not import flags).
 */
export function servePersonScans(port: MessagePort, file: string, regex: RegexEngine): void {
  serveReads(port, () => {
    const db = openDatabase(file, { readonly: true })
    const read = readIn(readersOf(db, regex))
    // Named `reader.method`, the scans only: the keyed lookups stay on the main thread.
    const reads: Record<string, Read> = {}
    for (const [reader, method] of EACH) reads[`${reader}.${method}`] = (...args) => read(reader, method, args)
    return { ...reads, close: () => db.close() }
  })
}
