/** A cursor over a pattern's code points, with the small lexical pieces the parser and class reader share. */
import { MAX_CP } from './charset.js'
import { RegexSyntaxError, type Flags } from './ast.js'

export class Scanner {
  readonly cps: number[]
  pos = 0
  /** Nesting of groups and classes, bounded like regex-syntax's nest limit. */
  depth = 0

  constructor(pattern: string) {
    this.cps = Array.from(pattern, (c) => c.codePointAt(0)!)
  }

  get done(): boolean {
    return this.pos >= this.cps.length
  }

  /** The character `offset` ahead, or '' past the end. */
  peek(offset = 0): string {
    const cp = this.cps[this.pos + offset]
    return cp === undefined ? '' : String.fromCodePoint(cp)
  }

  /** Consumes `s` if the input continues with it. */
  eat(s: string): boolean {
    for (let k = 0; k < s.length; k++) if (this.peek(k) !== s[k]) return false
    this.pos += s.length
    return true
  }

  nest(): void {
    if (++this.depth > 250) throw new RegexSyntaxError('nest limit exceeded')
  }

  /** In verbose mode (`x`), whitespace and `#` comments between tokens are ignored. */
  skipVerbose(flags: Flags): void {
    if (!flags.x) return
    for (;;) {
      const c = this.peek()
      if (c !== '' && /\s/.test(c)) this.pos++
      else if (c === '#') while (this.peek() !== '' && this.peek() !== '\n') this.pos++
      else return
    }
  }

  /** Everything up to `close` (consumed), e.g. a group name or `{...}` contents. */
  until(close: string, what: string): string {
    let s = ''
    while (this.peek() !== close) {
      if (this.peek() === '') throw new RegexSyntaxError(`unclosed ${what}`)
      s += this.peek()
      this.pos++
    }
    this.pos++
    return s
  }

  /** A group name after `<`, up to `>`. */
  name(): string {
    const name = this.until('>', 'group name')
    if (!/^[_A-Za-z][_A-Za-z0-9.[\]]*$/.test(name)) throw new RegexSyntaxError('invalid capture group name')
    return name
  }

  /** A hex code point: `{...}` when `braced`, else up to `maxDigits` digits (at least `minDigits`). */
  hex(minDigits: number, maxDigits: number, braced: boolean): number {
    let s = ''
    if (braced) s = this.until('}', 'hex escape')
    else
      for (let k = 0; k < maxDigits && /^[0-9a-fA-F]$/.test(this.peek()); k++) {
        s += this.peek()
        this.pos++
      }
    if (!/^[0-9a-fA-F]+$/.test(s) || s.length < minDigits || s.length > 8) throw new RegexSyntaxError('invalid hex escape')
    const cp = parseInt(s, 16)
    if (cp > MAX_CP || (cp >= 0xd800 && cp <= 0xdfff)) throw new RegexSyntaxError('invalid code point')
    return cp
  }
}
