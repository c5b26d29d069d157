/**
 * The OTLP cores under hostile input, in-process: a /i/v1/logs or /i/v1/metrics body (protobuf or JSON, built
 * with every field and odd values, then mutated, truncated or replaced by garbage) → decode → rows. Each
 * either gives rows both stores can hold (finite numbers or none, integer times, known types, JSON-writable
 * attributes) or is refused with a 4xx AppError; nothing else is thrown, and nothing hangs.
 */
import t from 'tap'
import { decodeLogsRequest, logRows } from '../../../src/logs/index.js'
import { decodeMetricsRequest, METRIC_TYPES, metricRows } from '../../../src/metrics/index.js'
import type { Rng } from './rng.js'
import { fuzzCases, fuzzRun } from './run.js'
import { hostileString, mutate, randomBytesBody, truncate } from './values.js'

const RUN = fuzzRun(5_000)
t.setTimeout(Math.max(120_000, RUN.cases * 4))
const NOW = Date.parse('2026-12-04T12:00:00Z')
const ctx = { teamId: 7, nowMs: NOW, uuid: () => '0190f000-0000-7000-8000-000000000000' }

// A protobuf writer, enough for the requests' messages.
const varint = (v: bigint): Buffer => {
  const out: number[] = []
  let x = BigInt.asUintN(64, v)
  while (x > 0x7fn) {
    out.push(Number(x & 0x7fn) | 0x80)
    x >>= 7n
  }
  out.push(Number(x))
  return Buffer.from(out)
}
const key = (field: number, wire: number) => varint(BigInt((field << 3) | wire))
const len = (field: number, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts)
  return Buffer.concat([key(field, 2), varint(BigInt(body.length)), body])
}
const str = (field: number, s: string) => len(field, Buffer.from(s))
const u64 = (field: number, v: bigint) => Buffer.concat([key(field, 0), varint(v)])
const fixed64 = (field: number, v: bigint) => {
  const b = Buffer.alloc(8)
  b.writeBigUInt64LE(BigInt.asUintN(64, v))
  return Buffer.concat([key(field, 1), b])
}
const double = (field: number, v: number) => {
  const b = Buffer.alloc(8)
  b.writeDoubleLE(v)
  return Buffer.concat([key(field, 1), b])
}
const zigzag = (n: number) => BigInt((n << 1) ^ (n >> 31)) & 0xffffffffn

function oddNumber(rng: Rng): number {
  return rng.pick([0, 1, -1, 0.5, 1e308, -1e308, Number.NaN, Infinity, -Infinity, 2 ** 53 + 1, rng.next() * 1000])
}

function oddTime(rng: Rng): bigint {
  return rng.pick([0n, BigInt(NOW) * 1_000_000n, BigInt(NOW - 3 * 86_400_000) * 1_000_000n, 2n ** 64n - 1n, 1n, BigInt(rng.int(2 ** 30)) * 1_000_000_000n])
}

function anyValue(rng: Rng, depth = 2): Buffer {
  switch (rng.int(depth > 0 ? 7 : 5)) {
    case 0:
      return str(1, hostileString(rng))
    case 1:
      return u64(2, BigInt(rng.int(2)))
    case 2:
      return u64(3, BigInt.asUintN(64, BigInt(rng.int(2 ** 31)) * (rng.chance(0.5) ? -1n : 1n)))
    case 3:
      return double(4, oddNumber(rng))
    case 4:
      return str(7, hostileString(rng))
    case 5:
      return len(5, ...Array.from({ length: rng.int(3) }, () => len(1, anyValue(rng, depth - 1))))
    default:
      return len(6, ...Array.from({ length: rng.int(3) }, () => len(1, str(1, hostileString(rng)), len(2, anyValue(rng, depth - 1)))))
  }
}

const attributes = (rng: Rng, field: number) => Array.from({ length: rng.int(4) }, () => len(field, str(1, rng.chance(0.3) ? hostileString(rng) : `k${rng.int(5)}`), len(2, anyValue(rng))))

