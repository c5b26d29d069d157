/**
 * Compiles a parsed pattern to a flat instruction list for `engine.ts`. Counted repetitions are unrolled so
 * that every (instruction, position) pair is a complete search state — which is what lets the engine
 * memoise failures and run in linear time for every pattern without backreferences.
 */
import type { CharSet } from './charset.js'
import { fixedWidth, RegexSyntaxError, type AssertKind, type Node, type Parsed } from './ast.js'

export const enum Op {
  Char,
  Split,
  Jmp,
  Match,
  Assert,
  Save,
  Backref,
  Look,
  Atomic,
  SubMatch,
  LoopEnter,
  LoopCheck,
}

export interface Program {
  op: Op[]
  /** Operands: Char → set index; Split → preferred target; Jmp → target; Save/Loop → slot; Look/Atomic → body start. */
  a: number[]
  /** Split → other target; Backref → case-insensitive (1/0); Look → negated (1/0). */
  b: number[]
  /** Look → width for a look-behind, -1 for a look-ahead. */
  c: number[]
  sets: CharSet[]
  asserts: { kind: AssertKind; unicode: boolean }[]
  start: number
  slots: number
  backrefs: boolean
  fancy: boolean
}

/** Roughly Rust's default compiled-size limit: a pattern needing more states is rejected as invalid. */
export const MAX_INSTRUCTIONS = 300_000

/** Whether a node can match without taking a character (assertions and look-arounds count as such). */
export function nullable(n: Node): boolean {
  switch (n.type) {
    case 'set':
      return false
    case 'concat':
      return n.items.every(nullable)
    case 'alt':
      return n.items.some(nullable)
    case 'repeat':
      return n.min === 0 || nullable(n.node)
    case 'group':
    case 'atomic':
      return nullable(n.node)
    default:
      return true
  }
}

/**
 * `saves`: whether groups record where they match. Backreferences need it; a search that reports its groups
 * (SafeRegex.find) asks for it; a plain test skips it.
 */
export function compileProgram(parsed: Parsed, saves = parsed.backrefs): Program {
  const p: Program = { op: [], a: [], b: [], c: [], sets: [], asserts: [], start: 0, slots: (parsed.captures + 1) * 2, backrefs: parsed.backrefs, fancy: parsed.fancy }
  const setIndex = new Map<CharSet, number>()

  const emit = (op: Op, a = 0, b = 0, c = 0): number => {
    if (p.op.length >= MAX_INSTRUCTIONS) throw new RegexSyntaxError('compiled pattern too big')
    p.op.push(op)
    p.a.push(a)
    p.b.push(b)
    p.c.push(c)
    return p.op.length - 1
  }

  /** Bodies of look-arounds and atomic groups are compiled after the main program, each ending in SubMatch. */
  const pending: { node: Node; at: number }[] = []

  const gen = (n: Node): void => {
    switch (n.type) {
      case 'empty':
        return
      case 'set': {
        let i = setIndex.get(n.set)
        if (i === undefined) {
          i = p.sets.push(n.set) - 1
          setIndex.set(n.set, i)
        }
        emit(Op.Char, i)
        return
      }
      case 'concat':
        for (const item of n.items) gen(item)
        return
      case 'alt': {
        const jumps: number[] = []
        for (let k = 0; k < n.items.length; k++) {
          if (k < n.items.length - 1) {
            const split = emit(Op.Split)
            p.a[split] = split + 1
            gen(n.items[k])
            jumps.push(emit(Op.Jmp))
            p.b[split] = p.op.length
          } else gen(n.items[k])
        }
        for (const j of jumps) p.a[j] = p.op.length
        return
      }
      case 'group':
        if (n.capture !== null && saves) emit(Op.Save, n.capture * 2)
        gen(n.node)
        if (n.capture !== null && saves) emit(Op.Save, n.capture * 2 + 1)
        return
      case 'assert':
        emit(Op.Assert, p.asserts.push({ kind: n.kind, unicode: n.unicode }) - 1)
        return
      case 'backref':
        emit(Op.Backref, n.group, n.caseInsensitive ? 1 : 0)
        return
      case 'look': {
        let width = -1
        if (n.behind) {
          const w = fixedWidth(n.node)
          if (w === null) throw new RegexSyntaxError('look-behind must have a fixed width')
          width = w
        }
        pending.push({ node: n.node, at: emit(Op.Look, 0, n.negate ? 1 : 0, width) })
        return
      }
      case 'atomic':
        pending.push({ node: n.node, at: emit(Op.Atomic) })
        return
      case 'repeat':
        if (n.possessive) {
          pending.push({ node: { ...n, possessive: false }, at: emit(Op.Atomic) })
          return
        }
        for (let k = 0; k < n.min; k++) gen(n.node)
        if (n.max === Infinity) star(n.node, n.greedy)
        else for (let k = n.min; k < n.max; k++) optional(n.node, n.greedy)
        return
    }
  }

  const split = (greedy: boolean, body: number, skip: number, at: number): void => {
    p.a[at] = greedy ? body : skip
    p.b[at] = greedy ? skip : body
  }

  const star = (body: Node, greedy: boolean): void => {
    const loop = emit(Op.Split)
    const check = p.backrefs && nullable(body)
    const slot = check ? p.slots++ : 0
    if (check) emit(Op.LoopEnter, slot)
    gen(body)
    if (check) emit(Op.LoopCheck, slot)
    emit(Op.Jmp, loop)
    split(greedy, loop + 1, p.op.length, loop)
  }

  /** `x?`; `x{2,4}` becomes `xxx?x?`, which matches the same strings in the same preference order. */
  const optional = (body: Node, greedy: boolean): void => {
    const at = emit(Op.Split)
    gen(body)
    split(greedy, at + 1, p.op.length, at)
  }

  gen(parsed.node)
  emit(Op.Match)
  while (pending.length > 0) {
    const { node, at } = pending.shift()!
    p.a[at] = p.op.length
    gen(node)
    emit(Op.SubMatch)
  }
  return p
}
