/**
 * The siteverify adapter on its own, against a loopback HTTPS fake: what it
 * sends, which answers are verdicts and which are operational failures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../src/config/index.js';
import { ProviderError } from '../../src/errors.js';
import { TurnstileVerifier } from '../../src/providers/challenge/turnstile.js';
import { HttpClient } from '../../src/providers/http-client.js';
import { rejectionOf } from '../expect-error.js';
import { type FakeReply, type FakeUpstream, fixture, startFakeUpstream } from '../fakes/https-upstream.js';
import { getTestPki } from '../fakes/test-ca.js';

let next: FakeReply = { json: {} };
let upstream: FakeUpstream;
let http: HttpClient;

beforeAll(async () => {
  upstream = await startFakeUpstream({ handler: () => next });
  http = new HttpClient({ ca: (await getTestPki()).caPem });
});
afterAll(async () => {
  await Promise.all([upstream?.close(), http?.close()]);
});

function verifier(timeoutMs?: number): TurnstileVerifier {
  const config = testConfig({
    turnstileSiteKey: 'site',
    turnstileSecretKey: 'the-secret',
    turnstileVerifyUrl: `${upstream.url}/siteverify`,
  });
  return new TurnstileVerifier(config, http, timeoutMs === undefined ? {} : { timeoutMs });
}

const never = new AbortController().signal;

const failure = (promise: Promise<unknown>) => rejectionOf(promise, ProviderError);

describe('TurnstileVerifier', () => {
  it('posts secret, response, remoteip and an idempotency key as a form, and reads a success', async () => {
    next = { json: fixture('turnstile/siteverify-success.json') };
    upstream.reset();
    const verdict = await verifier().verify({ token: 'tok', remoteIp: '198.51.100.1' }, never);
    expect(verdict).toEqual({
      success: true,
      hostname: 'example.com',
      challengeTs: '2022-02-28T15:14:30.096Z',
      action: 'login',
    });
    const req = upstream.requests[0];
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe('/siteverify');
    const form = new URLSearchParams(req?.body.toString('utf8'));
    expect(Object.fromEntries(form)).toEqual({
      secret: 'the-secret',
      response: 'tok',
      remoteip: '198.51.100.1',
      idempotency_key: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it('uses a fresh idempotency key per call, so a replay is never answered from Cloudflare’s idempotency memory', async () => {
    next = { json: fixture('turnstile/siteverify-success-curl.json') };
    upstream.reset();
    await verifier().verify({ token: 'same' }, never);
    await verifier().verify({ token: 'same' }, never);
    const keys = upstream.requests.map((r) =>
      new URLSearchParams(r.body.toString('utf8')).get('idempotency_key'),
    );
    expect(new Set(keys).size).toBe(2);
    expect(new URLSearchParams(upstream.requests[0]?.body.toString('utf8')).has('remoteip')).toBe(false);
  });

  it('returns a rejection with the error codes that blame the token', async () => {
    next = { json: fixture('turnstile/siteverify-failure-invalid-input-response.json') };
    expect(await verifier().verify({ token: 'x' }, never)).toEqual({
      success: false,
      errorCodes: ['invalid-input-response'],
    });
    next = { json: { success: false } };
    expect(await verifier().verify({ token: 'x' }, never)).toEqual({ success: false, errorCodes: [] });
  });

  it.each(['missing-input-secret', 'invalid-input-secret', 'bad-request', 'internal-error'])(
    'throws an operational failure for %s (our side, not the visitor’s)',
    async (code) => {
      next = { json: { success: false, 'error-codes': [code] } };
      const err = await failure(verifier().verify({ token: 'x' }, never));
      expect(err.kind).toBe('upstream_error');
      expect(err.message).toContain(code);
      expect(err.message).not.toContain('the-secret');
    },
  );

  it.each<[string, FakeReply, string]>([
    ['HTTP 500', { status: 500, body: 'oops' }, 'http_status'],
    ['HTTP 429', { status: 429, json: {} }, 'rate_limited'],
    ['an HTML body', { body: '<html>bad gateway</html>' }, 'bad_response'],
    ['JSON without a success flag', { json: { hostname: 'example.com' } }, 'bad_response'],
    ['a JSON array', { json: [] }, 'bad_response'],
  ])('throws an operational failure for %s', async (_name, reply, kind) => {
    next = reply;
    expect((await failure(verifier().verify({ token: 'x' }, never))).kind).toBe(kind);
  });

  it('gives up after its own timeout', async () => {
    upstream.fault = 'timeout';
    try {
      expect((await failure(verifier(150).verify({ token: 'x' }, never))).kind).toBe('timeout');
    } finally {
      upstream.fault = 'none';
    }
  });
});
