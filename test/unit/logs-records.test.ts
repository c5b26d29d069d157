/**
 * OTLP logs requests made into stored rows, as PostHog's capture-logs makes them: both wire forms, severity
 * rules, times, resources and scopes, ids; and malformed requests refused with the contract's envelope.
 */
import t from 'tap'
import { AppError } from '../../src/common/errors.js'
import { decodeLogsRequest, logRows } from '../../src/logs/index.js'
import { parseLogsQuery } from '../../src/logs/input.js'

const NOW = Date.UTC(2026, 11, 4, 12, 0, 0)
const NOW_NS = `${NOW}000000`
let n = 0
const ctx = { teamId: 7, nowMs: NOW, uuid: () => `uuid-${++n}` }

function rowsOf(body: unknown) {
  return logRows(decodeLogsRequest(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))), ctx)
}

const request = (records: unknown[], resource: unknown = { attributes: [{ key: 'service.name', value: { stringValue: 'api' } }] }, scope: unknown = { name: 's', version: '1' }) => ({
  resourceLogs: [{ resource, scopeLogs: [{ scope, logRecords: records }] }],
})

t.test('severity: the record number wins, then a JSON body level, then the text (unknown is info)', async (t) => {
  const rows = rowsOf(
    request([
      { severityNumber: 18, severityText: 'INFO', body: { stringValue: 'a' }, timeUnixNano: NOW_NS },
      { severityText: 'WARNING', body: { stringValue: 'b' }, timeUnixNano: NOW_NS },
      { severityText: 'info', body: { stringValue: '{"level":"Error","x":1}' }, timeUnixNano: NOW_NS },
      { severityText: 'loud', body: { stringValue: 'd' }, timeUnixNano: NOW_NS },
      { severityNumber: 30, body: { stringValue: 'e' }, timeUnixNano: NOW_NS },
      { severityText: 'crit', body: { stringValue: 'f' }, timeUnixNano: NOW_NS },
    ]),
  )
  t.same(
    rows.map((r) => [r.severity_text, r.severity_number]),
    [['error', 18], ['warn', 13], ['error', 17], ['info', 9], ['unknown', 30], ['fatal', 21]],
  )
})

t.test('times: nanoseconds kept to the microsecond; absent is now; more than a day away is now, the sent one kept', async (t) => {
  const oneHourAgo = BigInt(NOW - 3_600_000) * 1_000_000n + 123_456_789n
  const rows = rowsOf(
    request([
      { timeUnixNano: oneHourAgo.toString(), body: { stringValue: 'a' } },
      { body: { stringValue: 'b' } },
      { timeUnixNano: 1_577_836_800_000_000_000, body: { stringValue: 'c' } },
      { timeUnixNano: '1577836800123000000', body: { stringValue: 'd' } },
    ]),
  )
  t.equal(rows[0]!.timestamp, Number(oneHourAgo / 1000n))
  t.equal(rows[1]!.timestamp, NOW * 1000)
  t.equal(rows[2]!.timestamp, NOW * 1000)
  t.equal(rows[2]!.attributes.$originalTimestamp, '2020-01-01T00:00:00+00:00')
  t.equal(rows[3]!.attributes.$originalTimestamp, '2020-01-01T00:00:00.123+00:00')
  t.ok(rows.every((r) => r.observed_timestamp === NOW * 1000))
})

t.test('values: strings as themselves, the rest as JSON; bodies likewise', async (t) => {
  const [row] = rowsOf(
    request([
      {
        timeUnixNano: NOW_NS,
        body: { kvlistValue: { values: [{ key: 'a', value: { intValue: '9007199254740993' } }, { key: 'b', value: { arrayValue: { values: [{ boolValue: true }, { doubleValue: 1.5 }] } } }] } },
        attributes: [
          { key: 's', value: { stringValue: 'x' } },
          { key: 'i', value: { intValue: 42 } },
          { key: 'd', value: { doubleValue: 'NaN' } },
          { key: 'bytes', value: { bytesValue: Buffer.from('hi').toString('base64') } },
          { key: 'empty' },
        ],
      },
    ]),
  )
  t.equal(row!.body, '{"a":9007199254740993,"b":[true,1.5]}', 'a 64-bit integer keeps its digits')
  t.same(row!.attributes, { s: 'x', i: '42', d: 'null', bytes: '"aGk="', empty: '' })
})

t.test('resource, scope and ids', async (t) => {
  const [plain] = rowsOf(request([{ timeUnixNano: NOW_NS, traceId: '0AF7651916CD43DD8448EB211C80319C', spanId: 'b7ad6b7169203331', flags: 1 }]))
  t.match(plain, { service_name: 'api', instrumentation_scope: 's@1', trace_id: '0AF7651916CD43DD8448EB211C80319C', span_id: 'B7AD6B7169203331', trace_flags: 1, team_id: 7 })
  const [bare] = rowsOf(request([{ timeUnixNano: NOW_NS, traceId: 'abc' }], null, null))
  t.match(bare, { service_name: '', resource_attributes: { 'service.name': '' }, instrumentation_scope: '', trace_id: '0'.repeat(32), body: '' })
  const a = rowsOf(request([{}], { attributes: [{ key: 'x', value: { stringValue: '1' } }, { key: 'y', value: { stringValue: '2' } }] }))[0]!
  const b = rowsOf(request([{}], { attributes: [{ key: 'y', value: { stringValue: '2' } }, { key: 'x', value: { stringValue: '1' } }] }))[0]!
  t.equal(a.resource_fingerprint, b.resource_fingerprint, 'the fingerprint does not hang on attribute order')
})

