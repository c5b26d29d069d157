import t from 'tap'
import LZString from 'lz-string'
import { lzRunOfA } from './values.js'

t.test("the directly written lz-string run of 'a' is what lz-string writes for it, and decompresses to it", async (t) => {
  // every run up to 150 phrases, and runs around the width's step from 8 to 9 bits (at code 256)
  for (const phrases of [...Array.from({ length: 150 }, (_, i) => i + 1), 252, 253, 254, 255, 300]) {
    const text = 'a'.repeat((phrases * (phrases + 1)) / 2)
    const direct = lzRunOfA(phrases)
    if (direct !== LZString.compressToBase64(text)) return t.fail(`differs for ${phrases} phrases`)
    if (LZString.decompressFromBase64(direct) !== text) return t.fail(`does not decompress for ${phrases} phrases`)
  }
  t.pass('equal for 1 to 150 phrases and around the step to 9 bits')
  const bomb = lzRunOfA(2290)
  t.ok(bomb.length < 30_000, `the bomb is small (${bomb.length} characters)`)
  t.equal(LZString.decompressFromBase64(bomb)?.length, (2290 * 2291) / 2)
})
