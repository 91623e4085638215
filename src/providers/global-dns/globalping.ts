/**
 * Globalping (https://globalping.io) as a global DNS measurement provider.
 *
 *   POST /v1/measurements  {type: "dns", target, locations: [{country, limit: 1}, ...],
 *                           measurementOptions: {query: {type}}}      → 202 {id, probesCount}
 *   GET  /v1/measurements/{id}                                         → 200 {status, results[]}
 *
 * Polling follows Globalping's client guidelines: read the status right after
 * creation, then 500 ms after each response (never faster), with ETag /
 * If-None-Match; a 429 on a poll waits out its Retry-After. The measurement gets a deadline (20 s
 * by default); past it the adapter answers with what the probes reported so
 * far (`complete: false`) rather than failing a measurement that mostly worked.
 * Every request asks for a compressed answer (http-client.ts decodedBody).
 *
 * Creating spends Globalping's hourly test quota (quota.ts): every answer to a
 * create reports it, and while it is known to be spent the adapter fails at once
 * (rate_limited, naming the reset) without asking Globalping.
 *
 * With one location per country and a limit on each, Globalping picks a
 * probe where it has one and silently skips countries it has none in; only
 * when no location matches at all does creation answer 422 no_probes_found.
 * Both are answers (countries unmeasured), not failures.
 *
 * Vendor shapes: jsdelivr/globalping public/v1 OpenAPI (components/schemas.yaml,
 * responses.yaml, examples.yaml); samples in test/fixtures/globalping/.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { ProviderError } from '../../errors.js';
import { deadlineSignal } from '../deadline.js';
import {
  ACCEPT_ENCODING,
  decodedBody,
  type HttpClient,
  type HttpRequest,
  type HttpResponse,
  joinUrl,
  parseJson,
  parseRetryAfter,
} from '../http-client.js';
import type { ProviderQuota } from '../registry.js';
import type { ProviderInfo } from '../types.js';
import { GlobalpingQuota, type QuotaRefusal } from './quota.js';
import type {
  GlobalDnsAnswer,
  GlobalDnsMeasurement,
  GlobalDnsProbeResult,
  GlobalDnsProvider,
  GlobalDnsQuestion,
  ProbeOutcome,
} from './types.js';

/**
 * Globalping asks clients not to poll a measurement more often than this, and limits
 * each client to 5 reads of one measurement per 2 s (src/lib/rate-limiter/rate-limiter-get.ts,
 * `getPerMeasurement: {limit: 5, reset: 2}`; past it, 429 with Retry-After for 5 s).
 * With each read sent at least this long after the previous one, at most 4 fall in any 2 s.
 */
export const MIN_POLL_INTERVAL_MS = 500;
export const DEFAULT_DEADLINE_MS = 20_000;
/** A 429 without a usable Retry-After waits this long before the next poll. */
const DEFAULT_RETRY_AFTER_MS = 1_000;

export interface GlobalpingOptions {
  info: ProviderInfo;
  /** GLOBALPING_URL; may carry a path prefix. */
  baseUrl: string;
  /** GLOBALPING_TOKEN, sent as `Authorization: Bearer` for the higher authenticated limits. */
  token?: string | undefined;
  http: Pick<HttpClient, 'send'>;
  /** Timeout of each HTTP request (creation, every poll): PROVIDER_TIMEOUT_MS. */
  requestTimeoutMs: number;
  /** Pause between polls; raised to MIN_POLL_INTERVAL_MS if lower. */
  pollIntervalMs?: number;
  /** How long after creation the adapter keeps polling before answering with partial results. */
  deadlineMs?: number;
  /** Time source for the deadline and HTTP-date Retry-After (tests pass a virtual clock). */
  clock?: () => number;
  /** Waits between polls; rejects when the signal aborts (tests pass a virtual sleep). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Told once per window when Globalping's answer shows the quota spent (the app logs it). */
  onQuotaSpent?: (refusal: QuotaRefusal) => void;
}

// --- Vendor response types (only the fields this adapter reads) -------------

interface GpErrorBody {
  error?: { type?: unknown; message?: unknown; params?: unknown };
}

interface GpCreated {
  id?: unknown;
}

