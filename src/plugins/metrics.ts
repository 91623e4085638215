/**
 * Prometheus metrics. Each app owns its registry (tests build many apps in one
 * process); server.ts adds the default process metrics.
 *
 * What every request or cache lookup records is counted in series built once per
 * label set (metric-series.ts): the same exposition as prom-client's own metrics,
 * without validating, hashing and allocating a label object each time.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Registry } from 'prom-client';
import { type BoundCounter, type BoundHistogram, SeriesCounter, SeriesHistogram } from './metric-series.js';

/** The series one route and method records into. */
interface RouteMethodSeries {
  duration: BoundHistogram;
  byStatus: Map<number, BoundCounter>;
}

/** netdiag_http_request_duration_seconds's bucket bounds, in seconds. */
export const REQUEST_DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new SeriesCounter({
    name: 'netdiag_http_requests_total',
    help: 'HTTP requests by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new SeriesHistogram({
    name: 'netdiag_http_request_duration_seconds',
    help: 'HTTP request latency by route template',
    labelNames: ['route', 'method'] as const,
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly cache = new SeriesCounter({
    name: 'netdiag_cache_operations_total',
    help: 'Cache lookups by result (hit, miss) and backend faults (error)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly cacheHit = this.cache.labels({ result: 'hit' });
  readonly cacheMiss = this.cache.labels({ result: 'miss' });
  readonly cacheError = this.cache.labels({ result: 'error' });
  readonly providerAttempts = new Counter({
    name: 'netdiag_provider_attempts_total',
    help: 'Upstream provider attempts by provider id and outcome',
    labelNames: ['provider', 'outcome', 'kind'] as const,
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'netdiag_rate_limit_rejections_total',
    help: 'Requests rejected with 429, by limit group',
    labelNames: ['group'] as const,
    registers: [this.registry],
  });

  readonly connectionsRefused = new Counter({
    name: 'netdiag_connections_refused_total',
    help: 'Connections over the per-address cap (MAX_CONNECTIONS_PER_IP), answered 429 and closed',
    registers: [this.registry],
  });

  readonly internalErrors = new Counter({
    name: 'netdiag_internal_errors_total',
    help: 'Bugs: requests answered 500 and parts of multi-part answers marked as internal errors',
    registers: [this.registry],
  });

  readonly liveProbesRejected = new Counter({
    name: 'netdiag_live_probe_rejections_total',
    help: 'Live probes refused a slot in time (MAX_LIVE_PROBES, MAX_SMTP_SESSIONS), their requests answered 503',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly shed = new Counter({
    name: 'netdiag_load_shed_total',
    help: 'Requests answered 503 because the event loop was saturated',
    registers: [this.registry],
  });

  /** route → method → its series; the statuses under each. */
  private readonly requestSeries = new Map<string, Map<string, RouteMethodSeries>>();

  /**
   * Records one answered request, from the onResponse hook or a replayed cached answer
   * (cached-answers.ts): netdiag_http_requests_total{route,method,status} and
   * netdiag_http_request_duration_seconds{route,method}. `route` is the route template,
   * never the raw URL, so the series stay few; once a route, method and status have been
   * seen this is three map reads and two additions.
   */
  recordRequest(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.requestSeries.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.requestSeries.set(route, byMethod);
    }
    let series = byMethod.get(method);
    if (series === undefined) {
      series = { duration: this.duration.labels({ route, method }), byStatus: new Map() };
      byMethod.set(method, series);
    }
    let requests = series.byStatus.get(status);
    if (requests === undefined) {
      requests = this.requests.labels({ route, method, status: String(status) });
      series.byStatus.set(status, requests);
    }
    requests.inc();
    series.duration.observe(seconds);
  }

  enableDefaultMetrics(): void {
    collectDefaultMetrics({ register: this.registry, prefix: 'netdiag_' });
  }
}

async function metricsPlugin(app: FastifyInstance, opts: { metrics: Metrics }): Promise<void> {
  const { metrics } = opts;
  app.addHook('onResponse', (request, reply, done) => {
    metrics.recordRequest(
      request.routeOptions.url ?? 'unmatched',
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
}

export default fp(metricsPlugin, { name: 'metrics' });
