/**
 * A JSON text kept as the pieces it is made of and written straight into a buffer: strings are encoded,
 * byte arrays (text encoded once and reused, such as a GeoIP result's members) copied, numbers written as
 * one ASCII byte (punctuation). The consumer makes a stored event's properties this way: joined into one
 * string first, the text was built, flattened and encoded whole for every event, the GeoIP half included.
 */
export type JsonPiece = string | Uint8Array | number

/** A piece that steps back one byte, so that the next piece overwrites the last byte written (addOpen). */
const BACK = -1

export const COMMA = 0x2c
export const OPEN_BRACE = 0x7b
export const CLOSE_BRACE = 0x7d

export class JsonText {
  readonly #pieces: JsonPiece[] = []
  #bound = 0

  add(piece: JsonPiece): void {
    this.#pieces.push(piece)
    this.#bound += typeof piece === 'string' ? 3 * piece.length : typeof piece === 'number' ? 1 : piece.length
  }

  /**
   * Adds an object's text (`{…}`, not `{}`) but for its closing brace: the text is written whole, and the
   * piece added next (one must follow) overwrites the brace. Slicing the brace off made a substring or a view
   * for every event.
   */
  addOpen(objectText: string | Uint8Array): void {
    this.add(objectText)
    this.#pieces.push(BACK)
  }

  /** At least the bytes write() takes (no UTF-16 unit takes more than 3 in UTF-8), without measuring. */
  get bound(): number {
    return this.#bound
  }

  /** The exact bytes write() takes. */
  byteLength(): number {
    let bytes = 0
    for (const piece of this.#pieces) bytes += typeof piece === 'string' ? Buffer.byteLength(piece) : typeof piece === 'number' ? (piece === BACK ? -1 : 1) : piece.length
    return bytes
  }

  /** Writes the text's UTF-8 bytes at `at` (`buf` has room: bound or byteLength); returns where they end. */
  write(buf: Buffer, at: number): number {
    for (const piece of this.#pieces) {
      if (typeof piece === 'string') at += buf.write(piece, at)
      else if (piece === BACK) at--
      else if (typeof piece === 'number') buf[at++] = piece
      else {
        buf.set(piece, at)
        at += piece.length
      }
    }
    return at
  }

  toString(): string {
    const buf = Buffer.allocUnsafe(this.#bound)
    return buf.toString('utf8', 0, this.write(buf, 0))
  }
}
