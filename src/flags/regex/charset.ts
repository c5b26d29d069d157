/**
 * Sets of Unicode scalar values as sorted, merged inclusive ranges `[lo0, hi0, lo1, hi1, ...]`. Every class
 * of the Rust syntax (literals, `\d\w\s`, `\p{..}`, POSIX, nested classes and `&&`/`--`/`~~`) is reduced to
 * one of these at compile time, so matching a class is a binary search and never runs a user regex.
 */

export type CharSet = readonly number[]

export const MAX_CP = 0x10ffff
const SURROGATES: CharSet = [0xd800, 0xdfff]
export const EMPTY: CharSet = []

export function normalize(pairs: number[]): CharSet {
  const ranges: [number, number][] = []
  for (let i = 0; i < pairs.length; i += 2) ranges.push([pairs[i], pairs[i + 1]])
  ranges.sort((a, b) => a[0] - b[0])
  const out: number[] = []
  for (const [lo, hi] of ranges) {
    const last = out.length - 1
    if (last > 0 && lo <= out[last] + 1) out[last] = Math.max(out[last], hi)
    else out.push(lo, hi)
  }
  return out
}

export function single(cp: number): CharSet {
  return [cp, cp]
}

export function union(a: CharSet, b: CharSet): CharSet {
  return normalize([...a, ...b])
}

/** Complement within the scalar values (surrogates are never members, as in Rust). */
export function negate(a: CharSet): CharSet {
  const out: number[] = []
  let next = 0
  for (let i = 0; i < a.length; i += 2) {
    if (a[i] > next) out.push(next, a[i] - 1)
    next = a[i + 1] + 1
  }
  if (next <= MAX_CP) out.push(next, MAX_CP)
  return subtract(out, SURROGATES)
}

export function intersect(a: CharSet, b: CharSet): CharSet {
  const out: number[] = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i], b[j])
    const hi = Math.min(a[i + 1], b[j + 1])
    if (lo <= hi) out.push(lo, hi)
    if (a[i + 1] < b[j + 1]) i += 2
    else j += 2
  }
  return out
}

export function subtract(a: CharSet, b: CharSet): CharSet {
  const out: number[] = []
  let j = 0
  for (let i = 0; i < a.length; i += 2) {
    let lo = a[i]
    const hi = a[i + 1]
    while (j < b.length && b[j + 1] < lo) j += 2
    let k = j
    while (k < b.length && b[k] <= hi) {
      if (b[k] > lo) out.push(lo, b[k] - 1)
      lo = Math.max(lo, b[k + 1] + 1)
      k += 2
    }
    if (lo <= hi) out.push(lo, hi)
  }
  return out
}

export function symmetricDifference(a: CharSet, b: CharSet): CharSet {
  return union(subtract(a, b), subtract(b, a))
}

export function contains(set: CharSet, cp: number): boolean {
  let lo = 0
  let hi = (set.length >> 1) - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (cp < set[mid * 2]) hi = mid - 1
    else if (cp > set[mid * 2 + 1]) lo = mid + 1
    else return true
  }
  return false
}

// ---- case folding -----------------------------------------------------------------------------------

let foldTable: { cps: Int32Array; orbits: Map<number, number[]> } | null = null

function singleCodePoint(s: string): number | null {
  const cp = s.codePointAt(0)!
  return s.length === (cp > 0xffff ? 2 : 1) ? cp : null
}

/**
 * Simple case-folding orbits (the sets of characters that fold together), derived once from the runtime's
 * one-to-one case mappings. Dotted/dotless I are left alone, as Rust's (non-Turkic) folding does.
 */
function folds(): { cps: Int32Array; orbits: Map<number, number[]> } {
  if (foldTable !== null) return foldTable
  const byKey = new Map<number, number[]>()
  for (let cp = 0; cp <= 0x1ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue
    if (cp === 0x130 || cp === 0x131) continue
    const ch = String.fromCodePoint(cp)
    const upper = singleCodePoint(ch.toUpperCase()) ?? cp
    const key = singleCodePoint(String.fromCodePoint(upper).toLowerCase()) ?? upper
    if (key === cp && upper === cp && singleCodePoint(ch.toLowerCase()) === cp) continue
    const list = byKey.get(key)
    if (list === undefined) byKey.set(key, cp === key ? [cp] : [key, cp])
    else if (!list.includes(cp)) list.push(cp)
  }
  const orbits = new Map<number, number[]>()
  for (const list of byKey.values()) {
    if (list.length < 2) continue
    for (const cp of list) orbits.set(cp, list)
  }
  foldTable = { cps: Int32Array.from([...orbits.keys()].sort((a, b) => a - b)), orbits }
  return foldTable
}

/** Adds every case variant of every member; with `unicode` false only ASCII letters fold, as `(?-u)`. */
export function caseFold(set: CharSet, unicode: boolean): CharSet {
  const extra: number[] = []
  if (!unicode) {
    for (let i = 0; i < set.length; i += 2) {
      for (let cp = Math.max(set[i], 65); cp <= Math.min(set[i + 1], 122); cp++) {
        if (cp <= 90) extra.push(cp + 32, cp + 32)
        else if (cp >= 97) extra.push(cp - 32, cp - 32)
      }
    }
    return extra.length === 0 ? set : union(set, extra)
  }
  const { cps, orbits } = folds()
  for (let i = 0; i < set.length; i += 2) {
    let k = lowerBound(cps, set[i])
    for (; k < cps.length && cps[k] <= set[i + 1]; k++) for (const v of orbits.get(cps[k])!) extra.push(v, v)
  }
  return extra.length === 0 ? set : union(set, extra)
}

function lowerBound(arr: Int32Array, v: number): number {
  let lo = 0
  let hi = arr.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (arr[mid] < v) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The case variants of one character (itself included). */
export function variants(cp: number, unicode: boolean): number[] {
  if (!unicode) {
    if (cp >= 65 && cp <= 90) return [cp, cp + 32]
    if (cp >= 97 && cp <= 122) return [cp, cp - 32]
    return [cp]
  }
  return folds().orbits.get(cp) ?? [cp]
}
