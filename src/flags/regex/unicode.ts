/**
 * Named classes of the Rust syntax as code-point sets: `\p{..}` Unicode properties (read from the runtime's
 * own Unicode tables), Perl classes (`\d\s\w`, Unicode by default, ASCII under `(?-u)`) and POSIX classes.
 * Each set is computed once per name and cached.
 */
import { normalize, type CharSet } from './charset.js'

const GENERAL_CATEGORIES = 'L:Letter LC:Cased_Letter Lu:Uppercase_Letter Ll:Lowercase_Letter Lt:Titlecase_Letter Lm:Modifier_Letter Lo:Other_Letter M:Mark Mn:Nonspacing_Mark Mc:Spacing_Mark Me:Enclosing_Mark N:Number Nd:Decimal_Number Nl:Letter_Number No:Other_Number P:Punctuation Pc:Connector_Punctuation Pd:Dash_Punctuation Ps:Open_Punctuation Pe:Close_Punctuation Pi:Initial_Punctuation Pf:Final_Punctuation Po:Other_Punctuation S:Symbol Sm:Math_Symbol Sc:Currency_Symbol Sk:Modifier_Symbol So:Other_Symbol Z:Separator Zs:Space_Separator Zl:Line_Separator Zp:Paragraph_Separator C:Other Cc:Control Cf:Format Cs:Surrogate Co:Private_Use Cn:Unassigned'
const GC_ALIASES: Record<string, string> = { digit: 'Nd', punct: 'P', cntrl: 'Cc', combiningmark: 'M' }
const BINARY = 'ASCII AHex:ASCII_Hex_Digit Alpha:Alphabetic Any Assigned Bidi_C:Bidi_Control Bidi_M:Bidi_Mirrored CI:Case_Ignorable Cased CWCF:Changes_When_Casefolded CWCM:Changes_When_Casemapped CWL:Changes_When_Lowercased CWKCF:Changes_When_NFKC_Casefolded CWT:Changes_When_Titlecased CWU:Changes_When_Uppercased Dash DI:Default_Ignorable_Code_Point Dep:Deprecated Dia:Diacritic Emoji EComp:Emoji_Component EMod:Emoji_Modifier EBase:Emoji_Modifier_Base EPres:Emoji_Presentation ExtPict:Extended_Pictographic Ext:Extender Gr_Base:Grapheme_Base Gr_Ext:Grapheme_Extend Hex:Hex_Digit IDSB:IDS_Binary_Operator IDST:IDS_Trinary_Operator IDC:ID_Continue IDS:ID_Start Ideo:Ideographic Join_C:Join_Control LOE:Logical_Order_Exception Lower:Lowercase Math NChar:Noncharacter_Code_Point Pat_Syn:Pattern_Syntax Pat_WS:Pattern_White_Space QMark:Quotation_Mark Radical RI:Regional_Indicator STerm:Sentence_Terminal SD:Soft_Dotted Term:Terminal_Punctuation UIdeo:Unified_Ideograph Upper:Uppercase VS:Variation_Selector space:White_Space XIDC:XID_Continue XIDS:XID_Start'

/** UTS #18 loose matching, as regex-syntax: case, spaces, `_` and `-` are ignored, and an `is` prefix. */
function loose(name: string): string {
  const n = name.toLowerCase().replace(/[\s_-]/g, '')
  return n.startsWith('is') && n.length > 2 ? n.slice(2) : n
}

let names: Map<string, string> | null = null

function nameTable(): Map<string, string> {
  if (names !== null) return names
  names = new Map()
  for (const entry of GENERAL_CATEGORIES.split(' ')) {
    const [short, long] = entry.split(':')
    names.set(loose(short), `General_Category=${long}`)
    names.set(loose(long), `General_Category=${long}`)
  }
  for (const [alias, short] of Object.entries(GC_ALIASES)) names.set(alias, names.get(loose(short))!)
  for (const entry of BINARY.split(' ')) {
    const [a, b] = entry.split(':')
    const long = b ?? a
    names.set(loose(a), long)
    names.set(loose(long), long)
  }
  return names
}

function nativeAccepts(expr: string): boolean {
  try {
    new RegExp(`\\p{${expr}}`, 'u')
    return true
  } catch {
    return false
  }
}

const titleCase = (v: string): string => v.split(/[\s_-]+/).map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()).join('_')

/** The runtime's spelling of a Rust property name, or null when unknown (the pattern is then invalid). */
export function resolveProperty(raw: string): string | null {
  const eq = raw.search(/[=:]/)
  if (eq >= 0) {
    const key = loose(raw.slice(0, eq))
    const value = raw.slice(eq + 1).trim()
    const prefix =
      key === 'sc' || key === 'script' ? 'Script' : key === 'scx' || key === 'scriptextensions' ? 'Script_Extensions' : key === 'gc' || key === 'generalcategory' ? 'General_Category' : null
    if (prefix === null) return null
    if (prefix === 'General_Category') {
      const gc = nameTable().get(loose(value))
      return gc !== undefined && gc.startsWith('General_Category=') ? gc : null
    }
    for (const v of [value, titleCase(value)]) if (nativeAccepts(`${prefix}=${v}`)) return `${prefix}=${v}`
    return null
  }
  const known = nameTable().get(loose(raw))
  if (known !== undefined) return known
  for (const v of [raw.trim(), titleCase(raw.trim())]) if (nativeAccepts(`Script=${v}`)) return `Script=${v}`
  return null
}

