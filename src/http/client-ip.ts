/** The client's address: the first X-Forwarded-For entry (set by proxies), else the socket's. */
import type { RequestContext } from './types.js'

export function clientIp(ctx: RequestContext): string | null {
  const forwarded = ctx.headers['x-forwarded-for']
  if (forwarded) {
    const first = forwarded.split(',')[0].trim()
    if (first) return first.replace(/^\[|\](:\d+)?$/g, '')
  }
  const socket = ctx.remoteAddress
  if (!socket) return null
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
