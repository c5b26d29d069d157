/**
 * Prometheus metrics. One registry per process; the ingest consumer thread reports its own counters to
 * the main thread, which sets the gauges here, so /metrics shows the whole service.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { HttpStats } from './http-stats.js'

export function createMetrics() {
  const registry = new Registry()
  // prom-client samples the event loop's delay every 10 ms by default: 100 wakeups a second of the request thread
  // of an idle server, most of its idle CPU (bench/micro/idle.mjs). Every 100 ms still catches any stall over it.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 })
  const http = new HttpStats()
  http.register(registry)
  const eventsReceived = new Counter({
    name: 'skylark_events_received_total',
    help: 'Events accepted into the spool, by lane',
    labelNames: ['lane'] as const,
    registers: [registry],
  })
  const eventsDropped = new Counter({
    name: 'skylark_events_dropped_total',
    help: 'Events dropped at capture, by reason (also recorded as ingestion warnings)',
    labelNames: ['reason'] as const,
    registers: [registry],
  })
  const queueDepth = new Gauge({
    name: 'skylark_queue_depth',
    help: 'Items waiting, by queue: spool_bytes (on disk, not yet released), pool_tasks, http_inflight, http_body_bytes, sink_backlog_bytes (spool the consumer has not read), sink_queued_rows',
    labelNames: ['queue'] as const,
    registers: [registry],
  })
  const consumerTotals = new Gauge({
    name: 'skylark_consumer_total',
    help: 'Ingest consumer counters since start, by kind (stored, persons_processed, dead_lettered, cookieless_dropped, sink_errors)',
    labelNames: ['kind'] as const,
    registers: [registry],
  })
  const sinkUp = new Gauge({
    name: 'skylark_sink_up',
    help: '1 when the last write to the event store succeeded, 0 while it is failing',
    registers: [registry],
  })
  const ingestionLag = new Gauge({
    name: 'skylark_ingestion_lag_seconds',
    help: 'How long the oldest acknowledged event the event store has not confirmed yet has waited; 0 when it is caught up',
    registers: [registry],
  })
  const eventLoopActive = new Gauge({
    name: 'skylark_event_loop_active_seconds',
    help: 'Busy time of the main-thread event loop since start; its increase over wall time is the event-loop utilisation',
    registers: [registry],
  })
  const queryCache = new Counter({
    name: 'skylark_query_cache_total',
    help: 'POST …/query/ answers by cache outcome (hit, stale, miss), and computations started (computed) or waited on by an identical request (joined), and computations that ended after every status asking for them was cancelled (abandoned: their answer not cached)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  return { registry, http, queryCache, eventsReceived, eventsDropped, queueDepth, consumerTotals, sinkUp, ingestionLag, eventLoopActive }
}

export type Metrics = ReturnType<typeof createMetrics>
