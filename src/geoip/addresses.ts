/**
 * Which addresses are worth a GeoIP lookup: valid IPv4/IPv6 literals outside the loopback, private,
 * link-local, shared, documentation, multicast and other reserved ranges (IANA special-purpose registries).
 * IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`) are looked up as the IPv4 address they carry.
 */
import { BlockList, isIP } from 'node:net'

const NOT_ROUTED_V4: ReadonlyArray<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes 255.255.255.255
]

const NOT_ROUTED_V6: ReadonlyArray<[string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use IPv4/IPv6 translation
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
]

const blocked = new BlockList()
for (const [net, prefix] of NOT_ROUTED_V4) blocked.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of NOT_ROUTED_V6) blocked.addSubnet(net, prefix, 'ipv6')

export interface LookupAddress {
  family: 4 | 6
  /** The address to look up (the embedded IPv4 address for IPv4-mapped IPv6). */
  address: string
}

const MAPPED_DOTTED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i
const MAPPED_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i

function embeddedIpv4(address: string): string | null {
  const dotted = MAPPED_DOTTED.exec(address)
  if (dotted) return isIP(dotted[1]) === 4 ? dotted[1] : null
  const hex = MAPPED_HEX.exec(address)
  if (!hex) return null
  const high = parseInt(hex[1], 16)
  const low = parseInt(hex[2], 16)
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
}

/** The address to look up, or null when the text is not an IP literal or the address is not publicly routed. */
export function publicAddress(raw: string): LookupAddress | null {
  const text = raw.trim()
  const family = isIP(text)
  if (family === 4) return blocked.check(text, 'ipv4') ? null : { family: 4, address: text }
  if (family !== 6 || text.includes('%')) return null
  const v4 = embeddedIpv4(text)
  if (v4 !== null) return blocked.check(v4, 'ipv4') ? null : { family: 4, address: v4 }
  try {
    return blocked.check(text, 'ipv6') ? null : { family: 6, address: text }
  } catch {
    return null
  }
}
