import { describe, expect, it } from 'vitest';
import { type Call, get, type Outcome, type Sender } from '../../../src/web/api/client';
import type { ChallengeStatus } from '../../../src/web/api/types';
import {
  Challenge,
  ChallengeFailed,
  type ChallengeView,
  type LookupSession,
  sendWithSession,
  type TokenWidget,
} from '../../../src/web/challenge';
import { failed, ok } from './outcomes';

const LOOKUP = get('/api/dns', { target: 'example.test', type: 'A' });
const REQUIRED = failed(403, 'a lookup session is required', 'challenge_required');
const NOW = Date.parse('2030-01-01T00:00:00Z');
const IN_15_MIN = new Date(NOW + 15 * 60_000).toISOString();

/** A sender answering each call from `route`; every call it was given is in `calls`. */
function fakeSend(route: (call: Call) => Outcome<unknown>): { send: Sender; calls: Call[] } {
  const calls: Call[] = [];
  // Trusted cast, as in the real sender: the fake answers each path with what the contract says.
  const send = (async (call: Call) => {
    calls.push(call);
    return route(call);
  }) as Sender;
  return { send, calls };
}

/** Answers the lookup with `answers` in turn (the last one again when they run out). */
function lookupAnswers(...answers: Outcome<unknown>[]): (call: Call) => Outcome<unknown> {
  let i = 0;
  return () => answers[Math.min(i++, answers.length - 1)] ?? REQUIRED;
}

function countingSession(fail?: {
  ensure?: Error;
  renew?: Error;
}): LookupSession & { ensured: number; renewed: number } {
  return {
    ensured: 0,
    renewed: 0,
    async ensure() {
      this.ensured++;
      if (fail?.ensure) throw fail.ensure;
    },
    async renew() {
      this.renewed++;
      if (fail?.renew) throw fail.renew;
    },
  };
}

describe('sendWithSession', () => {
  it('sends once when the session holds', async () => {
    const session = countingSession();
    const api = fakeSend(() => ok('records'));
    expect(await sendWithSession(LOOKUP, new AbortController().signal, session, api.send)).toEqual(
      ok('records'),
    );
    expect(api.calls).toEqual([LOOKUP]);
    expect(session).toMatchObject({ ensured: 1, renewed: 0 });
  });

  it('a 403 challenge_required verifies afresh once and sends once more', async () => {
    const session = countingSession();
    const api = fakeSend(lookupAnswers(REQUIRED, ok('records')));
    expect(await sendWithSession(LOOKUP, new AbortController().signal, session, api.send)).toEqual(
      ok('records'),
    );
    expect(api.calls).toHaveLength(2);
    expect(session.renewed).toBe(1);
  });

  it('a second 403 is the answer, shown as an error: no second verification, no third send', async () => {
    const session = countingSession();
    const api = fakeSend(lookupAnswers(REQUIRED, REQUIRED, ok('never sent')));
    expect(await sendWithSession(LOOKUP, new AbortController().signal, session, api.send)).toEqual(REQUIRED);
    expect(api.calls).toHaveLength(2);
    expect(session.renewed).toBe(1);
  });

  it('any other 403 is the answer as it is', async () => {
    const session = countingSession();
    const forbidden = failed(403, 'forbidden');
    const api = fakeSend(() => forbidden);
    expect(await sendWithSession(LOOKUP, new AbortController().signal, session, api.send)).toEqual(forbidden);
    expect(api.calls).toHaveLength(1);
    expect(session.renewed).toBe(0);
  });

  it('a verification that fails before the lookup is the lookup’s answer, and nothing is sent', async () => {
    const rejected = failed(400, 'the token was rejected', 'challenge_failed');
    const session = countingSession({ ensure: new ChallengeFailed('the token was rejected', rejected) });
    const api = fakeSend(() => ok('never sent'));
    expect(await sendWithSession(LOOKUP, new AbortController().signal, session, api.send)).toEqual(rejected);
    expect(api.calls).toHaveLength(0);
  });

  it('a renewal that fails without an answer becomes a 403 challenge_failed saying why', async () => {
    const session = countingSession({ renew: new Error('the widget failed') });
    const api = fakeSend(() => REQUIRED);
    const res = await sendWithSession(LOOKUP, new AbortController().signal, session, api.send);
    expect(res).toMatchObject({
      ok: false,
      status: 403,
      error: { code: 'challenge_failed', error: 'verification did not complete: the widget failed' },
    });
    expect(api.calls).toHaveLength(1);
  });

  it('passes the lookup’s signal to both sends', async () => {
    const signals: (AbortSignal | undefined)[] = [];
    const send = (async (_call: Call, signal?: AbortSignal) => {
      signals.push(signal);
      return REQUIRED;
    }) as Sender;
    const { signal } = new AbortController();
    await sendWithSession(LOOKUP, signal, countingSession(), send);
    expect(signals).toEqual([signal, signal]);
  });
});

