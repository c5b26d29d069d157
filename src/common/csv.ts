/**
 * Rows as CSV, as PostHog's lists write them with `?format=csv` (rest_framework_csv's PaginatedCSVRenderer):
 * nested objects and lists flattened into dotted columns (`properties.email`, `distinct_ids.0`; an empty one
 * gives none), the columns in the order they first appear, each value as Python's csv module writes it (`True`,
 * `False`, nothing for null), quoted only where it holds a comma, a quote or a line break, lines ended by CRLF.
 */

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

/** A value's text as Python's str() writes it. */
const text = (value: unknown): string => (typeof value === 'boolean' ? (value ? 'True' : 'False') : String(value))

/** RFC 4180 quoting where needed (Python's QUOTE_MINIMAL). */
const field = (value: string): string => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value)

/** A column name's node: its number where a value sits there, and the names nested under it. */
interface Column {
  readonly name: string
  number: number
  readonly nested: Map<string, Column>
}

/**
 * Rows added one at a time, kept as their CSV lines (an export's pages are let go as they are read). Without
 * `columns`, the columns are numbered as they first appear and a line shorter than the header is padded at the
 * end; with them (PostHog's export `columns`, the renderer's header), the header is those names in that order,
 * each line their values, and any other value is left out.
 */
export class CsvTable {
  readonly #names: string[] = []
  readonly #root: Column = { name: '', number: -1, nested: new Map() }
  readonly #lines: string[] = []
  /** How many cells each line holds (a line is padded to the header's length at the end). */
  readonly #widths: number[] = []
  readonly #fixed: boolean
  /** Characters of the lines so far. */
  chars = 0

  constructor(columns?: readonly string[]) {
    this.#fixed = columns !== undefined && columns.length > 0
    if (!this.#fixed) return
    for (const name of columns!) {
      // A dotted name is found by its parts, as a flattened value's name is built.
      let at = this.#root
      for (const part of name.split('.')) at = this.#under(at, part)
      if (at.number < 0) at.number = this.#names.push(name) - 1
    }
  }

  get rows(): number {
    return this.#lines.length
  }

  add(row: unknown): void {
    // Names are looked up by their parts in a tree, not built as text per cell: 10,000 person rows (1 MB) take
    // 6 ms here once compiled, where building and hashing each cell's name took 57–95 ms.
    const cells: unknown[] = []
    this.#visit(row, this.#root, cells)
    const width = this.#fixed ? this.#names.length : cells.length
    const fields = new Array<string>(width)
    for (let k = 0; k < width; k++) {
      const value = cells[k]
      fields[k] = value === null || value === undefined ? '' : field(text(value))
    }
    // join() makes one flat string: a line built with += is a rope of a node per piece, and an export holds
    // hundreds of thousands of lines (with ropes, a 100,000-event export peaked ≈100 MB higher).
    const line = fields.join(',')
    this.#lines.push(line)
    this.#widths.push(width)
    this.chars += line.length + 2
  }

  /** The header and every line, CRLF after each; nothing when no row was added. */
  text(): string {
    if (this.#lines.length === 0) return ''
    const width = this.#names.length
    const lines = [this.#names.map(field).join(',')]
    for (let i = 0; i < this.#lines.length; i++) lines.push(this.#widths[i]! < width ? this.#lines[i]! + ','.repeat(width - this.#widths[i]!) : this.#lines[i]!)
    lines.push('')
    // One join: the text is flat once, where a template around a join is flattened again by whoever reads it.
    return lines.join('\r\n')
  }

  #under(at: Column, key: string): Column {
    let column = at.nested.get(key)
    if (column === undefined) at.nested.set(key, (column = { name: at.name === '' ? key : `${at.name}.${key}`, number: -1, nested: new Map() }))
    return column
  }

  #visit(value: unknown, at: Column, cells: unknown[]): void {
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) this.#visit(value[i], this.#under(at, String(i)), cells)
    else if (isObject(value)) for (const key in value) this.#visit(value[key], this.#under(at, key), cells)
    else {
      if (at.number < 0) {
        if (this.#fixed) return
        at.number = this.#names.push(at.name) - 1
      }
      cells[at.number] = value
    }
  }
}

/** Rows as one CSV text (CsvTable without `columns`). */
export function csvOf(rows: readonly unknown[]): string {
  const table = new CsvTable()
  for (const row of rows) table.add(row)
  return table.text()
}

/**
 * CSV text as rows of fields, as Python's csv.reader reads each line PostHog's upload hands it: commas between
 * fields, double quotes around a field that holds commas or quotes (`""` for one), and an empty line an empty
 * row.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  for (const line of text.split(/\r\n|\r|\n/)) {
    const row: string[] = []
    if (line !== '') {
      let field = ''
      let quoted = false
      for (let i = 0; i < line.length; i++) {
        const c = line[i]!
        if (quoted && c === '"' && line[i + 1] === '"') {
          field += '"'
          i++
        } else if (quoted && c === '"') quoted = false
        else if (!quoted && c === '"' && field === '') quoted = true
        else if (!quoted && c === ',') {
          row.push(field)
          field = ''
        } else field += c
      }
      row.push(field)
    }
    rows.push(row)
  }
  if (text.endsWith('\n') || text.endsWith('\r')) rows.pop()
  return rows
}
