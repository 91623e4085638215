/**
 * SeriesCounter and SeriesHistogram expose exactly what prom-client's Counter and
 * Histogram expose for the same calls: the Registry's text, getMetricsAsJSON (values,
 * key order included) and what the cluster aggregator sums from it, for any sequence of
 * counts, label objects in any key order, removals, zeroes and resets (fast-check).
 * So do the app's request and cache metrics recorded through Metrics.recordRequest and
 * its bound cache counters, against the prom-client metrics they replaced.
 */
import fc from 'fast-check';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesCounter, SeriesHistogram } from '../../../src/plugins/metric-series.js';
import { Metrics } from '../../../src/plugins/metrics.js';

const BOUNDS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const COUNTER_LABELS = ['route', 'method', 'status'] as const;
const HISTOGRAM_LABELS = ['route', 'method'] as const;

type Labels = Record<string, string | number>;

/** Both kinds of each metric, built in the same order into their own registries. */
function build() {
  const make = (own: boolean) => {
    const registry = new Registry();
    const registers = [registry];
    const counterConfig = { name: 'c_total', help: 'c', labelNames: COUNTER_LABELS, registers };
    const histogramConfig = {
      name: 'h_seconds',
      help: 'h',
      labelNames: HISTOGRAM_LABELS,
      buckets: BOUNDS,
      registers,
    };
    const plainCounterConfig = { name: 'u_total', help: 'unlabelled', registers };
    const plainHistogramConfig = { name: 'v_seconds', help: 'unlabelled', buckets: [1, 2], registers };
    return {
      registry,
      counter: own ? new SeriesCounter(counterConfig) : new Counter(counterConfig),
      histogram: own ? new SeriesHistogram(histogramConfig) : new Histogram(histogramConfig),
      plainCounter: own ? new SeriesCounter(plainCounterConfig) : new Counter(plainCounterConfig),
      plainHistogram: own ? new SeriesHistogram(plainHistogramConfig) : new Histogram(plainHistogramConfig),
    };
  };
  return { ours: make(true), theirs: make(false) };
}

type Side = ReturnType<typeof build>['ours'];

/**
 * Few values per label, so label sets repeat, and pairs prom-client's series key cannot
 * tell apart: {method: 'GET,route:/x', route: 'y'} and {method: 'GET', route: '/x,route:y'},
 * status 200 and '200'. Now and then any string (escaping).
 */
