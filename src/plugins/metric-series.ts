/**
 * prom-client's Counter and Histogram with each label set's series built once.
 *
 * prom-client validates and hashes the label object and allocates on every inc and
 * observe (about 0.7 µs a request for the two request metrics, and garbage); its
 * `labels()` handles hash again on every call. Here a label set is validated and keyed
 * once, when its series is first asked for, and the series object it returns then
 * counts in place. The metrics stay prom-client instances in the app's Registry and
 * report what prom-client's own would for the same calls (`get()` and the text
 * exposition's `getForPromString()` build the same values in the same order, `reset()`
 * and `remove()` forget series the same way), so the text, getMetricsAsJSON and the
 * cluster aggregator (server.ts) are unchanged. test/unit/plugins/metric-series.test.ts
 * compares the two on random call sequences.
 *
 * Every write goes through the series (inc, observe, labels, startTimer, zero,
 * remove): prom-client's own value map stays empty, and nothing of it is written here.
 */
import { format, inspect } from 'node:util';
import {
  type Aggregator,
  Counter,
  type CounterConfiguration,
  Histogram,
  type HistogramConfiguration,
} from 'prom-client';

type Labels = Record<string, string | number | undefined>;
type LabelValues<T extends string> = Partial<Record<T, string | number>>;

/** What the Metric base class keeps for the Registry; read only. */
interface MetricFields {
  name: string;
  help: string;
  aggregator: Aggregator;
}

/** One value line as prom-client's Histogram builds it for the text exposition. */
interface PromStringValue {
  labels: Labels;
  sharedLabels: Labels;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

/**
 * The series of one metric by label set, and the ones it currently exposes in the order
 * they were first counted since the last reset, as prom-client's value map orders them.
 * A reset or remove only unexposes a series, so a bound counter taken before it still
 * counts; the label sets stay known, as many as the metric's cardinality.
 */
class SeriesSet<S extends { exposed: boolean; labels: Labels }> {
  private readonly sortedNames: string[];
  private readonly byKey = new Map<string, S>();
  exposed: S[] = [];

  constructor(
    readonly labelNames: readonly string[],
    private readonly create: (set: SeriesSet<S>) => S,
  ) {
    this.sortedNames = [...labelNames].sort();
  }

  /**
   * The series of a label set, created unexposed the first time. Keyed as prom-client's
   * hashObject keys it (undefined values left out), so label sets it merges merge here.
   */
  find(labels: Labels): S {
    for (const name in labels) {
      if (!this.labelNames.includes(name)) {
        throw new Error(
          `Added label "${name}" is not included in initial labelset: ${inspect(this.labelNames)}`,
        );
      }
    }
    let key = '';
    for (const name of this.sortedNames) {
      const value = labels[name];
      if (value !== undefined) key += `${name}:${value},`;
    }
    let series = this.byKey.get(key);
    if (series === undefined) {
      series = this.create(this);
      this.byKey.set(key, series);
    }
    return series;
  }

  /**
   * Exposes a series after the others, printed with the labels of the call that counted
   * it first (their key order is the printed order), as prom-client keeps that call's object.
   */
  expose(series: S, labels: Labels): void {
    series.labels = { ...labels };
    series.exposed = true;
    this.exposed.push(series);
  }

  remove(labels: Labels): void {
    const series = this.find(labels);
    if (!series.exposed) return;
    series.exposed = false;
    this.exposed.splice(this.exposed.indexOf(series), 1);
  }