interface GpAnswer {
  name?: unknown;
  type?: unknown;
  ttl?: unknown;
  value?: unknown;
}

interface GpProbeResult {
  probe?: {
    continent?: unknown;
    country?: unknown;
    city?: unknown;
    asn?: unknown;
    network?: unknown;
  };
  result?: {
    /** in-progress | finished | failed | offline */
    status?: unknown;
    statusCodeName?: unknown;
    answers?: unknown;
    timings?: { total?: unknown };
    resolver?: unknown;
  };
}

interface GpMeasurement {
  id?: unknown;
  /** in-progress, then a final one: finished | failed | timed-out */
  status?: unknown;
  results?: unknown;
}

type PollOutcome =
  | { kind: 'snapshot'; data: GpMeasurement }
  | { kind: 'retry'; afterMs: number; why: string };

/** What one measurement's polling remembers: the last body read and its ETag. */
interface PollState {
  etag: string | undefined;
  snapshot: GpMeasurement | undefined;
}

export class GlobalpingAdapter implements GlobalDnsProvider {
  readonly info: ProviderInfo;
  readonly maxDurationMs: number;
  readonly #opts: GlobalpingOptions;
  readonly #pollIntervalMs: number;
  readonly #deadlineMs: number;
  readonly #clock: () => number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #quota: GlobalpingQuota;

  constructor(opts: GlobalpingOptions) {
    this.#opts = opts;
    this.info = opts.info;
    this.#pollIntervalMs = Math.max(MIN_POLL_INTERVAL_MS, opts.pollIntervalMs ?? MIN_POLL_INTERVAL_MS);
    this.#deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
    this.#clock = opts.clock ?? Date.now;
    this.#sleep = opts.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
    this.#quota = new GlobalpingQuota({ clock: this.#clock, authenticated: Boolean(opts.token) });
    // Creation, polling until the deadline, and the last poll in flight when it passes.
    this.maxDurationMs = opts.requestTimeoutMs + this.#deadlineMs + opts.requestTimeoutMs;
  }

  /** Set while Globalping is known to refuse a measurement from `countries` countries: why, until when. */
  quotaRefusal(countries: number): QuotaRefusal | undefined {
    return this.#quota.refusal(countries);
  }

  /** Globalping's last report of the quota, for /api/providers. */
  quota(): ProviderQuota | undefined {
    return this.#quota.listing();
  }

