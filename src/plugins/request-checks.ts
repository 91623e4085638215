/**
 * The checks every request passes before anything answers it, in their order
 * (docs/architecture.md §1). This list is the one place they are declared: Fastify
 * runs it in one onRequest hook (the plugin below), and the replay of a cached
 * answer runs the same list before it answers (plugins/response-cache.ts). A check
 * added here is run by both; there is no other list to keep in step.
 *
 * Each check is a plain function from what the request is (its raw message, the
 * canonical client address, the route it reached) to an outcome: nothing, headers
 * the response carries (the rate limit's), or a refusal (an AppError the error
 * handler renders). The first refusal ends the list. A request is checked once:
 * the pipeline keeps each request's verdict, so a replay that is refused hands the
 * request to Fastify, whose hook finds the verdict already reached (a budget is
 * never counted twice).
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.js';
import type { ClientLimits, LimitGroup } from '../rate-limit/client-limits.js';
import type { ChallengeGate } from './challenge-gate.js';
import { clientIp } from './client-address.js';
import type { ConnectionGuard } from './connection-guard.js';
import { ALWAYS_SERVED, type LoadMonitor, overloaded } from './load-shedding.js';
import { rateLimitOutcome } from './rate-limit.js';

/** What the checks need of the route a request reached. */
export interface RouteFacts {
  /** The route's template (`/api/dns`), or the request's path when no route matched. */
  readonly path: string;
  readonly matched: boolean;
  /** `config: { expensive: true }`: a measurement it makes counts against the expensive budget too. */
  readonly expensive: boolean;
  /** `config: { passive: true }`: needs no lookup session when the challenge is on. */
  readonly passive: boolean;
}

export interface CheckedRequest {
  readonly raw: IncomingMessage;
  /** The client address, canonical (plugins/client-address.ts). */
  readonly ip: string;
  readonly route: RouteFacts;
}

export interface CheckOutcome {
  /** Response headers this check writes (they differ per request: a replay writes them afresh). */
  headers?: Readonly<Record<string, string>>;
  refusal?: AppError;
}

export interface RequestCheck {
  readonly name: string;
  run(request: CheckedRequest): CheckOutcome | undefined | Promise<CheckOutcome | undefined>;
}

/** The outcome of the whole list for one request. */
export interface Verdict {
  readonly headers: Readonly<Record<string, string>>;
  readonly refusal?: AppError;
}

export interface CheckDeps {
  connections: ConnectionGuard;
  load: LoadMonitor;
  limits: ClientLimits;
  gate: ChallengeGate;
  onShed?: () => void;
  onRateLimited?: (group: LimitGroup) => void;
}

/** The checks, in the order they run. */
export function requestChecks(deps: CheckDeps): readonly RequestCheck[] {
  return [
    {
      // First: a connection over the cap gets nothing else, not even a count against a budget.
      name: 'connection cap',
      run: ({ raw }) =>
        deps.connections.refused(raw.socket)
          ? {
              refusal: new AppError(
                429,
                'too_many_connections',
                `too many concurrent connections from this address (at most ${deps.connections.maxPerAddress})`,
                { headers: { 'retry-after': '1', connection: 'close' } },
              ),
            }
          : undefined,
    },
    {
      // RFC 9112 §3.2; Node's own answer to it (requireHostHeader, off in app.ts) is an empty 400.
      name: 'host header',
      run: ({ raw }) =>
        raw.headers.host === undefined && raw.httpVersion === '1.1'
          ? {
              refusal: new AppError(400, 'bad_request', 'the Host header is required', {
                headers: { connection: 'close' },
              }),
            }
          : undefined,
    },
    {
      name: 'load shedding',
      run: ({ route }) => {
        if (ALWAYS_SERVED.has(route.path) || !deps.load.overloaded()) return undefined;
        deps.onShed?.();
        return { refusal: overloaded() };
      },
    },
    {
      name: 'rate limit',
      run: ({ route, ip }) => {
        // Every /api request counts against the general budget; one that measures live is charged
        // the expensive budget too, when it does (plugins/rate-limit.ts), never for a cached answer.
        if (!route.path.startsWith('/api/')) return undefined;
        const budget = route.expensive ? deps.limits.expensiveRoute : deps.limits.cheap;
        const admission = deps.limits.admit(budget, ip);
        return admission instanceof Promise
          ? admission.then((a) => rateLimitOutcome(budget, a, deps.onRateLimited))
          : rateLimitOutcome(budget, admission, deps.onRateLimited);
      },
    },
    {
      // After the limiter: a 429 wins over the 403, and an unverified flood is counted first.
      name: 'challenge gate',
      run: ({ route, ip, raw }) =>
        deps.gate.gated(route) && !deps.gate.admits(ip, raw.headers.cookie)
          ? { refusal: deps.gate.refusal() }
          : undefined,
    },
  ];
}