  clear(): void {
    for (const series of this.exposed) series.exposed = false;
    this.exposed = [];
  }
}

/** prom-client's getLabels: one label object, or the values in labelNames order. */
function labelsOf({ labelNames }: { labelNames: readonly string[] }, args: unknown[]): Labels {
  if (typeof args[0] === 'object') return (args[0] ?? {}) as Labels;
  if (labelNames.length !== args.length) {
    throw new Error(
      `Invalid number of arguments (${args.length}): "${args.join(', ')}" for label names (${labelNames.length}): "${labelNames.join(', ')}".`,
    );
  }
  const labels: Labels = {};
  labelNames.forEach((name, i) => {
    labels[name] = args[i] as string;
  });
  return labels;
}

/** prom-client's checks on an increment; 1 when omitted. */
function increment(value: number | undefined): number {
  if (value === undefined) return 1;
  if (value && !Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${format(value)}`);
  if (value < 0) throw new Error('It is not possible to decrease a counter');
  return value ?? 1;
}

class CounterSeries {
  exposed = false;
  labels: Labels = {};
  value = 0;

  constructor(private readonly set: SeriesSet<CounterSeries>) {}

  add(labels: Labels, by: number): void {
    if (!this.exposed) {
      this.value = 0;
      this.set.expose(this, labels);
    }
    this.value += by;
  }
}

/** One label set of a SeriesCounter, validated and found once: `inc()` adds in place. */
export class BoundCounter {
  constructor(
    private readonly series: CounterSeries,
    private readonly labels: Labels,
  ) {}

  inc(value?: number): void {
    this.series.add(this.labels, increment(value));
  }
}

export type SeriesCounterConfiguration<T extends string> = Omit<
  CounterConfiguration<T>,
  'collect' | 'enableExemplars'
>;

/** A prom-client Counter whose label sets count in series of their own. */
export class SeriesCounter<T extends string = string> extends Counter<T> {
  private readonly seriesSet: SeriesSet<CounterSeries>;

  constructor(config: SeriesCounterConfiguration<T>) {
    super(config);
    const set = new SeriesSet<CounterSeries>(config.labelNames ?? [], (owner) => new CounterSeries(owner));
    this.seriesSet = set;
    // prom-client sets inc on the instance in its constructor, so it is replaced here.
    this.inc = ((labels?: LabelValues<T> | number, value?: number) => {
      if (labels !== null && typeof labels === 'object') set.find(labels).add(labels, increment(value));
      else set.find({}).add({}, increment(labels));
    }) as Counter<T>['inc'];
    this.reset();
  }

  /** One label set's counter, validated once: the cheap way to count it again and again. */
  override labels(...values: string[]): BoundCounter;
  override labels(labels: LabelValues<T>): BoundCounter;
  override labels(...args: unknown[]): BoundCounter {
    const labels = labelsOf(this.seriesSet, args);
    return new BoundCounter(this.seriesSet.find(labels), { ...labels });
  }

  override remove(...values: string[]): void;
  override remove(labels: LabelValues<T>): void;
  override remove(...args: unknown[]): void {
    this.seriesSet.remove(labelsOf(this.seriesSet, args));
  }

  override reset(): void {
    // prom-client's constructor calls reset() before this class has set anything up.
    if (this.seriesSet === undefined) return;
    this.seriesSet.clear();
    // An unlabelled counter reads 0 from the start and after each reset, as prom-client's does.
    if (this.seriesSet.labelNames.length === 0) this.seriesSet.find({}).add({}, 0);
  }

  override async get(): ReturnType<Counter<T>['get']> {
    const { help, name, aggregator } = this as unknown as MetricFields;
    const values = this.seriesSet.exposed.map((series) => ({ value: series.value, labels: series.labels }));
    // prom-client's declared type has a `collect` its objects never carry.
    return { help, name, type: 'counter', values, aggregator } as unknown as Awaited<
      ReturnType<Counter<T>['get']>
    >;
  }
}

class HistogramSeries {
  exposed = false;
  labels: Labels = {};
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative). */
  readonly buckets: Float64Array;

  constructor(
    private readonly set: SeriesSet<HistogramSeries>,
    private readonly bounds: Float64Array,
  ) {
    this.buckets = new Float64Array(bounds.length);
  }

  add(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${format(value)}`);
    if (!this.exposed) this.zero(labels);
    const { bounds } = this;
    // The first bound the value does not exceed, as prom-client's findBound; past the last, only +Inf.
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    if (i < bounds.length) this.buckets[i] = (this.buckets[i] as number) + 1;
    this.sum += value;
    this.count += 1;
  }

  /** Counts from zero: in its place and relabelled if exposed, as prom-client's zero(), else exposed last. */
  zero(labels: Labels): void {
    this.buckets.fill(0);
    this.sum = 0;
    this.count = 0;
    if (this.exposed) this.labels = { ...labels };
    else this.set.expose(this, labels);
  }
}

/** One label set of a SeriesHistogram, validated and found once: `observe()` counts in place. */
export class BoundHistogram {
  constructor(
    private readonly histogram: SeriesHistogram,
    private readonly series: HistogramSeries,
    private readonly labels: Labels,
  ) {}

