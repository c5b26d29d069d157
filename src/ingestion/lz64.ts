/**
 * LZString.decompressFromBase64 with an output bound. Old posthog-js and posthog-node's form mode send
 * `compression=lz64` bodies; the lz-string package has no size limit, and an LZW stream can expand
 * quadratically, so a small hostile body could exhaust memory. This is the same algorithm, stopping as
 * soon as the output passes `maxChars`. Tests check it against the lz-string package.
 */

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='
const BASE64_VALUE = new Int16Array(128).fill(-1)
for (let i = 0; i < BASE64.length; i++) BASE64_VALUE[BASE64.charCodeAt(i)] = i

export class DecompressedTooLarge extends Error {
  constructor() {
    super('decompressed body is over the limit')
    this.name = 'DecompressedTooLarge'
  }
}

/** Returns the decompressed text, or null when the input is not a valid lz-string stream. */
export function decompressLz64(input: string, maxChars: number): string | null {
  if (input.length === 0) return null
  const length = input.length
  const valueAt = (index: number): number => {
    const code = input.charCodeAt(index)
    const v = code < 128 ? BASE64_VALUE[code] : -1
    return v < 0 ? 0 : v
  }
  const resetValue = 32
  let val = valueAt(0)
  let position = resetValue
  let index = 1

  const readBits = (n: number): number => {
    let bits = 0
    let power = 1
    const max = 1 << n
    while (power !== max) {
      const bit = val & position
      position >>= 1
      if (position === 0) {
        position = resetValue
        val = valueAt(index++)
      }
      if (bit > 0) bits |= power
      power <<= 1
    }
    return bits
  }

  const dictionary: string[] = ['', '', '']
  let enlargeIn = 4
  let dictSize = 4
  let numBits = 3
  let c: string
  switch (readBits(2)) {
    case 0:
      c = String.fromCharCode(readBits(8))
      break
    case 1:
      c = String.fromCharCode(readBits(16))
      break
    case 2:
      return ''
    default:
      return null
  }
  dictionary[3] = c
  let w = c
  const parts: string[] = [c]
  let total = 1

  for (;;) {
    if (index > length) return ''
    let cc = readBits(numBits)
    switch (cc) {
      case 0:
        dictionary[dictSize++] = String.fromCharCode(readBits(8))
        cc = dictSize - 1
        enlargeIn--
        break
      case 1:
        dictionary[dictSize++] = String.fromCharCode(readBits(16))
        cc = dictSize - 1
        enlargeIn--
        break
      case 2:
        return parts.join('')
    }
    if (enlargeIn === 0) {
      enlargeIn = 1 << numBits
      numBits++
    }
    let entry: string
    if (cc < dictSize && dictionary[cc] !== undefined && cc > 2) entry = dictionary[cc]
    else if (cc === dictSize) entry = w + w.charAt(0)
    else return null
    total += entry.length
    if (total > maxChars) throw new DecompressedTooLarge()
    parts.push(entry)
    dictionary[dictSize++] = w + entry.charAt(0)
    enlargeIn--
    w = entry
    if (enlargeIn === 0) {
      enlargeIn = 1 << numBits
      numBits++
    }
  }
}
