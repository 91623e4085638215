/**
 * The RDAP fetch rules, with scripted hops (the real transport is covered by
 * the integration tests): redirects, their limit and scheme, 404 vs failures,
 * 429 + Retry-After, outbound-safety refusals, the Accept header.
 */
import { describe, expect, it } from 'vitest';
import { AppError, ProviderError } from '../../../../src/errors.js';
import {
  type HopRequest,
  type HopResponse,
  type HopSender,
  MAX_RDAP_REDIRECTS,
  RDAP_ACCEPT,
  RdapFetcher,
} from '../../../../src/providers/rdap/rdap-fetch.js';
import { RetryAfterGate } from '../../../../src/providers/rdap/retry-after.js';
import { rejectionOf } from '../../../expect-error.js';

type Script = Record<string, HopResponse | (() => never)>;

function scripted(script: Script): HopSender & { calls: { url: string; req: HopRequest }[] } {
  const calls: { url: string; req: HopRequest }[] = [];
  const send = async (url: string, req: HopRequest) => {
    calls.push({ url, req });
    const step = script[url];
    if (step === undefined) throw new Error(`unexpected request to ${url}`);
    return typeof step === 'function' ? step() : step;
  };
  return Object.assign(send, { calls });
}

const json = (value: unknown, status = 200): HopResponse => ({
  status,
  headers: { 'content-type': 'application/rdap+json' },
  body: Buffer.from(JSON.stringify(value)),
});
const redirect = (location: string, status = 302): HopResponse => ({
  status,
  headers: { location },
  body: Buffer.alloc(0),
});
const signal = () => AbortSignal.timeout(5000);

const failure = (p: Promise<unknown>) => rejectionOf(p, ProviderError);