/** Where a request's verdict is kept: a property of the request message, of this module's own. */
const VERDICT = Symbol('netdiag.verdict');
type Checked = IncomingMessage & { [VERDICT]?: Verdict | Promise<Verdict> };

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
/** The verdict of a request no check wrote a header for (most that are not /api). */
const NO_VERDICT_HEADERS: Verdict = Object.freeze({ headers: NO_HEADERS });

/** The headers so far and an outcome's: its own object when it is the first to write any. */
function withHeaders(
  headers: Readonly<Record<string, string>>,
  outcome: CheckOutcome | undefined,
): Readonly<Record<string, string>> {
  if (outcome?.headers === undefined) return headers;
  return headers === NO_HEADERS ? outcome.headers : { ...headers, ...outcome.headers };
}

/**
 * Runs the checks for a request, once: the verdict is kept on the request message (and goes
 * with it), so the replay path and Fastify's hook, which may both meet one request, share
 * one run.
 */
export class RequestPipeline {
  readonly checks: readonly RequestCheck[];

  constructor(checks: readonly RequestCheck[]) {
    this.checks = checks;
  }

  /** Synchronous when every check is (in process); a promise once one is not (Redis). */
  run(request: CheckedRequest): Verdict | Promise<Verdict> {
    const raw = request.raw as Checked;
    const known = raw[VERDICT];
    if (known !== undefined) return known;
    const verdict = this.#from(0, request, NO_HEADERS);
    raw[VERDICT] = verdict;
    if (verdict instanceof Promise)
      verdict.then(
        (v) => {
          raw[VERDICT] = v;
        },
        () => undefined,
      );
    return verdict;
  }

  /** The verdict this request got, once reached (what a response's per-request headers came from). */
  verdictOf(raw: IncomingMessage): Verdict | undefined {
    const verdict = (raw as Checked)[VERDICT];
    return verdict instanceof Promise ? undefined : verdict;
  }

  #from(
    index: number,
    request: CheckedRequest,
    headers: Readonly<Record<string, string>>,
  ): Verdict | Promise<Verdict> {
    for (let i = index; i < this.checks.length; i++) {
      const outcome = this.checks[i]!.run(request);
      if (outcome instanceof Promise) {
        return outcome.then((o) => {
          const merged = withHeaders(headers, o);
          return o?.refusal ? { headers: merged, refusal: o.refusal } : this.#from(i + 1, request, merged);
        });
      }
      if (outcome === undefined) continue;
      headers = withHeaders(headers, outcome);
      if (outcome.refusal) return { headers, refusal: outcome.refusal };
    }
    return headers === NO_HEADERS ? NO_VERDICT_HEADERS : { headers };
  }
}

/** The route facts of a request Fastify has routed. */
export function routeFactsOf(request: FastifyRequest): RouteFacts {
  const options = request.routeOptions;
  const matched = options.url !== undefined;
  return {
    // The matched route's template, not the raw URL: the router decodes the path, so
    // /%61pi/dns reaches /api/dns while its raw URL does not start with /api/.
    path: options.url ?? request.url.split('?')[0]!,
    matched,
    expensive: options.config?.expensive === true,
    passive: options.config?.passive === true,
  };
}

/** Fastify's side: one onRequest hook that runs the list. */
async function requestChecksPlugin(app: FastifyInstance, opts: { pipeline: RequestPipeline }): Promise<void> {
  // Callback style: in process the request goes on in the same tick.
  app.addHook('onRequest', (request, reply, done) => {
    const apply = (verdict: Verdict) => {
      reply.headers(verdict.headers);
      done(verdict.refusal);
    };
    const verdict = opts.pipeline.run({
      raw: request.raw,
      ip: clientIp(request),
      route: routeFactsOf(request),
    });
    if (verdict instanceof Promise) verdict.then(apply, done);
    else apply(verdict);
  });
}

export default fp(requestChecksPlugin, { name: 'request-checks', dependencies: ['errors'] });
