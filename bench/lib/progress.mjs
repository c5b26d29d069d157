// What the suite prints while it runs: a status line redrawn in place on a terminal (a line every 5 s when
// stderr is a file), lines that stay, and how long the run has taken.
const tty = process.stderr.isTTY
const started = Date.now()
let lastPlain = 0

export function status(text) {
  if (tty) process.stderr.write(`\r\x1b[K${text}`)
  else if (Date.now() - lastPlain > 5000) {
    process.stderr.write(`  … ${text}\n`)
    lastPlain = Date.now()
  }
}

export function say(text) {
  if (tty) process.stderr.write('\r\x1b[K')
  process.stderr.write(text + '\n')
  lastPlain = 0
}

export const fmt = (n, digits = 0) =>
  n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

export const elapsedS = () => Math.round((Date.now() - started) / 1000)
export const elapsed = () => `${elapsedS()} s`
