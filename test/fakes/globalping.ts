/**
 * A fake Globalping API (https://globalping.io/docs/api.globalping.io) on loopback: the
 * HTTPS upstream fake with the two calls the adapter makes. POST /v1/measurements answers
 * `createReply`; each GET /v1/measurements/<id> answers the next of `pollReplies`, counted
 * per measurement, the last one repeating (a finished measurement stays finished).
 *
 *   const gp = await startGlobalping({ pollReplies: [IN_PROGRESS, FINISHED] });
 *   gp.createReply = { status: 422, json: fixture('globalping/scenarios/error-422-no-probes-found.json') };
 *   gp.creations(); gp.polls();   // the requests received, by kind
 *   gp.spend(245);                // as if earlier measurements had spent 245 tests this hour
 *   gp.clock = virtual.clock;     // the limits' windows follow the test's time
 *   gp.reset();                   // requests, fault, counts, limits and replies back to the start
 *
 * Around those replies it keeps Globalping's own limits, as jsdelivr/globalping enforces them
 * (config/default.cjs `measurement.rateLimit`, src/lib/rate-limiter/rate-limiter-post.ts and
 * rate-limiter-get.ts, whose integration test test/tests/integration/ratelimit.test.ts pins
 * the headers):
 *
 * - creating spends one test per requested probe (the sum of the locations' limits) from an
 *   hourly window that starts with the first test spent: 250 per address without a token,
 *   500 with one (`Authorization: Bearer`). Every 2xx create carries X-RateLimit-Limit,
 *   -Consumed, -Remaining, -Reset (seconds to the window's end) and X-Request-Cost. A create
 *   costing more than remains is refused whole: 429 `rate_limit_exceeded` (with a token,
 *   `insufficient_credits` and X-Credits-Consumed/-Remaining 0: the fake's accounts have no
 *   credits), the same headers with Consumed 0, and no Retry-After;
 * - reading one measurement is limited to 5 GETs per 2 s window; the 6th is refused and the
 *   measurement blocked for 5 s: 429 `too_many_requests` with Retry-After (whole seconds);
 * - bodies are compressed as the client's Accept-Encoding allows, Brotli first: a measurement
 *   always (Globalping stores it Brotli-compressed and sends it as stored), anything else
 *   from 1 KB (koa-compress's threshold). `encodings` narrows what the fake will use.
 *
 * A create reply that is not a 2xx (a 422, a 400, a fault) spends nothing and carries no
 * limit headers, as Globalping's own do not.
 */
import { brotliCompressSync, gzipSync } from 'node:zlib';
import {
  type FakeReply,
  type FakeRequest,
  type FakeUpstream,
  fixture,
  startFakeUpstream,
} from './https-upstream.js';

/** A 202 to a measurement request, in the documented shape `{id, probesCount}`: ten probes, as GLOBALPING_FINISHED has. */
export const GLOBALPING_CREATED: FakeReply = {
  status: 202,
  json: { id: 'gdFakeCreated001', probesCount: 10 },
};

/** A finished measurement: ten countries, one consistent answer. */
export const GLOBALPING_FINISHED: FakeReply = {
  json: fixture('globalping/scenarios/ten-finished-consistent.json'),
};

/** Tests per hour (config/default.cjs `measurement.rateLimit.post`). */
export const GLOBALPING_ANONYMOUS_LIMIT = 250;
export const GLOBALPING_AUTHENTICATED_LIMIT = 500;
const WINDOW_MS = 3_600_000;
/** Reads of one measurement per window, the window, and the block past it (`getPerMeasurement`, `blockDuration`). */
export const GLOBALPING_POLL_LIMIT = { reads: 5, windowMs: 2_000, blockMs: 5_000 };
/** koa-compress's default threshold. */
const COMPRESS_FROM_BYTES = 1024;

export type GlobalpingEncoding = 'br' | 'gzip';

