/**
 * How a cached answer is sent, and sent again (docs/architecture.md §7).
 *
 * A lookup served from the cache answers with the cache entry's own object, the same on
 * every hit, so `answer()` sends it through `reply.sendShared`: serialized once per entry,
 * not once per request.
 *
 * What Fastify then sends for that hit (status 200, every header the hooks set, the payload
 * as it left, compressed or not) is kept as a replay until the cache entry expires, keyed by
 * the request's raw URL and the encoding @fastify/compress chooses for it (br, gzip or
 * identity: `responseEncoding`, from Accept-Encoding and X-No-Compression): the two things
 * such a response depends on, besides the caller (its session, its address's budget), which
 * are checked afresh. Every spelling of Accept-Encoding that chooses one encoding shares one
 * replay, and no request header is kept in a key verbatim. The next GET with the same URL and
 * encoding is answered from the replay by the server's request listener (`serve`, wired in
 * app.ts), before Fastify routes it: no routing, request and reply objects, hooks,
 * validation or handler, only what differs per request, done by the same code the Fastify
 * path runs:
 *
 *  - the request id (logger.ts requestIdOf) and the client address (client-address.ts);
 *  - the challenge gate's verdict for a gated route (challenge-gate.ts);
 *  - the rate limit: the route's budgets counted (rate-limit/client-limits.ts admit), RateLimit written;
 *  - Cache-Control's max-age counted down from the entry's expiry (as a cache read does);
 *  - the access-log line, the request metrics and the cache-hit count.
 *
 * Anything else goes to Fastify untouched: a replay is only ever the happy path. A request
 * that would be refused (over its budget, no session, load shedding, a connection over
 * the cap, no Host, a body on a GET, the server closing) is answered by Fastify exactly as
 * before; a budget already counted here is handed over (rateLimits.settle), not counted
 * twice. Requests through app.inject never come here (the MCP route's tool calls, tests
 * that inject): inject calls Fastify's handler, not the server's listener.
 *
 * A replay lives no longer than its cache entry (the entry's exact expiry, on ctx.clock),
 * and at most REPLAY_BYTES are held, least recently used first out, counting everything a
 * replay holds that grows with a request: its key, headers and payload (in a buffer of its
 * own, not a view pinning a larger one), plus a fixed allowance for the objects around them.
 * A URL longer than REPLAY_URL_MAX is not replayed (Fastify answers it, from the cache):
 * every real question fits well within it, and a long junk spelling would otherwise evict
 * many short useful replays. Entries are never invalidated early (a cache entry never is:
 * see cache/tiered.ts), so a replay answers exactly what the cache would.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import type { Freshness } from '../cache/cached.js';
import type { Clock } from '../cache/types.js';
import type { AccessLog } from '../logger.js';
import { requestIdOf } from '../logger.js';
import type { Budget, Verdict } from '../rate-limit/client-limits.js';
import { rawClientIp, type TrustRule } from './client-address.js';
import { COMPRESSION_THRESHOLD, type ResponseEncoding, responseEncoding } from './compression.js';

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Sends a 200 body that many requests share (every hit on one cache entry gets the
     * same object): it goes through this route's serializer once, not once per request,
     * and what leaves may be replayed to identical requests until `cache.expiresAt`.
     * The body must not be mutated afterwards.
     */
    sendShared(body: object, cache: Freshness): FastifyReply;
  }
  interface FastifyInstance {
    /** The replays held, as their bound counts them (tests, benchmarks). */
    replays: { holdings(): ReplayHoldings };
  }
}

/** Upper bound on the summed size of the replays held: keys, headers, payloads and ENTRY_BYTES each. */
export const REPLAY_BYTES = 16 * 1024 * 1024;

/** The longest request URL (path and query, as sent) that is replayed. */
export const REPLAY_URL_MAX = 2048;