function resourceAndScope(rng: Rng): { resource: Buffer; scope: Buffer } {
  return { resource: len(1, ...attributes(rng, 1), ...(rng.chance(0.7) ? [len(1, str(1, 'service.name'), len(2, str(1, hostileString(rng))))] : [])), scope: len(1, str(1, hostileString(rng)), str(2, '1')) }
}

function exemplar(rng: Rng): Buffer {
  return len(rng.pick([5, 8, 11]), str(4, 'x'.repeat(rng.pick([0, 8, 3]))), len(5, rng.bytes(rng.pick([16, 0, 12]))))
}

function dataPoint(rng: Rng, type: number): Buffer {
  const common = [fixed64(3, oddTime(rng)), ...(rng.chance(0.3) ? [exemplar(rng)] : [])]
  if (type === 5 || type === 7) return len(1, ...common, ...attributes(rng, 7), rng.chance(0.5) ? double(4, oddNumber(rng)) : fixed64(6, BigInt(rng.int(2 ** 31)) * (rng.chance(0.5) ? -1n : 1n)))
  if (type === 9) {
    const n = rng.int(6)
    const counts = Array.from({ length: n + 1 }, () => fixed64(6, BigInt(rng.int(1000))))
    const bounds = rng.chance(0.5) ? [len(7, ...Array.from({ length: n }, () => double(0, oddNumber(rng)).subarray(1)))] : Array.from({ length: n }, () => double(7, oddNumber(rng)))
    return len(1, ...common, ...attributes(rng, 9), fixed64(4, BigInt(rng.int(1e6))), double(5, oddNumber(rng)), ...counts, ...bounds)
  }
  if (type === 10) {
    const buckets = () => len(1, ...[Buffer.concat([key(1, 0), varint(zigzag(rng.range(-50, 50)))]), len(2, ...Array.from({ length: rng.int(5) }, () => varint(BigInt(rng.int(100)))))])
    return len(1, ...common, ...attributes(rng, 1), fixed64(4, 10n), Buffer.concat([key(6, 0), varint(zigzag(rng.pick([-10, -4, 0, 3, 20, 2 ** 30, -(2 ** 30)])))]), fixed64(7, BigInt(rng.int(3))), rng.chance(0.8) ? buckets().subarray(0) : Buffer.alloc(0)).subarray(0)
  }
  return len(1, ...common, ...attributes(rng, 7), fixed64(4, 3n), double(5, oddNumber(rng)), len(6, double(1, oddNumber(rng)), double(2, oddNumber(rng))))
}

function metricsProto(rng: Rng): Buffer {
  const { resource, scope } = resourceAndScope(rng)
  const metrics = Array.from({ length: rng.range(1, 3) }, () => {
    const type = rng.pick([5, 7, 9, 10, 11])
    const points = Array.from({ length: rng.range(0, 3) }, () => dataPoint(rng, type))
    return len(2, str(1, hostileString(rng).slice(0, 50)), str(3, 'ms'), len(type, ...points, u64(2, BigInt(rng.int(4))), u64(3, BigInt(rng.int(2)))))
  })
  return len(1, resource, len(2, scope, ...metrics))
}

function logsProto(rng: Rng): Buffer {
  const { resource, scope } = resourceAndScope(rng)
  const records = Array.from({ length: rng.range(1, 3) }, () =>
    len(2, fixed64(1, oddTime(rng)), u64(2, BigInt(rng.int(30))), str(3, hostileString(rng).slice(0, 20)), len(5, anyValue(rng)), ...attributes(rng, 6), len(9, rng.bytes(rng.pick([16, 3]))), len(10, rng.bytes(8))),
  )
  return len(1, resource, len(2, scope, ...records))
}

