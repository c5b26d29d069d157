/**
 * OTLP log records made into stored logs, as PostHog's capture-logs makes its rows (rust/capture-logs,
 * log_record.rs): severity normalised to trace…fatal (a JSON body's `level`-like key counts; a record's
 * severity number wins), `service.name` read from the resource (and written there, empty, when absent), the
 * scope as `name@version`, a timestamp more than 24 hours from now replaced by now with the sent one kept as the
 * `$originalTimestamp` attribute. Pure: the clock and the uuid maker are inputs.
 *
 * One difference, on purpose: PostHog's ClickHouse reads each attribute's JSON with JSONExtractString, which
 * turns a number or boolean attribute into ''; skylark keeps its JSON text (`5`, `true`).
 */
import { createHash } from 'node:crypto'
import { isPlainObject, tryParseJson } from '../common/json.js'
import { anyJson, attributesOf, recordTime } from '../common/otlp.js'
import type { OtlpRowContext } from '../storage/otlp-ingest.js'
import type { OtlpResourceLogs } from './otlp.js'
import type { LogRow } from './types.js'

const SEVERITIES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const

const ALIASES: Record<string, (typeof SEVERITIES)[number]> = {
  critical: 'fatal', fatal: 'fatal', crit: 'fatal', alert: 'fatal', emerg: 'fatal',
  error: 'error', err: 'error', eror: 'error',
  warn: 'warn', warning: 'warn',
  info: 'info', information: 'info', informational: 'info',
  debug: 'debug', dbug: 'debug',
  trace: 'trace',
}

const NUMBER_OF: Record<string, number> = { trace: 1, debug: 5, info: 9, warn: 13, error: 17, fatal: 21 }

/** OTLP's SeverityNumber: 1–4 trace, 5–8 debug, … 21–24 fatal. */
function severityOfNumber(n: number): string {
  return n >= 1 && n <= 24 ? SEVERITIES[Math.floor((n - 1) / 4)] : 'unknown'
}

/** The keys of a JSON body capture-logs reads a severity from, in its order. */
const BODY_SEVERITY_KEYS = ['level', 'severity', 'log.level', 'config.log_level']

function bodySeverity(body: string): string | null {
  const value = body.startsWith('{') ? tryParseJson(body) : undefined
  if (!isPlainObject(value)) return null
  for (const key of BODY_SEVERITY_KEYS) {
    const found = value[key]
    if (typeof found === 'string' && NUMBER_OF[found.toLowerCase()] !== undefined) return found.toLowerCase()
  }
  return null
}

/** A stable id of a resource's attributes, whatever their order (PostHog's is a cityHash64 of its map). */
function fingerprint(attributes: Record<string, string>): string {
  const sorted = Object.keys(attributes).sort().map((k) => [k, attributes[k]])
  return createHash('sha1').update(JSON.stringify(sorted)).digest().readBigUInt64BE(0).toString()
}

const hexOf = (id: Buffer, bytes: number) => (id.length === bytes ? id.toString('hex') : '00'.repeat(bytes)).toUpperCase()

/** The stored logs of a request, in its order. */
export function logRows(request: readonly OtlpResourceLogs[], ctx: OtlpRowContext): LogRow[] {
  const rows: LogRow[] = []
  const nowNs = BigInt(ctx.nowMs) * 1_000_000n
  for (const resource of request) {
    const resourceAttributes = attributesOf(resource.resourceAttributes ?? [])
    resourceAttributes['service.name'] ??= ''
    const resourceFingerprint = fingerprint(resourceAttributes)
    for (const scopeLogs of resource.scopeLogs) {
      const scope = scopeLogs.scope ? `${scopeLogs.scope.name}@${scopeLogs.scope.version}` : ''
      for (const record of scopeLogs.logRecords) {
        const body = record.body === null ? '' : 's' in record.body ? record.body.s : anyJson(record.body)
        const sent = ALIASES[record.severityText.toLowerCase()] ?? 'info'
        const severityText = record.severityNumber > 0 ? severityOfNumber(record.severityNumber) : (bodySeverity(body) ?? sent)
        const attributes = attributesOf(record.attributes)
        const ns = recordTime(record.timeUnixNano, nowNs, attributes)
        rows.push({
          uuid: ctx.uuid(ctx.nowMs),
          team_id: ctx.teamId,
          timestamp: Number(ns / 1000n),
          observed_timestamp: ctx.nowMs * 1000,
          trace_id: hexOf(record.traceId, 16),
          span_id: hexOf(record.spanId, 8),
          trace_flags: record.flags,
          body,
          severity_text: severityText,
          severity_number: record.severityNumber > 0 ? record.severityNumber : (NUMBER_OF[severityText] ?? 0),
          service_name: resourceAttributes['service.name'],
          resource_attributes: resourceAttributes,
          resource_fingerprint: resourceFingerprint,
          instrumentation_scope: scope,
          event_name: record.eventName,
          attributes,
        })
      }
    }
  }
  return rows
}
