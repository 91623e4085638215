/**
 * Cached answers sent again (docs/architecture.md §1, §7). What Fastify sends for a
 * cache hit (status 200, every header, the payload as it left, compressed or not) is
 * kept as a *replay* until its cache entry expires; the next identical GET is answered
 * from it by the server's request listener (wired in app.ts), before Fastify routes it.
 *
 * A replay follows HTTP's rules for a stored response:
 *  - Its key is the request URL and the values of the request headers a stored answer may
 *    vary on (VARY_KEYS), each reduced to what decides the answer: Accept-Encoding to the
 *    encoding @fastify/compress chooses. An answer whose own `Vary` names any other header
 *    is not kept.
 *  - The headers that differ per request are declared by the code that writes them and
 *    written afresh: the request checks' (plugins/request-checks.ts: RateLimit), and
 *    http-headers.ts's PER_REQUEST_HEADERS (the request id, max-age counted down).
 *  - The checks themselves are the same list Fastify's hook runs (RequestPipeline), so
 *    every check a request meets there it meets here; one that refuses sends the request
 *    to Fastify, whose hook finds the verdict already reached.
 *
 * A replay lives no longer than its cache entry (its exact expiry, on ctx.clock); at most
 * REPLAY_BYTES are held (keys, headers, payloads), least recently used out first; a URL
 * longer than REPLAY_URL_MAX is never kept; and one answer (the same bytes, from the same
 * cache entry) is kept under at most SPELLINGS_PER_ANSWER spellings of its URL
 * (`?target=EXAMPLE.com` and `?target=example.com` are one entry of the cache), all sharing
 * one copy of its payload. Entries are never invalidated early (cache/tiered.ts), so
 * a replay answers exactly what the cache would. Requests through app.inject never come
 * here (the MCP route's tool calls, the in-process CLI): inject calls Fastify's handler.
 */

import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import type { Freshness } from '../cache/cached.js';
import type { Clock } from '../cache/types.js';
import type { AccessLog } from '../logger.js';
import { requestIdOf } from '../logger.js';
import { rawClientIp, type TrustRule } from './client-address.js';
import { COMPRESSION_THRESHOLD, responseEncoding } from './compression.js';
import { PER_REQUEST_HEADERS } from './http-headers.js';
import { type RequestPipeline, type RouteFacts, routeFactsOf, type Verdict } from './request-checks.js';

declare module 'fastify' {
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
 * The request headers a stored answer may vary on, each reduced to what decides the answer
 * (RFC 9111 §4.1): Accept-Encoding to the encoding sent; Cookie to nothing, since a gated
 * answer (`Vary: Cookie`, challenge-gate.ts) is the same for every session holder and the
 * gate check decides per request who holds one.
 */
const VARY_KEYS: ReadonlyMap<string, (headers: IncomingHttpHeaders) => string> = new Map<
  string,
  (headers: IncomingHttpHeaders) => string
>([
  ['accept-encoding', responseEncoding],
  ['cookie', () => ''],
]);

/** Spellings of one answer's URL kept at once; more are answered by Fastify from the cache. */
const SPELLINGS_PER_ANSWER = 4;

/** Replays holding one answer: the same payload from the same cache entry. */
interface Answer {
  readonly payload: Buffer;
  readonly keys: Set<string>;
}

/** A stored header whose value is written per request, and who writes it. */
interface Slot {
  readonly index: number;
  readonly name: string;
  /** `check`: a request check's header (the verdict's); `response`: http-headers.ts's. */
  readonly from: 'check' | 'response';
  readonly stored: string;
}

interface Replay {
  /** Header names and values in the order Fastify sent them; the per-request ones at `slots`. */
  readonly headers: string[];
  readonly slots: readonly Slot[];
  readonly payload: Buffer;
  readonly route: RouteFacts;
  readonly expiresAt: number;
  /** Which answer it holds (answerId): its spellings are counted together. */
  readonly answer: string;
  readonly size: number;
}

/** What replays need, given when the app is built (app.ts). */
export interface ReplayDeps {
  clock: Clock;
  /** Bytes held at most; REPLAY_BYTES unless a test needs a small bound. */
  maxBytes?: number;
  trust: TrustRule | undefined;
  pipeline: RequestPipeline;
  access: AccessLog;
  recordRequest(route: string, method: string, status: number, seconds: number): void;
  onHit(): void;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What replays are held, as the bound counts them. */
export interface ReplayHoldings {
  entries: number;
  bytes: number;
  maxBytes: number;
}

/** A replay's key: the reduced values of VARY_KEYS and the raw URL; none for a URL too long to replay. */
function keyOf(headers: IncomingHttpHeaders, url = ''): string | undefined {
  if (url.length > REPLAY_URL_MAX) return undefined;
  let key = '';
  for (const reduce of VARY_KEYS.values()) key += `${reduce(headers)} `;
  return key + url;
}

/** Whether every header a response says it varies on is one VARY_KEYS reduces. */
function variesOnKnown(vary: unknown): boolean {
  if (vary === undefined) return true;
  if (typeof vary !== 'string') return false;
  return vary.split(',').every((name) => VARY_KEYS.has(name.trim().toLowerCase()));
}

export class ResponseCache {
  readonly #deps: ReplayDeps;
  readonly #replays: LRUCache<string, Replay>;
  /** The answers held, by answerId (SPELLINGS_PER_ANSWER). */
  readonly #answers = new Map<string, Answer>();
  #closing = false;