  async measure(question: GlobalDnsQuestion, signal: AbortSignal): Promise<GlobalDnsMeasurement> {
    // One probe per country: the precheck counts the locations' limits, 1 each.
    const refusal = this.#quota.refusal(question.countries.length);
    if (refusal)
      throw new ProviderError('rate_limited', `hourly test quota spent (${refusal.reason}); not asked`);
    const id = await this.#create(question, signal);
    if (id === null) return { id: null, complete: true, probes: [] };

    const deadline = this.#clock() + this.#deadlineMs;
    const state: PollState = { etag: undefined, snapshot: undefined };
    let lastProblem: string | undefined;
    // Globalping's client guidelines: read the status right after creation, then wait 500 ms
    // *after* each response (not a fixed 500 ms beat) before reading it again.
    let wait = 0;
    while (wait <= deadline - this.#clock()) {
      if (wait > 0) await this.#sleep(wait, signal);
      const outcome = await this.#poll(id, state, signal);
      if (outcome.kind === 'retry') {
        lastProblem = outcome.why;
        wait = Math.max(this.#pollIntervalMs, outcome.afterMs);
        continue;
      }
      // Any status but in-progress is final (finished, failed, timed-out); only finished is complete.
      if (outcome.data.status !== 'in-progress') {
        return { id, complete: outcome.data.status === 'finished', probes: probesOf(outcome.data) };
      }
      wait = this.#pollIntervalMs;
    }
    if (state.snapshot === undefined) {
      throw new ProviderError(
        'timeout',
        `measurement ${id} could not be read within ${this.#deadlineMs} ms${lastProblem ? ` (${lastProblem})` : ''}`,
      );
    }
    return { id, complete: false, probes: probesOf(state.snapshot) };
  }

  /** Creates the measurement; null when Globalping has no probe in any of the countries. */
  async #create(question: GlobalDnsQuestion, signal: AbortSignal): Promise<string | null> {
    const url = joinUrl(this.#opts.baseUrl, '/v1/measurements');
    const body = JSON.stringify({
      type: 'dns',
      target: question.target,
      locations: question.countries.map((country) => ({ country, limit: 1 })),
      measurementOptions: { query: { type: question.type } },
    });
    const raw = await this.#opts.http.send(url, {
      method: 'POST',
      headers: { ...this.#headers(), 'content-type': 'application/json' },
      body,
      signal: this.#requestSignal(signal),
      // A 429 is still a failure, but its headers carry the quota and its body names the limit
      // (hourly rate or credits).
      passStatuses: [429],
    });
    // Read before the body, which may yet prove unreadable: the quota was spent either way.
    const cost = question.countries.length;
    if (this.#quota.observe(raw.status, raw.headers, cost)) {
      const refusal = this.#quota.refusal(cost);
      if (refusal) this.#opts.onQuotaSpent?.(refusal);
    }
    const res = { ...raw, body: await decodedBody(raw) };
    if (res.status === 202 || res.status === 200 || res.status === 201) {
      const created = parseJson<GpCreated>(res.body, url);
      if (typeof created?.id !== 'string' || created.id === '') {
        throw new ProviderError('bad_response', 'Globalping created a measurement without an id');
      }
      return created.id;
    }
    const problem = errorOf(res, url);
    if (res.status === 422 && problem.type === 'no_probes_found') return null;
    if (res.status === 429) {
      const refusal = this.#quota.refusal(cost);
      throw new ProviderError(
        'rate_limited',
        `Globalping refused the measurement (${problem.text}${refusal ? `; ${refusal.reason}` : ''})`,
      );
    }
    // A 4xx here means Globalping will not run this question (for instance a record type it does not
    // offer); a fallback provider might, so it is an operational failure of this provider, not bad input.
    throw new ProviderError(
      'upstream_error',
      `Globalping rejected the measurement (HTTP ${res.status}: ${problem.text})`,
    );
  }

  async #poll(id: string, state: PollState, signal: AbortSignal): Promise<PollOutcome> {
    const url = joinUrl(this.#opts.baseUrl, `/v1/measurements/${encodeURIComponent(id)}`);
    const headers = this.#headers();
    // ETag caching, as Globalping asks of clients: an unchanged measurement comes back as a bodiless 304.
    if (state.etag !== undefined && state.snapshot !== undefined) headers['if-none-match'] = state.etag;
    let res: HttpResponse;
    try {
      res = await this.#send(url, {
        headers,
        signal: this.#requestSignal(signal),
        passStatuses: [429],
      });
    } catch (err) {
      // The chain gave up (or the client left): stop. Otherwise a failed poll (5xx, reset,
      // slow answer) is retried until the deadline, since the measurement itself is running.
      if (signal.aborted || !(err instanceof ProviderError)) throw err;
      return { kind: 'retry', afterMs: this.#pollIntervalMs, why: `${err.kind}: ${err.message}` };
    }
    if (res.status === 429) {
      const afterMs = parseRetryAfter(res.headers['retry-after'], this.#clock()) ?? DEFAULT_RETRY_AFTER_MS;
      return { kind: 'retry', afterMs, why: 'HTTP 429 while polling' };
    }
    if (res.status === 304 && state.snapshot !== undefined) return { kind: 'snapshot', data: state.snapshot };
    if (res.status !== 200) {
      throw new ProviderError(
        'upstream_error',
        `Globalping measurement ${id}: HTTP ${res.status} (${errorOf(res, url).text})`,
      );
    }
    let data: GpMeasurement;
    try {
      data = parseJson<GpMeasurement>(res.body, url);
    } catch (err) {
      if (err instanceof ProviderError)
        return { kind: 'retry', afterMs: this.#pollIntervalMs, why: err.message };
      throw err;
    }
    if (typeof data !== 'object' || data === null || !Array.isArray(data.results)) {
      throw new ProviderError('bad_response', `Globalping measurement ${id} has no results array`);
    }
    const etag = res.headers.etag;
    state.etag = typeof etag === 'string' ? etag : undefined;
    state.snapshot = data;
    return { kind: 'snapshot', data };
  }

  /** Sends, and undoes the Content-Encoding of the answer. */
  async #send(url: string, req: HttpRequest): Promise<HttpResponse> {
    const res = await this.#opts.http.send(url, req);
    return { ...res, body: await decodedBody(res) };
  }

  #headers(): Record<string, string> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'accept-encoding': ACCEPT_ENCODING,
    };
    if (this.#opts.token) headers.authorization = `Bearer ${this.#opts.token}`;
    return headers;
  }

  #requestSignal(signal: AbortSignal): AbortSignal {
    return deadlineSignal(this.#opts.requestTimeoutMs, signal);
  }
}