describe('RdapFetcher', () => {
  it('follows redirects (relative ones too), sends the RDAP Accept header, and reports the final URL', async () => {
    const send = scripted({
      'https://agg.example/domain/a.test': redirect('https://reg.example/rdap/domain/a.test'),
      'https://reg.example/rdap/domain/a.test': redirect('/v2/domain/a.test', 301),
      'https://reg.example/v2/domain/a.test': json({ objectClassName: 'domain', ldhName: 'a.test' }),
    });
    const doc = await new RdapFetcher(send, new RetryAfterGate(Date.now)).fetch(
      'https://agg.example/domain/a.test',
      {
        signal: signal(),
      },
    );
    expect(doc).toEqual({
      status: 'found',
      url: 'https://reg.example/v2/domain/a.test',
      object: { objectClassName: 'domain', ldhName: 'a.test' },
      redirects: 2,
    });
    expect(send.calls.every((c) => c.req.headers.accept === RDAP_ACCEPT)).toBe(true);
    expect(RDAP_ACCEPT.startsWith('application/rdap+json')).toBe(true);
  });

  it('uses the first-hop sender for the first request only', async () => {
    const first = scripted({ 'https://agg.example/ip/1.1.1.1': redirect('https://rir.example/ip/1.1.1.1') });
    const outbound = scripted({ 'https://rir.example/ip/1.1.1.1': json({ objectClassName: 'ip network' }) });
    await new RdapFetcher(outbound, new RetryAfterGate(Date.now)).fetch('https://agg.example/ip/1.1.1.1', {
      signal: signal(),
      first,
    });
    expect(first.calls.map((c) => c.url)).toEqual(['https://agg.example/ip/1.1.1.1']);
    expect(outbound.calls.map((c) => c.url)).toEqual(['https://rir.example/ip/1.1.1.1']);
  });

  // Regression: registries IANA lists on another port (https://nic.samsung:8443/rdap/) were refused by
  // outbound safety's 80/443 rule, so those TLDs always ended in 502.
  it('lets a URL listed in the bootstrap use its own port, but not a redirect from it', async () => {
    const send = scripted({
      'https://nic.example:8443/rdap/domain/a.example': redirect(
        'https://other.example:8443/domain/a.example',
      ),
      'https://other.example:8443/domain/a.example': json({
        objectClassName: 'domain',
        ldhName: 'a.example',
      }),
    });
    await new RdapFetcher(send, new RetryAfterGate(Date.now)).fetch(
      'https://nic.example:8443/rdap/domain/a.example',
      {
        signal: signal(),
        listed: true,
      },
    );
    expect(send.calls.map((c) => c.req.listedPort)).toEqual([8443, undefined]);
  });

  it(`stops after ${MAX_RDAP_REDIRECTS} redirects`, async () => {
    const script: Script = {};
    for (let i = 0; i <= MAX_RDAP_REDIRECTS; i++)
      script[`https://r.example/${i}`] = redirect(`https://r.example/${i + 1}`);
    const err = await failure(
      new RdapFetcher(scripted(script), new RetryAfterGate(Date.now)).fetch('https://r.example/0', {
        signal: signal(),
      }),
    );
    expect(err.kind).toBe('bad_response');
    expect(err.message).toMatch(/redirects/);
  });

  it('refuses a redirect to plain http, and a first URL over http unless allowed', async () => {
    const send = scripted({ 'https://agg.example/x': redirect('http://reg.example/x') });
    const fetcher = new RdapFetcher(send, new RetryAfterGate(Date.now));
    expect((await failure(fetcher.fetch('https://agg.example/x', { signal: signal() }))).message).toMatch(
      /non-HTTPS/,
    );
    expect(send.calls).toHaveLength(1);
    await failure(fetcher.fetch('http://reg.example/x', { signal: signal() }));
    expect(send.calls).toHaveLength(1);
  });

  it('returns 404 as not_found, and throws for other statuses, bad JSON and non-objects', async () => {
    const send = scripted({
      'https://r.example/404': json({ errorCode: 404 }, 404),
      'https://r.example/403': json({ errorCode: 403 }, 403),
      'https://r.example/503': json({}, 503),
      'https://r.example/html': { status: 200, headers: {}, body: Buffer.from('<html>') },
      'https://r.example/array': json([1, 2]),
      'https://r.example/302': { status: 302, headers: {}, body: Buffer.alloc(0) },
    });
    const fetcher = new RdapFetcher(send, new RetryAfterGate(Date.now));
    const get = (path: string) => fetcher.fetch(`https://r.example/${path}`, { signal: signal() });
    expect(await get('404')).toEqual({ status: 'not_found', url: 'https://r.example/404', redirects: 0 });
    expect((await failure(get('403'))).kind).toBe('http_status');
    expect((await failure(get('503'))).kind).toBe('http_status');
    expect((await failure(get('html'))).kind).toBe('bad_response');
    expect((await failure(get('array'))).kind).toBe('bad_response');
    expect((await failure(get('302'))).kind).toBe('bad_response');
  });

  it('respects Retry-After: a 429 closes that server until the time has passed, without sending', async () => {
    let now = 0;
    const send = scripted({
      'https://reg.example/domain/a.test': {
        status: 429,
        headers: { 'retry-after': '60' },
        body: Buffer.alloc(0),
      },
      'https://reg.example/domain/b.test': json({ objectClassName: 'domain' }),
    });
    const fetcher = new RdapFetcher(send, new RetryAfterGate(() => now));
    const limited = await failure(fetcher.fetch('https://reg.example/domain/a.test', { signal: signal() }));
    expect(limited.kind).toBe('rate_limited');
    expect(limited.message).toBe('HTTP 429 from reg.example; not asked again until 1970-01-01T00:01:00.000Z');
    now = 15_000;
    const blocked = await failure(fetcher.fetch('https://reg.example/domain/b.test', { signal: signal() }));
    expect(blocked.kind).toBe('rate_limited');
    expect(blocked.message).toBe(
      'reg.example asked not to be queried for another 45 s (429, Retry-After): not sent, skipped until 1970-01-01T00:01:00.000Z',
    );
    expect(send.calls).toHaveLength(1);
    now = 60_000;
    await expect(
      fetcher.fetch('https://reg.example/domain/b.test', { signal: signal() }),
    ).resolves.toMatchObject({
      status: 'found',
    });
  });

  it('turns an outbound-safety refusal (400) into a failure of the source, never a 400 for the user', async () => {
    const send = scripted({
      'https://agg.example/x': redirect('https://internal.example/x'),
      'https://internal.example/x': () => {
        throw new AppError(
          400,
          'bad_request',
          'target redirect internal.example resolves to 10.0.0.1, which is not a public address',
        );
      },
    });
    const err = await failure(
      new RdapFetcher(send, new RetryAfterGate(Date.now)).fetch('https://agg.example/x', {
        signal: signal(),
      }),
    );
    expect(err.kind).toBe('upstream_error');
    expect(err.message).toMatch(/not a public address/);
  });
});
