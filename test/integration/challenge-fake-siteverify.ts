/**
 * A fake Turnstile siteverify endpoint on loopback HTTPS (the real protocol:
 * form-encoded POST in, JSON verdict out), behaving like Cloudflare's:
 *
 *   pass:<anything>   success the first time, `timeout-or-duplicate` after (single use upstream)
 *   other-host:<...>  success, but for a hostname other than the expected one
 *   invalid           `invalid-input-response`
 *   bad-secret        `invalid-input-secret` (our configuration is wrong, not the token)
 *   500               HTTP 500
 *   hang              never answers
 *
 * plus the shared fake's `fault` switch for whole-endpoint failures. Its bodies are written here
 * in the documented shapes; the adapter's own test reads Cloudflare's documented ones
 * (challenge-turnstile.test.ts), so the suites on this fake need no third-party data.
 */
import { type FakeUpstream, startFakeUpstream } from '../fakes/https-upstream.js';

export const SITE_KEY = '1x00000000000000000000AA';
export const SECRET_KEY = '1x0000000000000000000000000000000AA';
export const EXPECTED_HOST = 'example.com';

/** A verdict for the expected host, as Cloudflare's "Successful validation response" has it. */
const SUCCESS = {
  success: true,
  challenge_ts: '2026-01-01T00:00:00.000Z',
  hostname: EXPECTED_HOST,
  'error-codes': [],
};
const INVALID = { success: false, 'error-codes': ['invalid-input-response'] };

export interface FakeSiteverify extends FakeUpstream {
  /** The form fields of every verify call, in order. */
  calls(): URLSearchParams[];
}

export async function startFakeSiteverify(): Promise<FakeSiteverify> {
  const seen = new Set<string>();
  const upstream = await startFakeUpstream({
    routes: {
      'POST /turnstile/v0/siteverify': (req) => {
        const form = new URLSearchParams(req.body.toString('utf8'));
        const token = form.get('response') ?? '';
        if (form.get('secret') !== SECRET_KEY) {
          return { json: { success: false, 'error-codes': ['invalid-input-secret'] } };
        }
        if (token === '500') return { status: 500, body: 'internal server error' };
        if (token === 'hang') return { delayMs: 600_000, json: {} };
        if (token === 'bad-secret')
          return { json: { success: false, 'error-codes': ['invalid-input-secret'] } };
        if (token === 'invalid') return { json: INVALID };
        if (seen.has(token)) return { json: { success: false, 'error-codes': ['timeout-or-duplicate'] } };
        seen.add(token);
        if (token.startsWith('pass:')) return { json: SUCCESS };
        if (token.startsWith('other-host:')) return { json: { ...SUCCESS, hostname: 'evil.example' } };
        return { json: INVALID };
      },
    },
  });
  return Object.assign(upstream, {
    calls: () => upstream.requests.map((r) => new URLSearchParams(r.body.toString('utf8'))),
  });
}

/** Config that turns protection on against the fake. */
export function activeConfig(fake: FakeUpstream, extra: Record<string, unknown> = {}) {
  return {
    turnstileSiteKey: SITE_KEY,
    turnstileSecretKey: SECRET_KEY,
    turnstileVerifyUrl: `${fake.url}/turnstile/v0/siteverify`,
    turnstileExpectedHostname: EXPECTED_HOST,
    // Generous: a siteverify round trip (a fresh TLS handshake) on a loaded 2-core CI machine
    // can take far longer than on an idle one; the two cases that time out pay it once each.
    providerTimeoutMs: 5_000,
    ...extra,
  };
}
