/**
 * A fake Globalping API (https://globalping.io/docs/api.globalping.io) on loopback: the
 * HTTPS upstream fake with the two calls the adapter makes. POST /v1/measurements answers
 * `createReply`; each GET /v1/measurements/<id> answers the next of `pollReplies`, counted
 * per measurement, the last one repeating (a finished measurement stays finished).
 *
 *   const gp = await startGlobalping({ pollReplies: [IN_PROGRESS, FINISHED] });
 *   gp.createReply = { status: 422, json: fixture('globalping/scenarios/error-422-no-probes-found.json') };
 *   gp.creations(); gp.polls();   // the requests received, by kind
 *   gp.reset();                   // requests, fault, poll counts and both replies back to the start
 */
import {
  type FakeReply,
  type FakeRequest,
  type FakeUpstream,
  fixture,
  startFakeUpstream,
} from './https-upstream.js';

/** The documented 202 to a measurement request (the fixture's id, ten probes). */
export const GLOBALPING_CREATED: FakeReply = {
  status: 202,
  json: fixture('globalping/post-measurement-response.json'),
};

/** A finished measurement: ten countries, one consistent answer. */
export const GLOBALPING_FINISHED: FakeReply = {
  json: fixture('globalping/scenarios/ten-finished-consistent.json'),
};

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
  /** The measurement requests received (POST /v1/measurements). */
  creations(): FakeRequest[];
  /** The polls received (GET /v1/measurements/<id>). */
  polls(): FakeRequest[];
}

export async function startGlobalping(opts: GlobalpingOptions = {}): Promise<FakeGlobalping> {
  const initialCreate = opts.createReply ?? GLOBALPING_CREATED;
  const initialPolls = opts.pollReplies ?? [GLOBALPING_FINISHED];
  /** Polls answered so far, per measurement path. */
  const polled = new Map<string, number>();
  const upstream = await startFakeUpstream({
    ...(opts.prefix ? { prefix: opts.prefix } : {}),
    routes: { 'POST /v1/measurements': () => gp.createReply },
    handler: (req) => {
      if (req.method !== 'GET' || !req.path.startsWith('/v1/measurements/')) return { status: 404, json: {} };
      const n = polled.get(req.path) ?? 0;
      polled.set(req.path, n + 1);
      const replies = gp.pollReplies;
      return replies[Math.min(n, replies.length - 1)] ?? { status: 500, json: {} };
    },
  });
  const resetUpstream = upstream.reset.bind(upstream);
  const gp: FakeGlobalping = Object.assign(upstream, {
    createReply: initialCreate,
    pollReplies: initialPolls,
    creations: () => upstream.requests.filter((r) => r.method === 'POST'),
    polls: () => upstream.requests.filter((r) => r.method === 'GET'),
    reset(): void {
      resetUpstream();
      polled.clear();
      gp.createReply = initialCreate;
      gp.pollReplies = initialPolls;
    },
  });
  return gp;
}
