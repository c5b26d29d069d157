// Flame graphs of V8 .cpuprofile files, as self-contained SVG (no script): each box is a function in one
// call stack, as wide as the time sampled in it and in what it called; callers below callees. V8 samples a
// thread's stack whether it computes or blocks in a system call, so a blocking call is as wide as it
// blocks: "busy", as the self-time summary says, not CPU. Boxes of the same function under the same caller
// are merged, siblings are in name order (so two graphs compare side by side), and the time of waiting
// frames (WAITING: V8's idle marker, piscina's wait between tasks) is left out, as in the self-time summary.
// Hovering a box shows its name, time and share.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { frameName, WAITING } from './profile.mjs'
import { xml } from './report.mjs'

const WIDTH = 1200
const ROW = 16
const TOP = 36
const BOTTOM = 8
const CHAR_PX = 6.6 // at font-size 11 in the default sans-serif: a label gets as many characters as fit

/**
 * The profile as a tree of frames merged by name: { name, us (time in it and below), children }, rooted at
 * V8's "(root)". `us` counts each sample's time delta at its leaf and every frame above it.
 */
export function callTree(profile, root) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfUs = new Map()
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]
    if (WAITING.has(byId.get(id).callFrame.functionName)) continue
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  const childIds = new Set(profile.nodes.flatMap((node) => node.children ?? []))
  const top = profile.nodes.find((node) => !childIds.has(node.id))
  const merged = { name: frameName(root, top.callFrame), us: 0, children: new Map() }
  const parentOf = new Map()
  // Iterative, not recursive: deep stacks (recursion in the profiled code) must not overflow this one.
  const stack = [[top, merged]]
  const order = [] // parents before their children
  while (stack.length > 0) {
    const [node, into] = stack.pop()
    into.us += selfUs.get(node.id) ?? 0
    for (const id of node.children ?? []) {
      const child = byId.get(id)
      const name = frameName(root, child.callFrame)
      let next = into.children.get(name)
      if (!next) {
        into.children.set(name, (next = { name, us: 0, children: new Map() }))
        parentOf.set(next, into)
        order.push(next)
      }
      stack.push([child, next])
    }
  }
  // Walking back adds each frame's time to its caller's once, callees first.
  for (let i = order.length - 1; i >= 0; i--) parentOf.get(order[i]).us += order[i].us
  return merged
}

/**
 * The flame graph of one profile. Frames narrower than `minFraction` of the total are left out (their time
 * stays in their caller's box), which keeps a graph of a long profile to a few hundred boxes.
 */
export function flameSvg(profile, { root, title, minFraction = 0.001 } = {}) {
  const tree = callTree(profile, root)
  const total = tree.us
  const boxes = []
  let depth = 0
  if (total > 0) {
    const lay = [[tree, 0, 0]]
    while (lay.length > 0) {
      const [frame, x, level] = lay.pop()
      boxes.push({ frame, x, level })
      depth = Math.max(depth, level)
      let at = x
      for (const name of [...frame.children.keys()].sort()) {
        const child = frame.children.get(name)
        if (child.us / total >= minFraction) lay.push([child, at, level + 1])
        at += child.us
      }
    }
  }
  const height = TOP + (depth + 1) * ROW + BOTTOM
  const scale = total > 0 ? WIDTH / total : 0
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    `<text x="4" y="16" font-size="13">${xml(title ?? 'CPU profile')}</text>`,
    `<text x="4" y="30" fill="#555">${xml(`${ms(total)} busy (sampled; a blocking call counts while it blocks), waiting left out; a box is a function with what it called, callers below`)}</text>`,
  ]
  for (const { frame, x, level } of boxes) {
    const w = frame.us * scale
    const y = height - BOTTOM - (level + 1) * ROW
    const share = `${((100 * frame.us) / total).toFixed(1)} %`
    const label = level === 0 ? `all (${ms(total)})` : frame.name
    const fits = Math.floor((w - 6) / CHAR_PX)
    const text = fits >= 3 ? (label.length <= fits ? label : `${label.slice(0, fits - 1)}…`) : ''
    out.push(
      `<g><title>${xml(`${label} — ${ms(frame.us)}, ${share}`)}</title>` +
        `<rect x="${x * scale}" y="${y}" width="${Math.max(w - 0.5, 0.1)}" height="${ROW - 1}" fill="${colour(frame.name)}"/>` +
        (text ? `<text x="${x * scale + 3}" y="${y + ROW - 4}">${xml(text)}</text>` : '') +
        '</g>',
    )
  }
  out.push('</svg>')
  return out.join('\n') + '\n'
}

function ms(us) {
  return `${(us / 1000).toFixed(us < 10_000 ? 2 : 0)} ms`
}

/** Warm colours for the service's code, green for dependencies, blue for Node's own, grey for V8's markers. */
function colour(name) {
  let hash = 0
  for (let i = 0; i < name.length; i++) hash = (Math.imul(hash, 31) + name.charCodeAt(i)) | 0
  const light = 62 + (Math.abs(hash) % 16)
  if (name.includes('node_modules/')) return `hsl(110, 45%, ${light}%)`
  if (name.includes(' node:')) return `hsl(210, 55%, ${light}%)`
  if (name.includes('dist/') || name.includes('src/') || name.includes('workers/')) return `hsl(${18 + (Math.abs(hash) % 30)}, 80%, ${light}%)`
  return `hsl(0, 0%, ${light + 8}%)`
}

/** Writes the flame graph of the .cpuprofile at `profilePath` to `svgPath`, names relative to `root`. */
export function writeFlameGraph(profilePath, svgPath, { root, title }) {
  const profile = JSON.parse(readFileSync(profilePath, 'utf8'))
  mkdirSync(dirname(svgPath), { recursive: true })
  writeFileSync(svgPath, flameSvg(profile, { root, title }))
}