/** `{error: {type, message, params}}` of a Globalping error response, as text for a failure message. */
function errorOf(res: HttpResponse, url: string): { type: string | undefined; text: string } {
  let body: GpErrorBody | undefined;
  try {
    body = parseJson<GpErrorBody>(res.body, url);
  } catch {
    return { type: undefined, text: 'no error body' };
  }
  const error = typeof body === 'object' && body !== null ? body.error : undefined;
  const type = typeof error?.type === 'string' ? error.type : undefined;
  const message = typeof error?.message === 'string' ? error.message : undefined;
  const params =
    typeof error?.params === 'object' && error.params !== null
      ? Object.values(error.params).filter((v): v is string => typeof v === 'string')
      : [];
  const text = [type, message, ...params].filter(Boolean).join(': ').slice(0, 300);
  return { type, text: text || 'no error detail' };
}

function probesOf(measurement: GpMeasurement): GlobalDnsProbeResult[] {
  const results = Array.isArray(measurement.results) ? (measurement.results as GpProbeResult[]) : [];
  return results.flatMap((entry) => {
    const probe = entry?.probe;
    if (typeof probe?.country !== 'string') return []; // a probe we cannot place answers nothing useful
    const result = entry.result ?? {};
    const status = outcomeOf(result.status);
    const answered = status === 'finished';
    return [
      {
        country: probe.country.toUpperCase(),
        city: str(probe.city),
        continent: str(probe.continent),
        asn: typeof probe.asn === 'number' ? probe.asn : null,
        network: str(probe.network),
        resolver: str(result.resolver),
        status,
        rcode: answered ? str(result.statusCodeName) : null,
        answers: answered && Array.isArray(result.answers) ? answersOf(result.answers as GpAnswer[]) : [],
        time_ms: answered && typeof result.timings?.total === 'number' ? result.timings.total : null,
      },
    ];
  });
}

function outcomeOf(status: unknown): ProbeOutcome {
  if (status === 'finished') return 'finished';
  // Still running when the measurement was last read: only seen once the deadline has passed.
  if (status === 'in-progress') return 'timeout';
  // failed (dig could not reach a resolver), offline (the probe disconnected), or anything new.
  return 'failed';
}

function answersOf(answers: GpAnswer[]): GlobalDnsAnswer[] {
  return answers.flatMap((a) => {
    if (typeof a?.name !== 'string' || typeof a.type !== 'string' || typeof a.value !== 'string') return [];
    const type = a.type.toUpperCase();
    return [
      {
        name: withoutRootDot(a.name),
        type,
        ttl: typeof a.ttl === 'number' && a.ttl >= 0 ? Math.floor(a.ttl) : 0,
        value: valueWithoutRootDots(type, a.value),
      },
    ];
  });
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function withoutRootDot(name: string): string {
  return name.length > 1 && name.endsWith('.') ? name.slice(0, -1) : name;
}

/**
 * Positions of domain names inside each type's presentation format (RFC 1035
 * §3.3, RFC 2782 for SRV), so every name reads like /api/dns's: no trailing dot.
 */
const NAME_FIELDS: Readonly<Record<string, readonly number[]>> = {
  CNAME: [0],
  NS: [0],
  PTR: [0],
  DNAME: [0],
  MX: [1],
  SOA: [0, 1],
  SRV: [3],
};

function valueWithoutRootDots(type: string, value: string): string {
  const fields = NAME_FIELDS[type];
  if (!fields) return value;
  const parts = value.trim().split(/\s+/);
  for (const i of fields) {
    const part = parts[i];
    if (part !== undefined) parts[i] = withoutRootDot(part);
  }
  return parts.join(' ');
}