export interface GlobalpingOptions {
  /** e.g. '/gp': the API answers below it (GLOBALPING_URL may carry a path). */
  prefix?: string;
  /** Default GLOBALPING_CREATED. */
  createReply?: FakeReply;
  /** Default [GLOBALPING_FINISHED]; an empty list answers every poll 500. */
  pollReplies?: FakeReply[];
}

export interface FakeGlobalping extends FakeUpstream {
  /** The answer to the next measurement request; reset() restores the one given at start. */
  createReply: FakeReply;
  /** The answers to a measurement's successive polls; reset() restores the ones given at start. */
  pollReplies: FakeReply[];
  /** The time the limits' windows follow (Date.now unless a test shares its virtual clock). */
  clock: () => number;
  /** The codings the fake may answer in, in its order of preference; reset() restores both. */
  encodings: GlobalpingEncoding[];
  /** Spends tests of the hourly quota of `token` (the address's without one), as earlier creates would. */
  spend(tests: number, token?: string): void;
  /** The measurement requests received (POST /v1/measurements). */
  creations(): FakeRequest[];
  /** The polls received (GET /v1/measurements/<id>). */
  polls(): FakeRequest[];
}

interface Window {
  start: number;
  used: number;
}

export async function startGlobalping(opts: GlobalpingOptions = {}): Promise<FakeGlobalping> {
  const initialCreate = opts.createReply ?? GLOBALPING_CREATED;
  const initialPolls = opts.pollReplies ?? [GLOBALPING_FINISHED];
  /** Polls answered so far, per measurement path. */
  const polled = new Map<string, number>();
  /** Hourly test windows, per client ('' for the address, else the token). */
  const quotas = new Map<string, Window>();
  /** Read windows and blocks, per measurement path. */
  const reads = new Map<string, Window & { blockedUntil: number }>();

  const quotaOf = (client: string): Window => {
    const now = gp.clock();
    let window = quotas.get(client);
    if (window === undefined || now >= window.start + WINDOW_MS) {
      window = { start: now, used: 0 };
      quotas.set(client, window);
    }
    return window;
  };

  const create = (req: FakeRequest): FakeReply => {
    const reply = gp.createReply;
    if (reply.fault !== undefined || (reply.status ?? 200) >= 300) return reply;
    const token = bearer(req);
    const limit = token === '' ? GLOBALPING_ANONYMOUS_LIMIT : GLOBALPING_AUTHENTICATED_LIMIT;
    const cost = costOf(req);
    const window = quotaOf(token);
    const refused = limit - window.used < cost;
    if (!refused) window.used += cost;
    const headers: Record<string, string> = {
      'x-ratelimit-reset': String(Math.round((window.start + WINDOW_MS - gp.clock()) / 1000)),
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-consumed': String(refused ? 0 : cost),
      'x-ratelimit-remaining': String(Math.max(0, limit - window.used)),
      'x-request-cost': String(cost),
    };
    if (!refused) return { ...reply, headers: { ...headers, ...reply.headers } };
    const doc = 'https://globalping.io/docs/api.globalping.io#post-/v1/measurements';
    if (token !== '') {
      return {
        status: 429,
        headers: { ...headers, 'x-credits-consumed': '0', 'x-credits-remaining': '0' },
        json: {
          error: { type: 'insufficient_credits', message: 'Not enough credits to run this measurement.' },
          links: { documentation: doc },
        },
      };
    }
    return {
      status: 429,
      headers,
      json: fixture('globalping/scenarios/error-429-create-rate-limit-exceeded.json'),
    };
  };

  const poll = (req: FakeRequest): FakeReply => {
    const now = gp.clock();
    let window = reads.get(req.path);
    if (
      window === undefined ||
      (now >= window.start + GLOBALPING_POLL_LIMIT.windowMs && now >= window.blockedUntil)
    ) {
      window = { start: now, used: 0, blockedUntil: 0 };
      reads.set(req.path, window);
    }
    if (now < window.blockedUntil) return tooManyReads(window.blockedUntil - now);
    window.used += 1;
    if (window.used > GLOBALPING_POLL_LIMIT.reads) {
      window.blockedUntil = now + GLOBALPING_POLL_LIMIT.blockMs;
      return tooManyReads(GLOBALPING_POLL_LIMIT.blockMs);
    }
    const n = polled.get(req.path) ?? 0;
    polled.set(req.path, n + 1);
    const replies = gp.pollReplies;
    return replies[Math.min(n, replies.length - 1)] ?? { status: 500, json: {} };
  };

  const upstream = await startFakeUpstream({
    ...(opts.prefix ? { prefix: opts.prefix } : {}),
    routes: { 'POST /v1/measurements': (req) => encoded(req, create(req), 'threshold') },
    handler: (req) => {
      if (req.method !== 'GET' || !req.path.startsWith('/v1/measurements/')) return { status: 404, json: {} };
      const reply = poll(req);
      return encoded(req, reply, (reply.status ?? 200) === 200 ? 'always' : 'threshold');
    },
  });

  /** The reply compressed as Globalping would for this request's Accept-Encoding. */
  const encoded = (req: FakeRequest, reply: FakeReply, when: 'always' | 'threshold'): FakeReply => {
    if (reply.fault !== undefined || reply.json === undefined) return reply;
    const body = Buffer.from(JSON.stringify(reply.json));
    const accepted = acceptedCodings(req.headers['accept-encoding']);
    const coding = gp.encodings.find((c) => accepted.has(c));
    if (coding === undefined || (when === 'threshold' && body.length < COMPRESS_FROM_BYTES)) return reply;
    const { json: _, ...rest } = reply;
    return {
      ...rest,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        ...reply.headers,
        'content-encoding': coding,
        vary: 'Accept-Encoding',
      },
      body: coding === 'br' ? brotliCompressSync(body) : gzipSync(body),
    };
  };

  const resetUpstream = upstream.reset.bind(upstream);
  const gp: FakeGlobalping = Object.assign(upstream, {
    createReply: initialCreate,
    pollReplies: initialPolls,
    clock: Date.now,
    encodings: ['br', 'gzip'] as GlobalpingEncoding[],
    spend(tests: number, token = ''): void {
      quotaOf(token).used += tests;
    },
    creations: () => upstream.requests.filter((r) => r.method === 'POST'),
    polls: () => upstream.requests.filter((r) => r.method === 'GET'),
    reset(): void {
      resetUpstream();
      polled.clear();
      quotas.clear();
      reads.clear();
      gp.createReply = initialCreate;
      gp.pollReplies = initialPolls;
      gp.clock = Date.now;
      gp.encodings = ['br', 'gzip'];
    },
  });
  return gp;
}