const VALUES: Record<string, readonly (string | number)[]> = {
  route: ['/a', '/b', 'y', '/x,route:y', 'a"b\\c\nd'],
  method: ['GET', 'HEAD', 'GET,route:/x'],
  status: ['200', 200, '404', 'status:1,'],
};
const labelValue = (name: string) =>
  fc.oneof(
    { weight: 9, arbitrary: fc.constantFrom(...(VALUES[name] ?? [])) },
    { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
  );

/** A label object over `names` (now and then some of them, unless `all`), its keys in any order. */
const labelsOver = (names: readonly string[], all: boolean) => {
  const every = fc.shuffledSubarray([...names], { minLength: names.length });
  return fc
    .tuple(
      all
        ? every
        : fc.oneof(
            { weight: 4, arbitrary: every },
            { weight: 1, arbitrary: fc.shuffledSubarray([...names]) },
          ),
      fc.tuple(...names.map(labelValue)),
    )
    .map(([keys, values]) => {
      const labels: Labels = {};
      for (const key of keys) labels[key] = values[names.indexOf(key)] as string | number;
      return labels;
    });
};

const increment = fc.oneof(
  fc.constant(undefined),
  fc.constant(0),
  fc.nat({ max: 1000 }),
  fc.double({ min: 0, max: 1e6, noNaN: true }),
);

/** Bounds themselves and their neighbours, zero of both signs, negatives, huge. */
const observation = fc.oneof(
  fc.constantFrom(...BOUNDS, 0, -0, -1, 1e12, Number.MIN_VALUE),
  fc.constantFrom(...BOUNDS).map((b) => b * (1 + Number.EPSILON)),
  fc.constantFrom(...BOUNDS).map((b) => b * (1 - Number.EPSILON)),
  fc.double({ min: -1, max: 60, noNaN: true }),
);

type Op = (m: Side) => void;

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(labelsOver(COUNTER_LABELS, false), increment).map(
      ([l, v]): Op =>
        (m) =>
          m.counter.inc(l, v),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(labelsOver(COUNTER_LABELS, true), increment).map(
      ([l, v]): Op =>
        (m) =>
          m.counter.labels(l).inc(v),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(labelsOver(COUNTER_LABELS, true), increment).map(
      ([l, v]): Op =>
        (m) =>
          m.counter.labels(...COUNTER_LABELS.map((name) => String(l[name]))).inc(v),
    ),
  },
  {
    weight: 1,
    arbitrary: increment.map(
      (v): Op =>
        (m) =>
          m.counter.inc(v),
    ),
  },
  {
    weight: 6,
    arbitrary: fc.tuple(labelsOver(HISTOGRAM_LABELS, false), observation).map(
      ([l, v]): Op =>
        (m) =>
          m.histogram.observe(l, v),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(labelsOver(HISTOGRAM_LABELS, true), observation).map(
      ([l, v]): Op =>
        (m) =>
          m.histogram.labels(l).observe(v),
    ),
  },
  {
    weight: 1,
    arbitrary: observation.map(
      (v): Op =>
        (m) =>
          m.histogram.observe(v),
    ),
  },
  {
    weight: 1,
    arbitrary: labelsOver(COUNTER_LABELS, true).map(
      (l): Op =>
        (m) =>
          m.counter.remove(l),
    ),
  },
  {
    weight: 1,
    arbitrary: labelsOver(HISTOGRAM_LABELS, true).map(
      (l): Op =>
        (m) =>
          m.histogram.remove(l),
    ),
  },
  {
    weight: 1,
    arbitrary: labelsOver(HISTOGRAM_LABELS, true).map(
      (l): Op =>
        (m) =>
          m.histogram.zero(l),
    ),
  },
  {
    weight: 1,
    arbitrary: increment.map(
      (v): Op =>
        (m) =>
          m.plainCounter.inc(v),
    ),
  },
  {
    weight: 1,
    arbitrary: observation.map(
      (v): Op =>
        (m) =>
          m.plainHistogram.observe(v),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('counter', 'histogram', 'plainCounter', 'plainHistogram', 'registry').map(
      (which): Op =>
        (m) =>
          which === 'registry' ? m.registry.resetMetrics() : m[which].reset(),
    ),
  },
);

/** Text, JSON (with key order) and the cluster aggregator's sum of two such workers. */
async function expectSameExposition(ours: Registry, theirs: Registry): Promise<void> {
  expect(await ours.metrics()).toBe(await theirs.metrics());
  const [oursJson, theirsJson] = [await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON()];
  expect(oursJson).toStrictEqual(theirsJson);
  expect(JSON.stringify(oursJson)).toBe(JSON.stringify(theirsJson));
  // Workers send their JSON over IPC.
  const wire = (json: unknown) => JSON.parse(JSON.stringify(json));
  const summed = (json: unknown) => AggregatorRegistry.aggregate([wire(json), wire(json)]).metrics();
  expect(await summed(oursJson)).toBe(await summed(theirsJson));
}

describe('SeriesCounter and SeriesHistogram', () => {
  it("expose what prom-client's Counter and Histogram expose, for any sequence of calls", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 120, size: 'max' }), async (ops) => {
        const { ours, theirs } = build();
        for (const apply of ops) {
          apply(ours);
          apply(theirs);
        }
        await expectSameExposition(ours.registry, theirs.registry);
      }),
      { numRuns: 150 },
    );
  });

  it('expose the same between calls: a scrape changes nothing', async () => {
    const { ours, theirs } = build();
    for (const m of [ours, theirs]) m.histogram.observe({ route: '/a', method: 'GET' }, 0.2);
    await expectSameExposition(ours.registry, theirs.registry);
    for (const m of [ours, theirs]) {
      m.histogram.observe({ method: 'GET', route: '/a' }, 0.001);
      m.counter.inc({ route: '/a', method: 'GET', status: '200' });
    }
    await expectSameExposition(ours.registry, theirs.registry);
  });

  it('refuse what prom-client refuses', () => {
    const { ours, theirs } = build();
    for (const m of [ours, theirs]) {
      expect(() => m.counter.inc({ path: '/a' } as never)).toThrow('Added label "path" is not included');
      expect(() => m.counter.inc({ route: '/a' }, -1)).toThrow('It is not possible to decrease a counter');
      expect(() => m.counter.inc({ route: '/a' }, Number.POSITIVE_INFINITY)).toThrow(TypeError);
      expect(() => m.histogram.observe({ route: '/a' }, Number.NaN)).toThrow(TypeError);
      expect(() => m.counter.labels('/a')).toThrow('Invalid number of arguments');
    }
    expect(() => ours.histogram.labels({ route: '/a' }).observe(Number.NaN)).toThrow(TypeError);
  });

  it('time through a label set bound once', async () => {
    const { ours } = build();
    const seconds = ours.histogram.labels({ route: '/a', method: 'GET' }).startTimer()();
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(await ours.registry.metrics()).toContain('h_seconds_count{route="/a",method="GET"} 1');
  });

  it('refuse buckets that do not increase, which prom-client would count twice', () => {
    expect(() => new SeriesHistogram({ name: 'x', help: 'x', buckets: [1, 1], registers: [] })).toThrow(
      'increase strictly',
    );
  });
});