let universe: string | null = null

/** Every scalar value once, in order; surrogates are skipped so unit offsets map back to code points. */
function allScalars(): string {
  if (universe !== null) return universe
  const parts: string[] = []
  for (let start = 0; start <= 0x10ffff; start += 0x1000) {
    const cps: number[] = []
    for (let cp = start; cp < start + 0x1000; cp++) if (cp < 0xd800 || cp > 0xdfff) cps.push(cp)
    parts.push(String.fromCodePoint(...cps))
  }
  universe = parts.join('')
  return universe
}

function unitToCodePoint(u: number): number {
  if (u < 0xd800) return u
  if (u < 0xf800) return u + 0x800
  return 0x10000 + ((u - 0xf800) >> 1)
}

const cache = new Map<string, CharSet>()

/** The members of a native class expression (e.g. `\p{Nd}` or `[\p{L}\p{M}]`), computed by one scan. */
function scan(expr: string): CharSet {
  let set = cache.get(expr)
  if (set !== undefined) return set
  const all = allScalars()
  const pairs: number[] = []
  for (const m of all.matchAll(new RegExp(`${expr}+`, 'gu'))) {
    const last = m.index + m[0].length - 1
    const lastCp = unitToCodePoint(last >= 1 && all.charCodeAt(last) >= 0xdc00 && all.charCodeAt(last) <= 0xdfff ? last - 1 : last)
    pairs.push(unitToCodePoint(m.index), lastCp)
  }
  set = normalize(pairs)
  cache.set(expr, set)
  universe = null // 4 MB; rebuilt on the next (rare) new property
  return set
}

export function propertySet(resolved: string): CharSet {
  return scan(`\\p{${resolved}}`)
}

/** re2's general categories, one or two letters as written: no Cn or LC, and its C is Cc, Cf, Co and Cs (no unassigned). */
const RE2_CATEGORIES: ReadonlySet<string> = new Set('Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs'.split(' '))
/** The scripts whose long name has four letters, as every short alias (Latn, Zyyy) has: re2 reads long names only. */
const FOUR_LETTER_SCRIPTS: ReadonlySet<string> = new Set(['Ahom', 'Cham', 'Kawi', 'Lisu', 'Modi', 'Newa', 'Thai', 'Toto'])

/**
 * re2's `\p{name}`: a general category, `Any`, or a script by its long name, each exactly as written (checked against
 * 18.16's re2: `\p{latin}`, `\p{Latn}`, `\p{Script=Latin}`, `\p{Alphabetic}`, `\p{Cn}` are refused there); null for
 * what re2 refuses.
 */
export function re2Property(name: string): CharSet | null {
  if (name === 'C') return scan('[\\p{Cc}\\p{Cf}\\p{Co}\\p{Cs}]')
  if (RE2_CATEGORIES.has(name) || name === 'Any') return propertySet(resolveProperty(name)!)
  if (name === 'Unknown' || (name.length === 4 && !FOUR_LETTER_SCRIPTS.has(name))) return null
  return nativeAccepts(`Script=${name}`) ? propertySet(`Script=${name}`) : null
}

const ASCII_DIGIT: CharSet = [48, 57]
const ASCII_SPACE: CharSet = [9, 13, 32, 32]
const ASCII_WORD: CharSet = [48, 57, 65, 90, 95, 95, 97, 122]

/** re2's `\d`, `\s`, `\w`: ASCII, its `\s` without \v. */
export function re2Class(letter: 'd' | 's' | 'w'): CharSet {
  return letter === 's' ? [9, 10, 12, 13, 32, 32] : perlClass(letter, false)
}

/** `\d`, `\s`, `\w`: Unicode (Rust's default) or ASCII under `(?-u)`. */
export function perlClass(letter: 'd' | 's' | 'w', unicode: boolean): CharSet {
  if (!unicode) return letter === 'd' ? ASCII_DIGIT : letter === 's' ? ASCII_SPACE : ASCII_WORD
  if (letter === 'd') return scan('\\p{Nd}')
  if (letter === 's') return scan('\\p{White_Space}')
  return scan('[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]')
}

/** A Map, as every table read with text from a pattern or a request (docs/architecture.md, "Decisions"). */
const POSIX: ReadonlyMap<string, number[]> = new Map(
  Object.entries({
    alnum: [48, 57, 65, 90, 97, 122],
    alpha: [65, 90, 97, 122],
    ascii: [0, 127],
    blank: [9, 9, 32, 32],
    cntrl: [0, 31, 127, 127],
    digit: [48, 57],
    graph: [33, 126],
    lower: [97, 122],
    print: [32, 126],
    punct: [33, 47, 58, 64, 91, 96, 123, 126],
    space: [9, 13, 32, 32],
    upper: [65, 90],
    word: [48, 57, 65, 90, 95, 95, 97, 122],
    xdigit: [48, 57, 65, 70, 97, 102],
  }),
)

export function posixClass(name: string): CharSet | null {
  return POSIX.get(name) ?? null
}