t.test('JSON Lines and snake_case field names are read too', async (t) => {
  const line = JSON.stringify({ resource_logs: [{ scope_logs: [{ log_records: [{ severity_text: 'debug', time_unix_nano: NOW_NS }] }] }] })
  t.same(rowsOf(`${line}\n\n${line}\n`).map((r) => r.severity_text), ['debug', 'debug'])
})

t.test('protobuf: a hand-made ExportLogsServiceRequest', async (t) => {
  // Field helpers: tag = field << 3 | wire type.
  const len = (field: number, bytes: Buffer) => Buffer.concat([Buffer.from([(field << 3) | 2, bytes.length]), bytes])
  const str = (field: number, s: string) => len(field, Buffer.from(s))
  const fixed64 = (field: number, v: bigint) => {
    const b = Buffer.alloc(9)
    b[0] = (field << 3) | 1
    b.writeBigUInt64LE(v, 1)
    return b
  }
  const keyValue = (k: string, value: Buffer) => len(6, Buffer.concat([str(1, k), len(2, value)]))
  const record = Buffer.concat([
    fixed64(1, BigInt(NOW) * 1_000_000n),
    Buffer.from([2 << 3, 13]), // severity_number 13
    len(5, str(1, 'hello')),
    keyValue('n', Buffer.from([3 << 3, 0xac, 0x02])), // int_value 300
    Buffer.from([0xf8, 0x07, 0x01]), // field 127, varint: unknown, skipped
    len(9, Buffer.alloc(16, 0xab)),
  ])
  const body = len(1, len(2, Buffer.concat([len(1, Buffer.concat([str(1, 'lib'), str(2, '2')])), len(2, record)])))
  const [row] = logRows(decodeLogsRequest(body), ctx)
  t.match(row, { body: 'hello', severity_text: 'warn', severity_number: 13, attributes: { n: '300' }, instrumentation_scope: 'lib@2', trace_id: 'AB'.repeat(16), timestamp: NOW * 1000 })
  t.throws(() => decodeLogsRequest(Buffer.from([0x0a, 0x05, 0x01])), AppError, 'a truncated message')
})

t.test('malformed requests are refused as invalid_payload', async (t) => {
  for (const body of ['{"resourceLogs": 5}', '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":"x"}]}]}]}', '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"boolValue":"yes"}}]}]}]}', '{not json']) {
    const error = t.throws(() => decodeLogsRequest(Buffer.from(body))) as AppError
    t.equal(error.code, 'invalid_payload', body)
    t.equal(error.status, 400)
  }
})

t.test('the logs query: defaults, limits and refusals', async (t) => {
  const { query, requested } = parseLogsQuery({}, 3, NOW)
  t.equal(requested, 1000)
  t.equal(query.limit, 1001, 'one more, to tell whether a page follows')
  t.equal(query.to - query.from, 7 * 86_400_000_000, 'seven days by default')
  t.equal(parseLogsQuery({ limit: 50_000 }, 3, NOW).requested, 2000)
  t.equal(parseLogsQuery({ dateRange: { date_from: '2026-12-04T11:00:00.123456Z' } }, 3, NOW).query.from, Date.UTC(2026, 11, 4, 11) * 1000 + 123_456)
  t.equal(parseLogsQuery({ liveLogsCheckpoint: '2026-12-04T11:00:00.5' }, 3, NOW).query.receivedFrom, Date.UTC(2026, 11, 4, 11) * 1000 + 500_000, 'a checkpoint without an offset is UTC')
  t.equal(parseLogsQuery({ liveLogsCheckpoint: '2026-12-04T12:00:00+01:00' }, 3, NOW).query.receivedFrom, Date.UTC(2026, 11, 4, 11) * 1000)
  t.equal(parseLogsQuery({}, 3, NOW).query.receivedFrom, null)
  const refused = (q: unknown) => (t.throws(() => parseLogsQuery(q, 3, NOW)) as AppError & { code: string; attr: string | null })
  t.match(refused({ liveLogsCheckpoint: 'soon' }), { attr: 'liveLogsCheckpoint' })
  t.match(refused(undefined), { code: 'required', attr: 'query' })
  t.match(refused({ limit: 0 }), { attr: 'limit' })
  t.match(refused({ dateRange: { date_from: 'yesterday-ish' } }), { attr: 'dateRange.date_from' })
  t.match(refused({ filterGroup: { values: [{ values: [{ key: 'x', type: 'person', operator: 'exact', value: 1 }] }] } }), { code: 'unsupported', attr: 'filterGroup.values.0.values.0.type' })
  t.match(refused({ filterGroup: { values: [{ values: [{ key: 'x', type: 'log_attribute', operator: 'gt', value: 1 }] }] } }), { code: 'unsupported' })
  t.match(refused({ filterGroup: { values: [{ values: [{ key: 'nope', type: 'log', operator: 'exact', value: 1 }] }] } }), { code: 'unsupported', attr: 'filterGroup.values.0.values.0.key' })
  t.match(refused({ filterGroup: { values: [{ values: [{ key: 'x', type: 'log_attribute', operator: 'exact' }] }] } }), { code: 'required' })
})
