import t from 'tap'
import { packRows, PackedReader } from '../../../src/storage/events/packed-rows.js'
import type { EventRow } from '../../../src/storage/events/types.js'

/** Strings of 3-byte characters (the most UTF-8 bytes per UTF-16 unit), emoji, a lone surrogate, and nulls. */
const row = (i: number, text: string): EventRow => ({
  uuid: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  team_id: i,
  event: '€'.repeat(i),
  distinct_id: text,
  person_id: '漢字',
  properties: JSON.stringify({ text, i }),
  timestamp: 1_700_000_000_000 + i + 0.5,
  created_at: 1_700_000_000_001,
  groups: [text, '', null, '\ud800', '😀'.repeat(i)] as unknown as EventRow['groups'],
  elements_chain: '',
})

function unpack(buf: Buffer): unknown[][] {
  const reader = new PackedReader(buf)
  const out: unknown[][] = []
  while (!reader.done) {
    const fields: unknown[] = [reader.number(), reader.number(), reader.number()]
    for (let s = 0; s < 11; s++) fields.push(reader.text())
    out.push(fields)
  }
  return out
}

const expected = (r: EventRow) => [r.team_id, r.timestamp, r.created_at, r.uuid, r.event, r.distinct_id, r.person_id, r.properties, ...r.groups, r.elements_chain]

t.test('packed rows read back exactly, whatever their characters, into a fresh or a handed-back buffer', async (t) => {
  const rows = Array.from({ length: 40 }, (_, i) => row(i, 'ü漢€'.repeat(i * 50)))
  // A lone surrogate is written as U+FFFD, as every UTF-8 encoder writes it.
  const want = rows.map(expected).map((fields) => fields.map((f) => (f === '\ud800' ? '\ufffd' : f)))

  const fresh = packRows(rows)
  t.same(unpack(fresh), want, 'a new buffer')
  t.equal(fresh.byteOffset, 0, 'the rows start the buffer the insert thread receives')

  const tooSmall = new ArrayBuffer(16)
  const intoNew = packRows(rows, tooSmall)
  t.not(intoNew.buffer, tooSmall, 'a handed-back buffer too small for the rows is not used')
  t.same(unpack(intoNew), want)

  const reused = packRows(rows.slice(0, 10), fresh.buffer as ArrayBuffer)
  t.equal(reused.buffer, fresh.buffer, 'a handed-back buffer large enough is reused')
  t.same(unpack(reused), want.slice(0, 10), 'and ends where its rows end, not where the last batch did')
})