describe('Metrics.recordRequest and the cache counters', () => {
  /** The metrics as they were declared before they were recorded through series. */
  function promClientMetrics() {
    const registry = new Registry();
    const registers = [registry];
    return {
      registry,
      requests: new Counter({
        name: 'netdiag_http_requests_total',
        help: 'HTTP requests by route template, method and status',
        labelNames: ['route', 'method', 'status'] as const,
        registers,
      }),
      duration: new Histogram({
        name: 'netdiag_http_request_duration_seconds',
        help: 'HTTP request latency by route template',
        labelNames: ['route', 'method'] as const,
        buckets: BOUNDS,
        registers,
      }),
      cache: new Counter({
        name: 'netdiag_cache_operations_total',
        help: 'Cache lookups by result (hit, miss) and backend faults (error)',
        labelNames: ['result'] as const,
        registers,
      }),
    };
  }
  const NAMES = [
    'netdiag_http_requests_total',
    'netdiag_http_request_duration_seconds',
    'netdiag_cache_operations_total',
  ];

  type Step =
    | { kind: 'request'; route: string; method: string; status: number; seconds: number }
    | { kind: 'cache'; result: 'hit' | 'miss' | 'error' }
    | { kind: 'reset'; which: 'requests' | 'duration' | 'cache' | 'registry' };

  const step: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record({
        kind: fc.constant('request' as const),
        route: fc.oneof(
          fc.constantFrom(
            '/api/dns',
            '/api/email-security',
            '/api/ip',
            '/healthz',
            'unmatched',
            '/x,route:y',
            'y',
          ),
          fc.string({ maxLength: 8 }),
        ),
        method: fc.constantFrom('GET', 'HEAD', 'POST', 'OPTIONS', 'GET,route:/x'),
        status: fc.oneof(
          fc.constantFrom(200, 304, 404, 429, 500, 502, 503),
          fc.integer({ min: 100, max: 599 }),
        ),
        seconds: observation,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('cache' as const),
        result: fc.constantFrom('hit', 'miss', 'error'),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('reset' as const),
        which: fc.constantFrom('requests', 'duration', 'cache', 'registry'),
      }),
    },
  );

  async function exposition(registry: Registry) {
    const text = await Promise.all(NAMES.map((name) => registry.getSingleMetricAsString(name)));
    const json = (await registry.getMetricsAsJSON()).filter((metric) => NAMES.includes(metric.name));
    const wire = JSON.parse(JSON.stringify(json));
    return {
      text,
      json,
      jsonText: JSON.stringify(json),
      summed: await AggregatorRegistry.aggregate([wire, wire]).metrics(),
    };
  }

  it("expose what prom-client's inc and observe with label objects exposed, for any sequence", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 150, size: 'max' }), async (steps) => {
        const ours = new Metrics();
        const bound = { hit: ours.cacheHit, miss: ours.cacheMiss, error: ours.cacheError };
        const theirs = promClientMetrics();
        for (const s of steps) {
          if (s.kind === 'request') {
            ours.recordRequest(s.route, s.method, s.status, s.seconds);
            // What the onResponse hook did before.
            theirs.requests.inc({ route: s.route, method: s.method, status: String(s.status) });
            theirs.duration.observe({ route: s.route, method: s.method }, s.seconds);
          } else if (s.kind === 'cache') {
            bound[s.result].inc();
            theirs.cache.inc({ result: s.result });
          } else if (s.which === 'registry') {
            ours.registry.resetMetrics();
            theirs.registry.resetMetrics();
          } else {
            ours[s.which].reset();
            theirs[s.which].reset();
          }
        }
        const [mine, reference] = [await exposition(ours.registry), await exposition(theirs.registry)];
        expect(mine.text).toEqual(reference.text);
        expect(mine.json).toStrictEqual(reference.json);
        expect(mine.jsonText).toBe(reference.jsonText);
        expect(mine.summed).toBe(reference.summed);
      }),
      { numRuns: 150 },
    );
  });
});