function status(active: boolean, session?: { expires_at: string }): ChallengeStatus {
  const budget = { limit: 30, remaining: 30, reset_seconds: 60 };
  return {
    protection: active
      ? {
          active,
          provider: 'turnstile',
          site_key: 'site-key',
          script_url: 'https://challenges.example.net/api.js',
        }
      : { active, provider: 'turnstile' },
    session: { required: active, valid: session !== undefined, ...session },
    rate_limit: { general: budget, expensive: budget },
    tiers: [],
  };
}

/** A widget that is solved at once, counting how often it was shown and cleared. */
function fakeWidget(): TokenWidget & { shown: number; cleared: number } {
  return {
    shown: 0,
    cleared: 0,
    async token(settings, onShown) {
      expect(settings).toEqual({ siteKey: 'site-key', scriptUrl: 'https://challenges.example.net/api.js' });
      this.shown++;
      onShown();
      return `token-${this.shown}`;
    },
    clear() {
      this.cleared++;
    },
  };
}

/**
 * The API as the session sees it: /api/challenge/status answers `statuses` in turn,
 * /api/challenge/verify accepts every token, and the lookup answers `lookups` in turn.
 */
function fakeApi(opts: { statuses: ChallengeStatus[]; lookups: Outcome<unknown>[] }) {
  let statusIndex = 0;
  const lookup = lookupAnswers(...opts.lookups);
  return fakeSend((call) => {
    if (call.path === '/api/challenge/status') {
      const answer = opts.statuses[Math.min(statusIndex++, opts.statuses.length - 1)];
      return answer ? ok(answer) : failed(500, 'no status');
    }
    if (call.path === '/api/challenge/verify')
      return ok({ verified: true, protection_active: true, expires_at: IN_15_MIN });
    return lookup(call);
  });
}

const byPath = (calls: Call[], path: string) => calls.filter((c) => c.path === path);

