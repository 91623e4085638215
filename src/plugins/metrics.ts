/**
 * Prometheus metrics. Each app owns its registry (tests build many apps in one
 * process); server.ts adds the default process metrics.
 *
 * prom-client's metrics used through its published API only, so a release of it
 * cannot change what they count without a type error or a failing test
 * (test/unit/plugins/metrics.test.ts pins the exposition).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** netdiag_http_request_duration_seconds's bucket bounds, in seconds. */
export const REQUEST_DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'netdiag_http_requests_total',
    help: 'HTTP requests by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'netdiag_http_request_duration_seconds',
    help: 'HTTP request latency by route template',
    labelNames: ['route', 'method'] as const,
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [this.registry],
  });
  readonly cache = new Counter({
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

  /**
   * Records one answered request, from the onResponse hook or a replayed cached answer
   * (response-cache.ts): netdiag_http_requests_total{route,method,status} and
   * netdiag_http_request_duration_seconds{route,method}. `route` is the route template,
   * never the raw URL, so the series stay few. No label handles are kept per label set:
   * prom-client's handles key their labels again on every call, and measured no faster
   * (docs/performance.md).
   */
  recordRequest(route: string, method: string, status: number, seconds: number): void {
    this.requests.inc({ route, method, status: String(status) });
    this.duration.observe({ route, method }, seconds);
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
