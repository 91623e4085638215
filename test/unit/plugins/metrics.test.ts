/**
 * What scrapers read of the request and cache metrics: names, help, labels and their
 * order, bucket bounds and values, as the text a worker serves and as the cluster
 * primary sums it (server.ts: prom-client's AggregatorRegistry over the workers' JSON).
 * The expected text is written out, so a change in Metrics or in a prom-client release
 * that would change a scraper's view fails here.
 */
import { AggregatorRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/plugins/metrics.js';

const NAMES = [
  'netdiag_http_requests_total',
  'netdiag_http_request_duration_seconds',
  'netdiag_cache_operations_total',
];
const BOUNDS = ['0.001', '0.005', '0.01', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30'];

/** One series of the duration histogram: `cumulative` is its count at each bound. */
function durationSeries(labels: string, cumulative: number[], sum: number, count: number): string[] {
  const name = 'netdiag_http_request_duration_seconds';
  return [
    ...BOUNDS.map((le, i) => `${name}_bucket{le="${le}",${labels}} ${cumulative[i]}`),
    `${name}_bucket{le="+Inf",${labels}} ${count}`,
    `${name}_sum{${labels}} ${sum}`,
    `${name}_count{${labels}} ${count}`,
  ];
}

/** The exposition after `record(metrics)`, with every count multiplied by `times`. */
function expected(times: number): string[] {
  return [
    [
      '# HELP netdiag_http_requests_total HTTP requests by route template, method and status',
      '# TYPE netdiag_http_requests_total counter',
      `netdiag_http_requests_total{route="/api/dns",method="GET",status="200"} ${2 * times}`,
      `netdiag_http_requests_total{route="unmatched",method="HEAD",status="404"} ${times}`,
      `netdiag_http_requests_total{route="/api/dns",method="GET",status="429"} ${times}`,
    ].join('\n'),
    [
      '# HELP netdiag_http_request_duration_seconds HTTP request latency by route template',
      '# TYPE netdiag_http_request_duration_seconds histogram',
      ...durationSeries(
        'route="/api/dns",method="GET"',
        [2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3].map((n) => n * times),
        0.0514 * times,
        3 * times,
      ),
      ...durationSeries(
        'route="unmatched",method="HEAD"',
        BOUNDS.map(() => 0),
        31 * times,
        times,
      ),
    ].join('\n'),
    [
      '# HELP netdiag_cache_operations_total Cache lookups by result (hit, miss) and backend faults (error)',
      '# TYPE netdiag_cache_operations_total counter',
      `netdiag_cache_operations_total{result="miss"} ${times}`,
      `netdiag_cache_operations_total{result="hit"} ${2 * times}`,
    ].join('\n'),
  ];
}

/** Requests on two routes (one over the last bound, one on a bound) and cache lookups. */
function record(metrics: Metrics): void {
  metrics.recordRequest('/api/dns', 'GET', 200, 0.0004);
  metrics.recordRequest('/api/dns', 'GET', 200, 0.05);
  metrics.recordRequest('unmatched', 'HEAD', 404, 31);
  metrics.recordRequest('/api/dns', 'GET', 429, 0.001);
  metrics.cacheMiss.inc();
  metrics.cacheHit.inc();
  metrics.cacheHit.inc();
}

const textOf = (metrics: Metrics) =>
  Promise.all(NAMES.map((name) => metrics.registry.getSingleMetricAsString(name)));

describe('Metrics: the request and cache metrics', () => {
  it('expose what recordRequest and the cache counters recorded, as scrapers read it', async () => {
    const metrics = new Metrics();
    record(metrics);
    expect(await textOf(metrics)).toEqual(expected(1));
  });

  it("sum across workers in the cluster primary's aggregate", async () => {
    const worker = new Metrics();
    record(worker);
    // Workers send their JSON to the primary over IPC.
    const json = (await worker.registry.getMetricsAsJSON()).filter((m) => NAMES.includes(m.name));
    const wire = JSON.parse(JSON.stringify(json));
    const summed = await AggregatorRegistry.aggregate([wire, wire]).metrics();
    expect(summed).toBe(`${expected(2).join('\n\n')}\n`);
  });

  it('count from zero after a reset, through the same recorder and bound cache counters', async () => {
    const metrics = new Metrics();
    record(metrics);
    metrics.registry.resetMetrics();
    expect((await textOf(metrics)).join('\n')).not.toMatch(/\{[^}]*\} [1-9]/);
    record(metrics);
    expect(await textOf(metrics)).toEqual(expected(1));
  });
});