describe('Challenge', () => {
  it('protection off: lookups go ahead with no widget and no verification', async () => {
    const widget = fakeWidget();
    const api = fakeApi({ statuses: [status(false)], lookups: [ok('records')] });
    const challenge = new Challenge({ widget, send: api.send, now: () => NOW });
    expect(await sendWithSession(LOOKUP, new AbortController().signal, challenge, api.send)).toEqual(
      ok('records'),
    );
    expect(widget.shown).toBe(0);
    expect(byPath(api.calls, '/api/challenge/verify')).toHaveLength(0);
  });

  it('protection on and no session: shows the widget once, verifies its token, then looks up', async () => {
    const widget = fakeWidget();
    const api = fakeApi({ statuses: [status(true)], lookups: [ok('records')] });
    const challenge = new Challenge({ widget, send: api.send, now: () => NOW });
    const phases: ChallengeView['phase'][] = [];
    challenge.subscribe((view) => phases.push(view.phase));

    expect(await sendWithSession(LOOKUP, new AbortController().signal, challenge, api.send)).toEqual(
      ok('records'),
    );
    expect(phases).toEqual(['loading', 'widget', 'verifying', 'idle']);
    expect(byPath(api.calls, '/api/challenge/verify').map((c) => c.body)).toEqual([{ token: 'token-1' }]);
    expect(widget.cleared).toBe(1);
    expect(challenge.hasSession()).toBe(true);

    // The session holds: the next lookup needs no widget.
    await sendWithSession(LOOKUP, new AbortController().signal, challenge, api.send);
    expect(widget.shown).toBe(1);
  });

  it('concurrent lookups share one verification', async () => {
    const widget = fakeWidget();
    const api = fakeApi({ statuses: [status(true)], lookups: [ok('records')] });
    const challenge = new Challenge({ widget, send: api.send, now: () => NOW });
    await Promise.all(
      [1, 2, 3].map(() => sendWithSession(LOOKUP, new AbortController().signal, challenge, api.send)),
    );
    expect(widget.shown).toBe(1);
    expect(byPath(api.calls, '/api/challenge/verify')).toHaveLength(1);
  });

  it('a 403 challenge_required despite a session: one fresh verification, one retry', async () => {
    const widget = fakeWidget();
    const api = fakeApi({
      statuses: [status(true, { expires_at: IN_15_MIN }), status(true)],
      lookups: [REQUIRED, ok('records')],
    });
    const challenge = new Challenge({ widget, send: api.send, now: () => NOW });

    expect(await sendWithSession(LOOKUP, new AbortController().signal, challenge, api.send)).toEqual(
      ok('records'),
    );
    expect(byPath(api.calls, '/api/challenge/status')).toHaveLength(2);
    expect(byPath(api.calls, '/api/challenge/verify')).toHaveLength(1);
    expect(byPath(api.calls, '/api/dns')).toHaveLength(2);
    expect(widget.shown).toBe(1);
  });

  it('a second 403 after the fresh verification is shown as the error, not verified again', async () => {
    const widget = fakeWidget();
    const api = fakeApi({
      statuses: [status(true, { expires_at: IN_15_MIN }), status(true)],
      lookups: [REQUIRED],
    });
    const challenge = new Challenge({ widget, send: api.send, now: () => NOW });

    expect(await sendWithSession(LOOKUP, new AbortController().signal, challenge, api.send)).toEqual(
      REQUIRED,
    );
    expect(byPath(api.calls, '/api/challenge/verify')).toHaveLength(1);
    expect(byPath(api.calls, '/api/dns')).toHaveLength(2);
    expect(widget.shown).toBe(1);
  });

  it('a 403 while the service reports protection off fails at once rather than loop', async () => {
    const widget = fakeWidget();
    const api = fakeApi({ statuses: [status(false)], lookups: [REQUIRED] });
    const challenge = new Challenge({ widget, send: api.send, now: () => NOW });

    const res = await sendWithSession(LOOKUP, new AbortController().signal, challenge, api.send);
    expect(res).toMatchObject({ ok: false, status: 403, error: { code: 'challenge_failed' } });
    expect(byPath(api.calls, '/api/dns')).toHaveLength(1);
    expect(widget.shown).toBe(0);
  });

  it('a rejected token is the lookup’s answer, and the panel says verification failed', async () => {
    const widget = fakeWidget();
    const rejected = failed(400, 'the token was rejected', 'challenge_failed');
    const api = fakeSend((call) =>
      call.path === '/api/challenge/status'
        ? ok(status(true))
        : call.path === '/api/challenge/verify'
          ? rejected
          : ok('never sent'),
    );
    const challenge = new Challenge({ widget, send: api.send, now: () => NOW });

    expect(await sendWithSession(LOOKUP, new AbortController().signal, challenge, api.send)).toEqual(
      rejected,
    );
    expect(challenge.view).toEqual({ phase: 'failed', message: 'the token was rejected' });
    expect(byPath(api.calls, '/api/dns')).toHaveLength(0);
  });

  it('whenSession waits for a verification', async () => {
    const api = fakeApi({ statuses: [status(true)], lookups: [ok('records')] });
    const challenge = new Challenge({ widget: fakeWidget(), send: api.send, now: () => NOW });
    let woke = false;
    const waiting = challenge.whenSession().then(() => {
      woke = true;
    });
    await Promise.resolve();
    expect(woke).toBe(false);
    await challenge.ensure();
    await waiting;
    expect(woke).toBe(true);
  });
});