  observe(value: number): void {
    this.series.add(this.labels, value);
  }

  startTimer(): (labels?: Labels) => number {
    return this.histogram.startTimer(this.labels);
  }
}

export type SeriesHistogramConfiguration<T extends string> = Omit<
  HistogramConfiguration<T>,
  'collect' | 'enableExemplars' | 'buckets'
> & { buckets: number[] };

/** A prom-client Histogram whose label sets count in series of their own. */
export class SeriesHistogram<T extends string = string> extends Histogram<T> {
  private readonly seriesSet: SeriesSet<HistogramSeries>;
  private readonly bounds: number[];

  constructor(config: SeriesHistogramConfiguration<T>) {
    super(config);
    const { buckets } = config;
    if (buckets.some((bound, i) => i > 0 && !(bound > (buckets[i - 1] as number)))) {
      // prom-client would count a repeated bound twice in the cumulative buckets.
      throw new Error('Histogram buckets must increase strictly');
    }
    this.bounds = [...buckets];
    const search = Float64Array.from(buckets);
    const set = new SeriesSet<HistogramSeries>(
      config.labelNames ?? [],
      (owner) => new HistogramSeries(owner, search),
    );
    this.seriesSet = set;
    // prom-client sets observe on the instance in its constructor, so it is replaced here.
    this.observe = ((labels?: LabelValues<T> | number, value?: number) => {
      if (labels !== null && typeof labels === 'object') set.find(labels).add(labels, value as number);
      else set.find({}).add({}, (labels === 0 || labels ? labels : value) as number);
    }) as Histogram<T>['observe'];
    // An unlabelled histogram is exposed from the start (not again after a reset), as prom-client's is.
    if (set.labelNames.length === 0) set.find({}).zero({});
  }

  /** One label set's histogram, validated once: the cheap way to observe it again and again. */
  override labels(...values: string[]): BoundHistogram;
  override labels(labels: LabelValues<T>): BoundHistogram;
  override labels(...args: unknown[]): BoundHistogram {
    const labels = labelsOf(this.seriesSet, args);
    return new BoundHistogram(this as SeriesHistogram, this.seriesSet.find(labels), { ...labels });
  }

  override remove(...values: string[]): void;
  override remove(labels: LabelValues<T>): void;
  override remove(...args: unknown[]): void {
    this.seriesSet.remove(labelsOf(this.seriesSet, args));
  }

  override zero(labels: LabelValues<T>): void {
    this.seriesSet.find(labels).zero(labels);
  }

  override reset(): void {
    // prom-client's constructor calls reset() before this class has set anything up.
    if (this.seriesSet === undefined) return;
    this.seriesSet.clear();
  }

  /** What the Registry prints from: the values prom-client's Histogram builds, in its order. */
  async getForPromString(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    values: PromStringValue[];
    aggregator: Aggregator;
  }> {
    const { name, help, aggregator } = this as unknown as MetricFields;
    const bucketName = `${name}_bucket`;
    const sumName = `${name}_sum`;
    const countName = `${name}_count`;
    const { bounds } = this;
    const values: PromStringValue[] = [];
    for (const series of this.seriesSet.exposed) {
      const sharedLabels = series.labels;
      let cumulative = 0;
      for (let i = 0; i < bounds.length; i++) {
        cumulative += series.buckets[i] as number;
        const labels = { le: bounds[i] as number };
        values.push({ labels, sharedLabels, value: cumulative, metricName: bucketName, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels, value: series.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels, value: series.sum, metricName: sumName, exemplar: undefined },
        { labels: {}, sharedLabels, value: series.count, metricName: countName, exemplar: undefined },
      );
    }
    return { name, help, type: 'histogram', values, aggregator };
  }

  override async get(): ReturnType<Histogram<T>['get']> {
    const data = await this.getForPromString();
    // prom-client's splayLabels: each value's own labels, then its series' labels, in one object.
    const values = data.values.map(({ labels, sharedLabels, ...rest }) => {
      for (const name of Object.keys(sharedLabels)) labels[name] = sharedLabels[name];
      return { ...rest, labels };
    });
    // prom-client's declared type has a `collect` its objects never carry.
    return { ...data, values } as unknown as Awaited<ReturnType<Histogram<T>['get']>>;
  }
}
