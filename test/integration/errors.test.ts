/**
 * One error model: every non-2xx is JSON {error}, bad input is a 400 naming
 * the parameter, and no input at all can produce a 500.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { buildTestApp, capturingLogger } from '../helper.js';
import { ProbeProvider, probeRoutes } from '../probe-routes.js';

const app = () => buildTestApp({ extend: probeRoutes([new ProbeProvider('p')]) });

describe('error model', () => {
  it('answers an unknown route with a JSON 404', async () => {
    const res = await (await app()).inject('/api/nope');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: expect.stringContaining('/api/nope'), code: 'not_found' });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('names the parameter and the rule for a schema failure', async () => {
    const a = await app();
    const badType = await a.inject('/api/probe?target=example.com&type=TXT');
    expect(badType.statusCode).toBe(400);
    expect(badType.json().error).toBe('type must be one of A, AAAA, MX');
    const missing = await a.inject('/api/probe');
    expect(missing.json().error).toBe('target is required');
    const empty = await a.inject('/api/probe?target=');
    expect(empty.json().error).toBe('target must not be empty');
    // JSON bodies are typed: a number is not silently turned into the string a schema wants.
    const coerced = await a.inject({ method: 'POST', url: '/api/probe', payload: { target: 42, type: 'A' } });
    expect(coerced.statusCode).toBe(400);
    expect(coerced.json().error).toBe('target must be of type string');
    const unknownField = await a.inject({
      method: 'POST',
      url: '/api/probe',
      payload: { target: 'x', type: 'A', extra: 1 },
    });
    expect(unknownField.json().error).toBe('extra is not an accepted field');
  });

  it('answers 500 {error:"internal error"} for a crash, logs it with the request id, leaks nothing', async () => {
    const { logger, lines } = capturingLogger();
    const a = await buildTestApp({ logger, extend: probeRoutes([new ProbeProvider('p')]) });
    const res = await a.inject({ url: '/api/probe/crash', headers: { 'x-request-id': 'req-123' } });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal error', code: 'internal' });
    expect(res.body).not.toContain('secret');
    expect(res.headers['x-request-id']).toBe('req-123');
    const logged = lines().find((l) => l.msg === 'unhandled error');
    expect(logged?.reqId).toBe('req-123');
  });

  // Table-driven: malformed bodies, unknown content types, huge query strings, invalid encodings.
  const json = { 'content-type': 'application/json' };
  const rows: {
    name: string;
    method?: 'GET' | 'POST';
    url: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }[] = [
    { name: 'malformed JSON', method: 'POST', url: '/api/probe', headers: json, body: '{"target": "x",' },
    { name: 'JSON array body', method: 'POST', url: '/api/probe', headers: json, body: '[1,2]' },
    { name: 'JSON string body', method: 'POST', url: '/api/probe', headers: json, body: '"x"' },
    { name: 'JSON null body', method: 'POST', url: '/api/probe', headers: json, body: 'null' },
    { name: 'empty JSON body', method: 'POST', url: '/api/probe', headers: json, body: '' },
    {
      name: 'wrong field type',
      method: 'POST',
      url: '/api/probe',
      headers: json,
      body: '{"target": {"a":1}, "type": "A"}',
    },
    {
      name: 'prototype pollution',
      method: 'POST',
      url: '/api/probe',
      headers: json,
      body: '{"__proto__": {"x": 1}, "target": "a", "type": "A"}',
    },
    {
      name: 'text/plain body',
      method: 'POST',
      url: '/api/probe',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    },
    {
      name: 'form body',
      method: 'POST',
      url: '/api/probe',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'target=x',
    },
    {
      name: 'unknown content type',
      method: 'POST',
      url: '/api/probe',
      headers: { 'content-type': 'application/x-netdiag' },
      body: 'x',
    },
    {
      name: 'oversized body',
      method: 'POST',
      url: '/api/probe',
      headers: json,
      body: JSON.stringify({ target: 'x'.repeat(20_000), type: 'A' }),
    },
    {
      name: 'invalid UTF-8 in JSON',
      method: 'POST',
      url: '/api/probe',
      headers: json,
      body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    },
    { name: 'huge query string', url: `/api/probe?target=${'a'.repeat(8000)}` },
    {
      name: 'many parameters',
      url: `/api/probe?${Array.from({ length: 2000 }, (_, i) => `p${i}=1`).join('&')}`,
    },
    { name: 'invalid percent-encoding in query', url: '/api/probe?target=%E0%A4%A' },
    { name: 'invalid UTF-8 percent-encoding in query', url: '/api/probe?target=%ff%fe' },
    { name: 'overlong UTF-8 in query', url: '/api/probe?target=%c0%af' },
    { name: 'invalid percent-encoding in path', url: '/api/%E0%A4%A' },
    { name: 'NUL in query', url: '/api/probe?target=a%00b' },
    { name: 'repeated parameter', url: '/api/probe?target=a&target=b' },
    { name: 'bad boolean', url: '/api/probe?target=a&flag=maybe' },
    { name: 'enum case mismatch', url: '/api/probe?target=a&type=a' },
    {
      name: 'query on POST-only body route',
      method: 'POST',
      url: '/api/probe?target=x',
      headers: json,
      body: '{}',
    },
  ];

  for (const row of rows) {
    it(`bad input never yields 500: ${row.name}`, async () => {
      const res = await (await app()).inject({
        method: row.method ?? 'GET',
        url: row.url,
        headers: row.headers,
        body: row.body,
      });
      expect(res.statusCode).toBeLessThan(500);
      if (res.statusCode >= 400) {
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(typeof res.json().error).toBe('string');
        expect(res.headers['cache-control']).toBe('no-store');
      }
    });
  }

  it('answers 400 (not 413/415) for an oversized body and a wrong content type', async () => {
    const a = await app();
    const big = await a.inject({
      method: 'POST',
      url: '/api/probe',
      headers: json,
      body: 'x'.repeat(17_000),
    });
    expect(big.statusCode).toBe(400);
    expect(big.json().error).toMatch(/16384 bytes/);
    const wrongType = await a.inject({
      method: 'POST',
      url: '/api/probe',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().error).toMatch(/application\/json/);
    const badJson = await a.inject({ method: 'POST', url: '/api/probe', headers: json, body: '{' });
    expect(badJson.statusCode).toBe(400);
  });

  it('answers a JSON error (not a hang, not HTML) when request headers are too large on a real socket', async () => {
    const a = await app();
    await a.listen({ port: 0, host: '127.0.0.1' });
    const port = (a.server.address() as { port: number }).port;
    const response = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET /api/probe?target=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      });
      let data = '';
      socket.on('data', (d) => (data += d.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(response).toMatch(/^HTTP\/1\.1 431/);
    expect(response).toMatch(/content-type: application\/json/i);
    expect(response).toContain('"error"');
  });
});
