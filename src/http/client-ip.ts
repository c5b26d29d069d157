/**
 * The client's address: the first X-Forwarded-For entry (set by proxies), else the socket's. As PostHog's
 * flag service reads the header: a port is dropped (`203.0.113.7:8080`, `[2001:db8::1]:443`), and an entry
 * that is not an address falls back to the socket's.
 */
import { isIP } from 'node:net'
import type { RequestContext } from './types.js'

/** The last socket address and what it mapped to: kept-alive clients send many requests from one address. */
let lastSocket = ''
let lastIp: string | null = null

export function clientIp(ctx: RequestContext): string | null {
  const forwarded = ctx.headers['x-forwarded-for']
  if (forwarded) {
    const first = forwarded.split(',')[0].trim()
    const address = first.startsWith('[') ? first.replace(/^\[|\](:\d+)?$/g, '') : first.replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1')
    if (isIP(address) !== 0) return address
  }
  const socket = ctx.remoteAddress
  if (!socket) return null
  if (socket !== lastSocket) {
    lastIp = socketIp(socket)
    lastSocket = socket
  }
  return lastIp
}

function socketIp(socket: string): string {
  // uWS reports IPv4 clients of a dual-stack socket as IPv4-mapped IPv6 addresses.
  const mapped = /^(?:0{1,4}:){5}ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(socket) ?? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(socket)
  if (mapped && mapped.length === 3) {
    const hi = parseInt(mapped[1], 16)
    const lo = parseInt(mapped[2], 16)
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  }
  if (mapped) return mapped[1]
  return socket
}