function tooManyReads(waitMs: number): FakeReply {
  const seconds = Math.ceil(waitMs / 1000);
  return {
    status: 429,
    headers: { 'retry-after': String(seconds) },
    json: {
      error: {
        type: 'too_many_requests',
        message: `Too many requests. Please retry in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`,
      },
      links: { documentation: 'https://globalping.io/docs/api.globalping.io#get-/v1/measurements/-id-' },
    },
  };
}

/** The token of `Authorization: Bearer <token>`, '' without one (the address's quota). */
function bearer(req: FakeRequest): string {
  const auth = req.headers.authorization;
  return typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : '';
}

/** Tests a create asks for: the sum of its locations' limits (Globalping's precheck), else its limit. */
function costOf(req: FakeRequest): number {
  try {
    const body = JSON.parse(req.body.toString('utf8')) as {
      locations?: { limit?: number }[];
      limit?: number;
    };
    const limits = (body.locations ?? []).map((l) => l.limit ?? 1);
    return limits.length > 0 ? limits.reduce((a, b) => a + b, 0) : (body.limit ?? 1);
  } catch {
    return 1;
  }
}

/** Codings an Accept-Encoding header accepts (q=0 refuses one). */
function acceptedCodings(header: string | string[] | undefined): Set<string> {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  const accepted = new Set<string>();
  for (const part of value.split(',')) {
    const [name, ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (name && !(q !== undefined && Number(q.slice(2)) === 0)) accepted.add(name);
  }
  return accepted;
}