/**
 * What one replay holds besides its key's, headers' and payload's bytes (the replay and
 * slot objects, the header array's slots, the Buffer object, the LRU's bookkeeping):
 * about 700 bytes on V8's heap with 8 000 small replays held, rounded up. With it the
 * count stays above what the heap shows (bench/replay-keys.ts, docs/performance.md).
 */
const ENTRY_BYTES = 1024;

/**
 * Response headers that differ per request: a replay keeps a slot for each, written per
 * request (Content-Length is the payload's and comes last, as Fastify sends it).
 */
const SLOT_OF: Record<string, keyof Replay['slots']> = {
  'x-request-id': 'requestId',
  ratelimit: 'rateLimit',
  'cache-control': 'cacheControl',
};

interface Replay {
  /** Header names and values in the order Fastify sent them; the per-request ones at `slots`. */
  readonly headers: string[];
  readonly slots: { requestId: number; rateLimit: number; cacheControl: number };
  /** Cache-Control up to its max-age value: `public, max-age=` (or `private, …` when gated). */
  readonly cacheControl: string;
  readonly payload: Buffer;
  readonly route: string;
  readonly budget: Budget;
  readonly gated: boolean;
  readonly expiresAt: number;
  readonly size: number;
}

/** What replays need from the app's context, given when the app is built (app.ts). */
export interface ReplayDeps {
  clock: Clock;
  /** Bytes held at most; REPLAY_BYTES unless a test needs a small bound. */
  maxBytes?: number;
  trust: TrustRule | undefined;
  access: AccessLog;
  recordRequest(route: string, method: string, status: number, seconds: number): void;
  onHit(): void;
}

/** The part of the app a replay consults per request; absent until the app is ready. */
interface Checks {
  admit(budget: Budget, ip: string): Verdict | Promise<Verdict>;
  settle(raw: IncomingMessage, verdict: Verdict): void;
  admitsSession(ip: string, cookie: string | undefined): boolean;
  underPressure(): boolean;
  refusedConnection(raw: IncomingMessage): boolean;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What replays are held, as the bound counts them. */
export interface ReplayHoldings {
  entries: number;
  bytes: number;
  maxBytes: number;
}

/** A replay's key: the encoding it is sent in and the raw URL; none for a URL too long to replay. */
function keyOf(encoding: ResponseEncoding, url = ''): string | undefined {
  return url.length > REPLAY_URL_MAX ? undefined : `${encoding} ${url}`;
}

export class CachedAnswers {
  readonly #deps: ReplayDeps;
  readonly #replays: LRUCache<string, Replay>;
  #checks: Checks | undefined;
  #closing = false;

