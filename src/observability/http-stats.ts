/**
 * Requests and their durations per route, counted in plain numbers and read only when /metrics is scraped.
 * prom-client's bound children validate and hash their labels and allocate on every inc() and observe():
 * /decide 50 flags ran 11 % slower under wrk with them than with no metrics at all (docs/performance.md).
 */
import type { Metric, Registry } from 'prom-client'

const DURATION_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

export class RouteTally {
  readonly byStatus = new Map<number, number>()
  /** Observations per bucket, not cumulative; the last slot holds those above every bound. */
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1)
  sum = 0
  count = 0

  record(status: number, seconds: number): void {
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1)
    let i = 0
    // A bucket counts observations up to and including its bound (Prometheus' `le`).
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]) i++
    this.buckets[i]++
    this.sum += seconds
    this.count++
  }
}

interface Sample {
  metricName?: string
  value: number
  labels: Record<string, string | number>
}

export class HttpStats {
  readonly #routes = new Map<string, RouteTally>()

  route(label: string): RouteTally {
    let tally = this.#routes.get(label)
    if (!tally) this.#routes.set(label, (tally = new RouteTally()))
    return tally
  }

  /**
   * Adds skylark_http_requests_total and skylark_http_request_duration_seconds to the registry. The
   * registry reads a metric through `get()` (and `reset()`, `aggregator` for its other uses); its types
   * list only prom-client's own classes, hence the casts.
   */
  register(registry: Registry): void {
    const add = (name: string, help: string, type: 'counter' | 'histogram', samples: (name: string) => Sample[]) => {
      const head = { name, help, type, aggregator: 'sum' }
      const metric = { ...head, get: async () => ({ ...head, values: samples(name) }), reset: () => this.#routes.clear() }
      registry.registerMetric(metric as unknown as Metric)
    }
    add('skylark_http_requests_total', 'HTTP requests by route and status', 'counter', () => this.#requests())
    add('skylark_http_request_duration_seconds', 'Time from request start to response end, by route', 'histogram', (name) => this.#durations(name))
  }

  #requests(): Sample[] {
    const samples: Sample[] = []
    for (const [route, tally] of this.#routes) {
      for (const [status, value] of tally.byStatus) samples.push({ value, labels: { route, status } })
    }
    return samples
  }

  #durations(name: string): Sample[] {
    const samples: Sample[] = []
    for (const [route, tally] of this.#routes) {
      let cumulative = 0
      DURATION_BUCKETS.forEach((le, i) => samples.push({ metricName: `${name}_bucket`, value: (cumulative += tally.buckets[i]), labels: { le, route } }))
      samples.push({ metricName: `${name}_bucket`, value: tally.count, labels: { le: '+Inf', route } })
      samples.push({ metricName: `${name}_sum`, value: tally.sum, labels: { route } })
      samples.push({ metricName: `${name}_count`, value: tally.count, labels: { route } })
    }
    return samples
  }
}
