/** Shaping safeFetch evidence: allow-listed, bounded headers; chains; HTTP/2 and advertised HTTP/3. */
import { describe, expect, it } from 'vitest';
import {
  type ChainOutcome,
  httpPart,
  MAX_HEADER_VALUE,
  reportedHeaders,
} from '../../../../src/features/inspect/http-evidence.js';
import { TargetError, UnsafeTargetError } from '../../../../src/net/errors.js';
import type { HopEvidence, SafeFetchResult } from '../../../../src/net/safe-http.js';

const timings = { dns: 1, connect: 2, tls: 3, ttfb: 4, total: 10 };

function hop(
  url: string,
  status: number,
  headers: HopEvidence['headers'] = {},
  extra: Partial<HopEvidence> = {},
): HopEvidence {
  return {
    url,
    status,
    headers,
    httpVersion: '1.1',
    remoteAddress: '192.0.2.1',
    addresses: ['192.0.2.1'],
    timings,
    ...extra,
  };
}

function ok(
  startUrl: string,
  hops: HopEvidence[],
  body = Buffer.from('hi'),
  truncated = false,
): ChainOutcome {
  const final = hops.at(-1) as HopEvidence;
  const result: SafeFetchResult = {
    url: final.url,
    hops,
    final,
    body,
    truncated,
    redirectLimitReached: false,
  };
  return { startUrl, ok: true, result };
}

describe('reportedHeaders', () => {
  it('reports allow-listed headers, lists the rest by name only, and caps long values', () => {
    const r = reportedHeaders({
      'content-type': 'text/html',
      'set-cookie': ['session=secret', 'b=2'],
      'x-secret-token': 'abc',
      vary: ['accept', 'origin'],
      'content-security-policy': 'a'.repeat(MAX_HEADER_VALUE + 5),
    });
    expect(r.headers['content-type']).toBe('text/html');
    expect(r.headers.vary).toBe('accept, origin');
    expect(r.headers['content-security-policy']).toHaveLength(MAX_HEADER_VALUE);
    expect(r.truncated).toEqual(['content-security-policy']);
    expect(r.other).toEqual(['set-cookie', 'x-secret-token']);
    expect(JSON.stringify(r)).not.toMatch(/secret;|session=secret|abc/);
  });
});

describe('httpPart', () => {
  const tls = { protocol: 'TLSv1.3', alpn: 'h2', cipher: 'TLS_AES_128_GCM_SHA256', authorized: true };

  it('reads the final response from the https chain, with HTTP/2 and advertised HTTP/3', () => {
    const http = ok('http://a.example/', [
      hop('http://a.example/', 301, { location: 'https://a.example/' }, { location: 'https://a.example/' }),
      hop('https://a.example/', 200, {}, { httpVersion: '2', tls }),
    ]);
    const https = ok('https://a.example/', [
      hop(
        'https://a.example/',
        200,
        { 'alt-svc': 'h3=":443"; ma=86400', server: 'x' },
        { httpVersion: '2', tls },
      ),
    ]);
    const part = httpPart(http, https);
    expect(part.status).toBe('ok');
    expect(part.final).toMatchObject({
      url: 'https://a.example/',
      http_version: '2',
      headers: { server: 'x' },
    });
    expect(part.redirects_to_https).toBe(true);
    expect(part.http2.negotiated).toBe(true);
    expect(part.http3).toEqual({
      advertised: true,
      clear: false,
      alternatives: [{ protocol: 'h3', authority: ':443', max_age: 86400 }],
    });
    expect(part.chains.http.hops.map((h) => [h.status, h.location, h.http_version])).toEqual([
      [301, 'https://a.example/', '1.1'],
      [200, null, '2'],
    ]);
    expect(part.chains.http.total_ms).toBe(20);
    expect(part.chains.https.hops[0]?.tls).toEqual({ ...tls, authorization_error: null });
  });

  it('falls back to the http chain when https failed, and never reads Alt-Svc from plain HTTP', () => {
    const http = ok('http://a.example/', [hop('http://a.example/', 200, { 'alt-svc': 'h3=":443"' })]);
    const https: ChainOutcome = {
      startUrl: 'https://a.example/',
      ok: false,
      hops: [],
      error: new TargetError('network', 'connect', 'a.example: connect failed: ECONNREFUSED'),
    };
    const part = httpPart(http, https);
    expect(part.final?.url).toBe('http://a.example/');
    expect(part.redirects_to_https).toBe(false);
    expect(part.http3.advertised).toBe(false);
    expect(part.chains.https).toMatchObject({ status: 'error', stage: 'connect', hops: [], final_url: null });
  });

  it('keeps the hops seen before a refused redirect', () => {
    const https: ChainOutcome = {
      startUrl: 'https://a.example/',
      ok: false,
      hops: [hop('https://a.example/', 302, {}, { location: 'http://internal.example/' })],
      error: new UnsafeTargetError('not_public', 'target redirect internal.example resolves to 10.0.0.1'),
    };
    const http: ChainOutcome = { ...https, startUrl: 'http://a.example/', hops: [] };
    const part = httpPart(http, https);
    expect(part).toMatchObject({ status: 'error', final: null, timings: null });
    expect(part.chains.https).toMatchObject({ status: 'error', stage: 'refused' });
    expect(part.chains.https.hops).toHaveLength(1);
    expect(part.error).toMatch(/neither/);
  });

  it('reports the body size and whether it was cut', () => {
    const https = ok('https://a.example/', [hop('https://a.example/', 200)], Buffer.alloc(1024), true);
    expect(httpPart(https, https).final?.body).toEqual({ bytes: 1024, truncated: true });
  });
});