  constructor(deps: ReplayDeps) {
    this.#deps = deps;
    this.#replays = new LRUCache<string, Replay>({
      max: 10_000,
      maxSize: deps.maxBytes ?? REPLAY_BYTES,
      sizeCalculation: (replay) => replay.size,
    });
  }

  /** What is held now (tests, bench/replay-keys.ts). */
  holdings(): ReplayHoldings {
    return {
      entries: this.#replays.size,
      bytes: this.#replays.calculatedSize,
      maxBytes: this.#replays.maxSize,
    };
  }

  /** Armed once the app is ready (its limiter, gate and guards exist); until then nothing is replayed. */
  arm(checks: Checks): void {
    this.#checks = checks;
  }

  /** From Fastify's preClose: a closing server answers 503 (Fastify), so nothing is replayed. */
  close(): void {
    this.#closing = true;
    this.#replays.clear();
  }

  /** The server's request listener: a replay when one applies, Fastify otherwise. */
  listener(fastify: Handler): Handler {
    return (req, res) => {
      if (!this.#serve(req, res, fastify)) fastify(req, res);
    };
  }

  #serve(req: IncomingMessage, res: ServerResponse, fastify: Handler): boolean {
    const checks = this.#checks;
    if (req.method !== 'GET' || checks === undefined || this.#closing) return false;
    const key = keyOf(responseEncoding(req.headers), req.url);
    if (key === undefined) return false;
    const replay = this.#replays.get(key);
    if (replay === undefined) return false;
    const started = performance.now();
    if (this.#deps.clock() >= replay.expiresAt) {
      this.#replays.delete(key);
      return false;
    }
    const { headers } = req;
    if (
      headers['content-length'] !== undefined ||
      headers['transfer-encoding'] !== undefined ||
      (headers.host === undefined && req.httpVersion === '1.1') ||
      checks.refusedConnection(req) ||
      checks.underPressure()
    ) {
      return false;
    }
    const ip = rawClientIp(req, this.#deps.trust);
    if (replay.gated && !checks.admitsSession(ip, headers.cookie)) return false;
    const verdict = checks.admit(replay.budget, ip);
    if (!(verdict instanceof Promise)) {
      if (verdict.refused !== undefined) {
        checks.settle(req, verdict);
        return false;
      }
      this.#send(req, res, replay, verdict.items, ip, started);
      return true;
    }
    verdict.then(
      (v) => {
        if (v.refused === undefined) return this.#send(req, res, replay, v.items, ip, started);
        checks.settle(req, v);
        fastify(req, res);
      },
      // The limiter itself failed (its insurance too): Fastify's hook meets the same failure and answers it.
      () => fastify(req, res),
    );
    return true;
  }

  #send(
    req: IncomingMessage,
    res: ServerResponse,
    replay: Replay,
    rateLimit: string,
    ip: string,
    started: number,
  ): void {
    const id = requestIdOf(req);
    const headers = replay.headers.slice();
    headers[replay.slots.requestId] = id;
    headers[replay.slots.rateLimit] = rateLimit;
    const maxAge = Math.max(0, Math.floor((replay.expiresAt - this.#deps.clock()) / 1000));
    headers[replay.slots.cacheControl] = replay.cacheControl + maxAge;
    res.writeHead(200, headers);
    res.end(replay.payload);
    const elapsed = performance.now() - started;
    this.#deps.access(id, 'GET', req.url ?? '', 200, elapsed, ip);
    this.#deps.recordRequest(replay.route, 'GET', 200, elapsed / 1000);
    this.#deps.onHit();
  }

  /**
   * Keeps what Fastify is sending for a shared answer, as a replay (the last onSend hook:
   * every header is set, the payload is final). Only a complete 200 to a GET whose headers
   * carry nothing per-caller beyond what `#send` rewrites, sent in the encoding its key names.
   */
  keep(
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    replay: Pick<Replay, 'route' | 'budget' | 'gated' | 'expiresAt'>,
  ): void {
    if (request.method !== 'GET' || reply.statusCode !== 200) return;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return;
    const encoding = responseEncoding(request.raw.headers);
    const key = keyOf(encoding, request.raw.url);
    if (key === undefined) return;
    const sent = reply.getHeaders();
    // The encoding the key names must be the one that left, or the replay would serve
    // another: it is, unless the body was too small to compress (then it is for every
    // request, whatever it accepts) or @fastify/compress decided otherwise than
    // `responseEncoding` foresaw (then nothing is kept).
    const left = sent['content-encoding'] ?? 'identity';
    const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    if (left !== encoding && !(left === 'identity' && size < COMPRESSION_THRESHOLD)) return;
    if (sent['set-cookie'] !== undefined) return;
    const cacheControl = sent['cache-control'];
    if (typeof cacheControl !== 'string') return;
    const prefix = /^(.*max-age=)\d+$/.exec(cacheControl)?.[1];
    if (prefix === undefined) return;
    // A copy of its own: a small string becomes a view on a shared 8 KiB pool slab, and
    // zlib's one-shot output a view on its 16 KiB chunk, each kept whole by the view.
    const body = Buffer.allocUnsafeSlow(size);
    if (typeof payload === 'string') body.write(payload);
    else payload.copy(body);
    const headers: string[] = [];
    const slots = { requestId: -1, rateLimit: -1, cacheControl: -1 };
    for (const [name, value] of Object.entries(sent)) {
      if (value === undefined || name === 'content-length') continue;
      const slot = SLOT_OF[name];
      if (slot !== undefined) {
        headers.push(name, '');
        slots[slot] = headers.length - 1;
        continue;
      }
      for (const one of Array.isArray(value) ? value : [value]) headers.push(name, String(one));
    }
    if (slots.requestId < 0 || slots.cacheControl < 0 || slots.rateLimit < 0) return;
    headers.push('content-length', String(body.length));
    this.#replays.set(key, {
      ...replay,
      headers,
      slots,
      cacheControl: prefix,
      payload: body,
      size: ENTRY_BYTES + key.length + body.length + headers.reduce((sum, h) => sum + h.length, 0),
    });
  }
}

/**
 * A lookup's body, with the reply marked cacheable as the lookup says: the one-line
 * handler `async (request, reply) => answer(reply, await lookupX(deps, request.query.x))`.
 * A hit is sent shared (above); a fresh answer is returned for Fastify to serialize. Either
 * way the route's response schema types the body.
 */
export function answer<B extends object>(
  reply: FastifyReply,
  lookup: { body: B; cache: Freshness },
): B | FastifyReply {
  if (lookup.cache.hit) return reply.sendShared(lookup.body, lookup.cache);
  reply.cacheable(lookup.cache);
  return lookup.body;
}

async function cachedAnswersPlugin(app: FastifyInstance, opts: { answers: CachedAnswers }): Promise<void> {
  const { answers } = opts;
  // Per body object, with the route whose serializer produced it: a body is only reused as
  // that route's JSON. Entries go when their cache entry (the body's only holder) goes.
  const serialized = new WeakMap<object, { route: string | undefined; json: string }>();
  // Replies sending a hit, with their entry's expiry: what onSend keeps as a replay.
  const hits = new WeakMap<FastifyReply, number>();
  app.decorate('replays', { holdings: () => answers.holdings() });

  app.decorateReply('sendShared', function (this: FastifyReply, body: object, cache: Freshness) {
    this.cacheable(cache);
    const route = this.request.routeOptions.url;
    let memo = serialized.get(body);
    if (memo === undefined || memo.route !== route) {
      // A route's JSON serializer yields a string; String() only pins the type.
      memo = { route, json: String(this.serialize(body)) };
      serialized.set(body, memo);
    }
    if (cache.hit) hits.set(this, cache.expiresAt);
    return this.type('application/json; charset=utf-8').send(memo.json);
  });

  // What leaves, kept as a replay. A route's own onSend hooks run after the instance's, and
  // @fastify/compress compresses in one added to every route (onRoute), so this is added the
  // same way, after it (this plugin is registered after compression: app.ts): the last to run.
  const keep: onSendHookHandler = (request, reply, payload, done) => {
    const expiresAt = hits.get(reply);
    const budget = expiresAt === undefined ? undefined : app.rateLimits.budgetOf(request);
    if (expiresAt !== undefined && budget !== undefined) {
      answers.keep(request, reply, payload, {
        route: request.routeOptions.url ?? request.url,
        budget,
        gated: app.challengeGate.gated(request),
        expiresAt,
      });
    }
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    route.onSend = [...[route.onSend ?? []].flat(), keep];
  });

  app.addHook('onReady', (done) => {
    const underPressure = app.hasDecorator('isUnderPressure') ? () => app.isUnderPressure() : () => false;
    answers.arm({
      admit: app.rateLimits.admit,
      settle: app.rateLimits.settle,
      admitsSession: app.challengeGate.admits,
      underPressure,
      refusedConnection: app.connectionRefused,
    });
    done();
  });
  app.addHook('preClose', (done) => {
    answers.close();
    done();
  });
}

export default fp(cachedAnswersPlugin, {
  name: 'cached-answers',
  dependencies: ['http-headers', 'rate-limit', 'challenge-gate', 'connection-guard'],
});
