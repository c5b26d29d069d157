import t from 'tap'
import { CLOSE_BRACE, COMMA, JsonText, OPEN_BRACE } from '../../../src/common/json-text.js'

function textOf(pieces: Array<string | Uint8Array | number>): JsonText {
  const text = new JsonText()
  for (const piece of pieces) text.add(piece)
  return text
}

t.test('a text in pieces writes the UTF-8 bytes of its joined pieces, non-ASCII and surrogate pairs included', async (t) => {
  const text = textOf([OPEN_BRACE, '"a":"ü€"', COMMA, Buffer.from('"b":"🦜"'), COMMA, '"c":', new Uint8Array(), '[]', CLOSE_BRACE])
  const joined = '{"a":"ü€","b":"🦜","c":[]}'
  const buf = Buffer.alloc(text.bound + 10, 0xff)
  const end = text.write(buf, 5)
  t.equal(buf.toString('utf8', 5, end), joined)
  t.equal(end - 5, Buffer.byteLength(joined))
  t.equal(text.byteLength(), Buffer.byteLength(joined), 'byteLength is exact')
  t.ok(text.bound >= text.byteLength(), 'bound is never below the bytes written')
  t.equal(buf[4], 0xff, 'nothing written before `at`')
  t.equal(buf[end], 0xff, 'nothing written past the end')
  t.equal(text.toString(), joined)
})

t.test('an empty text writes nothing', async (t) => {
  const text = new JsonText()
  t.equal(text.write(Buffer.alloc(4), 2), 2)
  t.equal(text.toString(), '')
  t.equal(text.byteLength(), 0)
})

t.test("an object added open loses its closing brace to the next piece, in a buffer of exactly the text's bytes", async (t) => {
  for (const open of ['{"a":"ü"}', Buffer.from('{"b":"🦜"}')]) {
    const text = new JsonText()
    text.addOpen(open)
    text.add(COMMA)
    text.add('"c":1')
    text.add(CLOSE_BRACE)
    const joined = `${open.toString().slice(0, -1)},"c":1}`
    const buf = Buffer.alloc(text.byteLength())
    t.equal(text.byteLength(), Buffer.byteLength(joined), 'byteLength counts the brace out')
    t.equal(text.write(buf, 0), buf.length, 'it fills the buffer exactly')
    t.equal(buf.toString(), joined)
    t.equal(text.toString(), joined)
  }
})
