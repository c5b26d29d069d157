/**
 * Flag-on-flag dependencies, planned the way PostHog does it (Django's `_compute_flag_dependencies`, consumed
 * by the Rust service): Kahn layers over the project's non-deleted flags, a dependency on a flag that does
 * not exist marks the dependent (and everything depending on it) "missing dependency", and flags in or
 * behind a cycle are never staged — so they are left out of responses and the response reports errors.
 */

export interface DependencyNode {
  id: number
  active: boolean
  /** Flag ids referenced by `type: "flag"` filters in the release conditions (inactive flags have none). */
  deps: readonly number[]
}

export interface DependencyPlan {
  /** Node positions in evaluation order: every dependency before its dependents. Cycle members are absent. */
  order: number[]
  /** Positions whose dependencies are missing, directly or transitively (they evaluate to false). */
  missing: Set<number>
  /** Positions that are in a cycle or depend on one. */
  cyclic: Set<number>
  /** Position → positions of its transitive dependencies. */
  transitive: Map<number, Set<number>>
}

export function planDependencies(nodes: readonly DependencyNode[]): DependencyPlan {
  const byId = new Map<number, number>()
  nodes.forEach((n, i) => byId.set(n.id, i))
  const inDegree = new Array<number>(nodes.length).fill(0)
  const dependents: number[][] = nodes.map(() => [])
  const missing = new Set<number>()
  nodes.forEach((n, i) => {
    if (byId.get(n.id) !== i) return // a later row with the same id replaces this one
    for (const d of n.deps) {
      const j = byId.get(d)
      if (j === undefined) missing.add(i)
      else {
        inDegree[i]++
        dependents[j].push(i)
      }
    }
  })
  const transitive = new Map<number, Set<number>>()
  const order: number[] = []
  let layer = nodes.map((_, i) => i).filter((i) => byId.get(nodes[i].id) === i && inDegree[i] === 0)
  while (layer.length > 0) {
    for (const i of layer) {
      const all = new Set<number>()
      for (const d of nodes[i].deps) {
        const j = byId.get(d)
        if (j === undefined) continue
        all.add(j)
        for (const t of transitive.get(j)!) all.add(t)
        if (missing.has(j)) missing.add(i)
      }
      transitive.set(i, all)
      order.push(i)
    }
    const next: number[] = []
    for (const i of layer) for (const k of dependents[i]) if (--inDegree[k] === 0) next.push(k)
    layer = next
  }
  const cyclic = new Set<number>()
  nodes.forEach((_, i) => {
    if (byId.get(nodes[i].id) === i && !transitive.has(i)) {
      cyclic.add(i)
      missing.add(i)
    }
  })
  return { order, missing, cyclic, transitive }
}