  constructor(deps: ReplayDeps) {
    this.#deps = deps;
    this.#replays = new LRUCache<string, Replay>({
      max: 10_000,
      maxSize: deps.maxBytes ?? REPLAY_BYTES,
      sizeCalculation: (replay) => replay.size,
      dispose: (replay, key) => {
        const answer = this.#answers.get(replay.answer);
        answer?.keys.delete(key);
        if (answer?.keys.size === 0) this.#answers.delete(replay.answer);
      },
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
    if (req.method !== 'GET' || this.#closing) return false;
    const key = keyOf(req.headers, req.url);
    if (key === undefined) return false;
    const replay = this.#replays.get(key);
    if (replay === undefined) return false;
    const started = performance.now();
    if (this.#deps.clock() >= replay.expiresAt) {
      this.#replays.delete(key);
      return false;
    }
    // A replay cannot read a body: a GET that sends one is Fastify's to answer.
    if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined)
      return false;
    const ip = rawClientIp(req, this.#deps.trust);
    const verdict = this.#deps.pipeline.run({ raw: req, ip, route: replay.route });
    if (!(verdict instanceof Promise)) {
      if (verdict.refusal !== undefined) return false;
      return this.#send(req, res, replay, verdict, ip, started);
    }
    verdict.then(
      (v) => {
        if (v.refusal !== undefined || !this.#send(req, res, replay, v, ip, started)) fastify(req, res);
      },
      // A check itself failed (the limiter and its insurance): Fastify's hook meets the same failure.
      () => fastify(req, res),
    );
    return true;
  }

  /** Sends the replay with this request's own headers; false when the verdict lacks one it needs. */
  #send(
    req: IncomingMessage,
    res: ServerResponse,
    replay: Replay,
    verdict: Verdict,
    ip: string,
    started: number,
  ): boolean {
    const id = requestIdOf(req);
    const maxAge = Math.max(0, Math.floor((replay.expiresAt - this.#deps.clock()) / 1000));
    const headers = replay.headers.slice();
    for (const slot of replay.slots) {
      const value =
        slot.from === 'check'
          ? verdict.headers[slot.name]
          : PER_REQUEST_HEADERS[slot.name]?.(slot.stored, { id, maxAge });
      if (value === undefined) return false;
      headers[slot.index] = value;
    }
    res.writeHead(200, headers);
    res.end(replay.payload);
    const elapsed = performance.now() - started;
    this.#deps.access(id, 'GET', req.url ?? '', 200, elapsed, ip);
    this.#deps.recordRequest(replay.route.path, 'GET', 200, elapsed / 1000);
    this.#deps.onHit();
    return true;
  }

  /**
   * Keeps what Fastify is sending for a cache hit, as a replay (the last onSend hook: every
   * header is set, the payload is final). Only a complete 200 to a GET whose headers carry
   * nothing per caller beyond the per-request ones, sent in the encoding its key names.
   */
  keep(request: FastifyRequest, reply: FastifyReply, payload: unknown, expiresAt: number): void {
    if (request.method !== 'GET' || reply.statusCode !== 200 || this.#closing) return;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return;
    const verdict = this.#deps.pipeline.verdictOf(request.raw);
    if (verdict === undefined || verdict.refusal !== undefined) return;
    const key = keyOf(request.raw.headers, request.raw.url);
    if (key === undefined) return;
    const sent = reply.getHeaders();
    if (!variesOnKnown(sent.vary) || sent['set-cookie'] !== undefined) return;
    // The encoding the key names must be the one that left, or the replay would serve
    // another: it is, unless the body was too small to compress (then it is for every
    // request, whatever it accepts) or @fastify/compress decided otherwise than
    // `responseEncoding` foresaw (then nothing is kept).
    const encoding = responseEncoding(request.raw.headers);
    const left = sent['content-encoding'] ?? 'identity';
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const size = bytes.length;
    if (left !== encoding && !(left === 'identity' && size < COMPRESSION_THRESHOLD)) return;
    const id = answerId(request, bytes, expiresAt);
    const answer = this.#answers.get(id);
    if (answer !== undefined && !answer.keys.has(key) && answer.keys.size >= SPELLINGS_PER_ANSWER) return;
    // A copy of its own, shared by the answer's spellings: a small string becomes a view on a
    // shared 8 KiB pool slab, and zlib's one-shot output a view on its 16 KiB chunk, each kept
    // whole by the view.
    let body = answer?.payload;
    if (body === undefined) {
      body = Buffer.allocUnsafeSlow(size);
      bytes.copy(body);
    }
    const headers: string[] = [];
    const slots: Slot[] = [];
    for (const [name, value] of Object.entries(sent)) {
      if (value === undefined || name === 'content-length') continue;
      const from = name in verdict.headers ? 'check' : name in PER_REQUEST_HEADERS ? 'response' : undefined;
      for (const one of Array.isArray(value) ? value : [value]) {
        headers.push(name, String(one));
        if (from !== undefined) slots.push({ index: headers.length - 1, name, from, stored: String(one) });
      }
    }
    headers.push('content-length', String(body.length));
    this.#replays.set(key, {
      headers,
      slots,
      payload: body,
      route: routeFactsOf(request),
      expiresAt,
      answer: id,
      size: ENTRY_BYTES + key.length + body.length + headers.reduce((sum, h) => sum + h.length, 0),
    });
    if (!this.#replays.has(key)) return;
    // Looked up again: replacing this key's earlier replay may have emptied and dropped its group.
    const group = this.#answers.get(id);
    if (group === undefined) this.#answers.set(id, { payload: body, keys: new Set([key]) });
    else group.keys.add(key);
  }
}

/**
 * Which answer a replay holds: its route, its entry's expiry and a digest of its bytes. Two
 * spellings of one question hitting one cache entry give the same id; two entries give two.
 */
function answerId(request: FastifyRequest, payload: Buffer, expiresAt: number): string {
  const digest = createHash('sha256').update(payload).digest('base64url');
  return `${request.routeOptions.url ?? ''} ${expiresAt} ${digest}`;
}

/** Replies sending a cache hit, with their entry's expiry: what onSend keeps as a replay. */
const hits = new WeakMap<FastifyReply, number>();

/**
 * A lookup's body, with the reply marked cacheable as the lookup says: the one-line
 * handler `async (request, reply) => answer(reply, await lookupX(deps, request.query.x))`.
 * A hit is marked for keeping as a replay. Either way Fastify serializes the body with the
 * route's response schema, which types it.
 */
export function answer<B extends object>(reply: FastifyReply, lookup: { body: B; cache: Freshness }): B {
  reply.cacheable(lookup.cache);
  if (lookup.cache.hit) hits.set(reply, lookup.cache.expiresAt);
  return lookup.body;
}

async function responseCachePlugin(app: FastifyInstance, opts: { cache: ResponseCache }): Promise<void> {
  const { cache } = opts;
  app.decorate('replays', { holdings: () => cache.holdings() });
  // What leaves, kept as a replay. A route's own onSend hooks run after the instance's, and
  // @fastify/compress compresses in one added to every route (onRoute), so this is added the
  // same way, after it (this plugin is registered after compression: app.ts): the last to run.
  const keep: onSendHookHandler = (request, reply, payload, done) => {
    const expiresAt = hits.get(reply);
    if (expiresAt !== undefined) cache.keep(request, reply, payload, expiresAt);
    done(null, payload);
  };
  app.addHook('onRoute', (route) => {
    route.onSend = [...[route.onSend ?? []].flat(), keep];
  });
  app.addHook('preClose', (done) => {
    cache.close();
    done();
  });
}

export default fp(responseCachePlugin, { name: 'response-cache', dependencies: ['http-headers'] });