function metricsJson(rng: Rng): Record<string, unknown> {
  const point = () => ({
    timeUnixNano: rng.pick(['0', `${NOW}000000`, '18446744073709551615', -5, 1.5]),
    asDouble: rng.pick([1, 'NaN', '-Infinity', '1e400', 'x', null]),
    asInt: rng.pick([undefined, '9007199254740993', -3]),
    count: rng.pick([3, '4', -1]),
    sum: rng.pick([undefined, 2.5, 'Infinity']),
    bucketCounts: rng.pick([[1, 2], ['1', '99999999999999999999'], [], 'x']),
    explicitBounds: rng.pick([[1], [1, 2, 3], ['Infinity'], []]),
    scale: rng.pick([0, -10, 20, 2 ** 31, 'x']),
    zeroCount: 1,
    positive: rng.pick([undefined, { offset: rng.pick([0, -3, 2 ** 20]), bucketCounts: [1, 2] }, { bucketCounts: 'x' }]),
    quantileValues: rng.pick([[{ quantile: 0.5, value: 'NaN' }], [], [5]]),
    attributes: [{ key: 'k', value: rng.pick([{ stringValue: 'v' }, { intValue: '12' }, { kvlistValue: { values: [] } }, 'x']) }],
    exemplars: rng.pick([undefined, [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'zz' }], 'x']),
  })
  const data = () => ({ dataPoints: Array.from({ length: rng.range(0, 2) }, point), aggregationTemporality: rng.pick([1, 2, 'AGGREGATION_TEMPORALITY_DELTA', 'sideways']), isMonotonic: rng.pick([true, false, 'yes']) })
  return {
    resourceMetrics: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: hostileString(rng) } }] },
        scopeMetrics: [{ scope: { name: 's' }, metrics: [{ name: 'm', [rng.pick(['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary', 'nothing'])]: data() }] }],
      },
    ],
  }
}

/** The rows are what the stores can hold. */
function checkRows(rows: Array<Record<string, unknown>>): void {
  for (const row of rows) {
    for (const field of ['timestamp', 'observed_timestamp']) if (!Number.isSafeInteger(row[field])) throw new Error(`${field} ${String(row[field])}`)
    if ('metric_type' in row) {
      if (!(METRIC_TYPES as readonly unknown[]).includes(row.metric_type)) throw new Error(`metric_type ${String(row.metric_type)}`)
      if (row.value !== null && !Number.isFinite(row.value)) throw new Error(`value ${String(row.value)}`)
      for (const field of ['histogram_bounds', 'histogram_counts', 'count']) {
        const values = ([] as unknown[]).concat(row[field])
        if (!values.every((v) => typeof v === 'number' && Number.isFinite(v))) throw new Error(`${field} ${JSON.stringify(row[field])}`)
      }
    }
    JSON.stringify(row)
  }
}

function body(rng: Rng, metrics: boolean): Buffer {
  const proto = metrics ? metricsProto(rng) : logsProto(rng)
  switch (rng.int(6)) {
    case 0:
      return randomBytesBody(rng)
    case 1: {
      // bytes flipped, dropped or repeated
      const b = Buffer.from(proto)
      for (let i = rng.range(1, 4); i > 0 && b.length > 0; i--) b[rng.int(b.length)] = rng.int(256)
      return rng.chance(0.5) ? b.subarray(0, rng.int(b.length + 1)) : Buffer.concat([b, b.subarray(rng.int(b.length))])
    }
    case 2:
      return Buffer.from(metrics ? JSON.stringify(mutate(rng, metricsJson(rng))) : truncate(rng, JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'x' }, timeUnixNano: 5 }] }] }] })))
    case 3:
      return Buffer.from(metrics ? JSON.stringify(metricsJson(rng)) : JSON.stringify(mutate(rng, { resourceLogs: [{ scopeLogs: [{ logRecords: [{ severityNumber: 9, body: { kvlistValue: { values: [] } } }] }] }] })))
    default:
      return proto
  }
}

t.test(`OTLP cores under ${RUN.cases} hostile requests (FUZZ_SEED=${RUN.seed})`, async (t) => {
  fuzzCases(t, RUN, 'request', (rng) => {
    const metrics = rng.chance(0.6)
    const rows = metrics ? metricRows(decodeMetricsRequest(body(rng, true)), ctx) : logRows(decodeLogsRequest(body(rng, false)), ctx)
    checkRows(rows as unknown as Array<Record<string, unknown>>)
    return rows.length > 0 ? 'accepted some' : 'accepted none'
  })
})
