/**
 * Writes a parsed pattern as JavaScript source for V8's linear-time engine (`l` flag). The source is only
 * ever run on ASCII input, so every class is projected onto ASCII: on ASCII text Rust's Unicode `\w`, `\d`,
 * `\s`, `\b` and case folding agree with these projections. Anything V8's engine cannot run in linear time
 * (look-around, backreferences, atomic groups, multi-line anchors, half word boundaries) is not emitted.
 */
import type { CharSet } from './charset.js'
import type { Node } from './ast.js'

export class NotEmittable extends Error {}

const hex = (cp: number): string => '\\x' + cp.toString(16).padStart(2, '0')

function asciiClass(set: CharSet): string {
  const parts: string[] = []
  let count = 0
  let only = -1
  for (let i = 0; i < set.length && set[i] <= 127; i += 2) {
    const lo = set[i]
    const hi = Math.min(set[i + 1], 127)
    parts.push(lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)
    count += hi - lo + 1
    only = lo
  }
  if (count === 1) return hex(only)
  return `[${parts.join('')}]`
}

/** The source and a size estimate (states of the linear engine's automaton, repetitions unrolled). */
export function emitLinear(node: Node): { source: string; size: number } {
  switch (node.type) {
    case 'empty':
      return { source: '(?:)', size: 1 }
    case 'set':
      return { source: asciiClass(node.set), size: 1 }
    case 'concat': {
      const parts = node.items.map(emitLinear)
      return { source: parts.map((p) => p.source).join(''), size: parts.reduce((s, p) => s + p.size, 0) }
    }
    case 'alt': {
      const parts = node.items.map(emitLinear)
      return { source: `(?:${parts.map((p) => p.source).join('|')})`, size: parts.reduce((s, p) => s + p.size, 1) }
    }
    case 'group':
      return (({ source, size }) => ({ source: `(?:${source})`, size }))(emitLinear(node.node))
    case 'repeat': {
      if (node.possessive) throw new NotEmittable()
      const inner = emitLinear(node.node)
      const q = node.max === Infinity ? (node.min === 0 ? '*' : node.min === 1 ? '+' : `{${node.min},}`) : node.min === 0 && node.max === 1 ? '?' : node.min === node.max ? `{${node.min}}` : `{${node.min},${node.max}}`
      const copies = node.max === Infinity ? Math.max(node.min, 1) : Math.max(node.max, 1)
      return { source: `(?:${inner.source})${q}${node.greedy ? '' : '?'}`, size: inner.size * copies + 1 }
    }
    case 'assert':
      switch (node.kind) {
        case 'start':
          return { source: '^', size: 1 }
        case 'end':
          return { source: '$', size: 1 }
        case 'word':
          return { source: '\\b', size: 1 }
        case 'notWord':
          return { source: '\\B', size: 1 }
        default:
          throw new NotEmittable()
      }
    default:
      throw new NotEmittable()
  }
}
