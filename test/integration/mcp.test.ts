/**
 * /mcp through the official SDK's own client over HTTP, against the whole app listening on
 * loopback with fixture upstreams (test/e2e/fixture-app.ts): the tool list, every tool
 * called, errors as tool results, the limiter shared with REST, the challenge gate.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/features/tools/catalog.js';
import { type FixtureApp, SPF_SENDER, startFixtureApp } from '../e2e/fixture-app.js';
import { buildTestApp } from '../helper.js';
import { hasShared } from '../shared-data.js';

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'netdiag-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers } }));
  return client;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

describe('MCP endpoint (/mcp) with the SDK client', () => {
  let fx: FixtureApp;
  let client: Client;
  beforeAll(async () => {
    fx = await startFixtureApp();
    client = await connect(fx.url);
    // Listed first, so that the SDK client checks every structured result below against its
    // tool's output schema, whichever test runs alone.
    await client.listTools();
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await fx?.close();
  });

  it('lists one tool per lookup, with the route schema, the cost and read-only annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    expect(client.getServerVersion()?.name).toBe('netdiag');
    const dns = tools.find((t) => t.name === 'dns_lookup')!;
    expect(dns.inputSchema.type).toBe('object');
    expect(dns.inputSchema.required).toEqual(['target']);
    expect(Object.keys(dns.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['target', 'type']));
    expect(dns.description).toMatch(/general limit \(1000 per 60 s/);
    const email = tools.find((t) => t.name === 'email_security')!;
    expect(email.description).toMatch(/expensive limit \(100 per 60 s/);
    const globalDns = tools.find((t) => t.name === 'global_dns')!;
    // A POST route: the body schema is the input.
    expect(globalDns.inputSchema.required).toEqual(expect.arrayContaining(['target']));
    const myIp = tools.find((t) => t.name === 'my_ip')!;
    expect(myIp.inputSchema).toMatchObject({ type: 'object', properties: {} });
    // DNSSEC validation: the name alone is enough (type A); a live measurement.
    const dnssec = tools.find((t) => t.name === 'dnssec_validate')!;
    expect(dnssec.inputSchema.required).toEqual(['target']);
    expect(dnssec.inputSchema.properties?.type).toMatchObject({ default: 'A' });
    expect(dnssec.description).toMatch(/^Validates DNSSEC .+ expensive limit \(100 per 60 s/);
    expect(dnssec.outputSchema?.required).toEqual(
      expect.arrayContaining(['status', 'reason', 'chain', 'answer', 'queries']),
    );
    for (const tool of tools) {
      expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true, openWorldHint: true });
      expect(tool.description, tool.name).toMatch(/Cost: /);
    }
  });

  it('answers a tool call with the route JSON as structured content and a readable summary', async () => {
    const result = await call(client, 'dns_lookup', { target: 'example.test', type: 'a' });
    expect(result.isError).toBeFalsy();
    const rest = await (await fetch(`${fx.url}/api/dns?target=example.test&type=A`)).json();
    // The REST answer is the cached one the tool call produced: the same JSON.
    expect(result.structuredContent).toEqual(rest);
    expect(text(result)).toMatch(/^example\.test A: 192\.0\.2\.10 \(via DNS over HTTPS/);
    expect(text(result)).toMatch(/via /);
  });

  const calls: [string, Record<string, unknown>, RegExp, (body: Record<string, unknown>) => void][] = [
    [
      'email_security',
      { domain: 'example.test' },
      /^example\.test: grade [A-F][+]?, \d+\/100\./,
      (b) => expect(b.domain).toBe('example.test'),
    ],
    [
      'spf_check',
      { ip: '198.51.100.7', sender: SPF_SENDER },
      /^SPF pass for 198\.51\.100\.7 sending mail from alice@sender\.test/,
      (b) => expect(b.result).toBe('pass'),
    ],
    [
      'rdap_lookup',
      { target: 'google.com', type: 'domain' },
      /^google\.com \(domain\): registrar /,
      (b) => expect(b.type).toBe('domain'),
    ],
    [
      'ct_certificates',
      { domain: 'example.com' },
      /^example\.com: \d+ certificates in CT logs/,
      (b) => expect(b.total).toBeGreaterThan(0),
    ],
    [
      'subdomains',
      { domain: 'example.com' },
      /^example\.com: \d+ names? found in CT/,
      (b) => expect(b.hosts).toBeDefined(),
    ],
    [
      'global_dns',
      { target: 'cdn.jsdelivr.net', type: 'A' },
      /^cdn\.jsdelivr\.net A from 10 countries: /,
      (b) => expect(b.results).toHaveLength(10),
    ],
    [
      'ip_geo',
      { ip: '172.224.226.34' },
      /^172\.224\.226\.34: .*\(approximate\)/,
      (b) => expect(b.ip).toBe('172.224.226.34'),
    ],
    [
      'ip_privacy',
      { ip: '172.224.226.34' },
      /^172\.224\.226\.34 is a published .* egress address\./,
      (b) => expect(b.is_relay).toBe(true),
    ],
    [
      'my_ip',
      {},
      /^Your address as this service sees it: 127\.0\.0\.1 \(IPv4\)/,
      (b) => expect(b.ip).toBe('127.0.0.1'),
    ],
  ];
  /** Their answers come from real captures (../shared), left out of the fixture upstreams without it. */
  const fromCaptures = new Set(['rdap_lookup', 'ip_privacy']);
  it.for(calls)('calls %s', async ([name, args, summary, check], t) => {
    if (!hasShared && fromCaptures.has(name)) return t.skip();
    const result = await call(client, name, args);
    expect(result.isError, text(result)).toBeFalsy();
    expect(text(result)).toMatch(summary);
    check(result.structuredContent as Record<string, unknown>);
  });

  it('calls the tools that connect to hosts (tls_certificate, inspect_host, mail_tls)', async (t) => {
    // Ports 80, 443 and 25 on 127.0.0.x need root, as in CI.
    if (fx.inspectHost === undefined || fx.mailDomain === undefined) return t.skip();
    const tls = await call(client, 'tls_certificate', { target: fx.inspectHost });
    expect(tls.isError, text(tls)).toBeFalsy();
    expect(text(tls)).toMatch(
      new RegExp(`^${fx.inspectHost}:443: Trusted by browsers for ${fx.inspectHost}\\b.* TLSv1\\.3 `),
    );
    const inspect = await call(client, 'inspect_host', { target: fx.inspectHost });
    expect(inspect.isError, text(inspect)).toBeFalsy();
    expect(text(inspect)).toMatch(/HTTP 200 at https:\/\/www\.inspect\.test\/; .*security headers grade/);
    const mail = await call(client, 'mail_tls', { domain: fx.mailDomain });
    expect(mail.isError, text(mail)).toBeFalsy();
    expect(text(mail)).toMatch(new RegExp(`^${fx.mailDomain}: mail servers (pass|warn|fail)\\.`));
    expect((mail.structuredContent as { hosts: unknown[] }).hosts.length).toBeGreaterThan(0);
  });

  it('turns a 400 into a tool error naming the parameter', async () => {
    const result = await call(client, 'dns_lookup', { target: 'example.test', type: 'NOPE' });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/type/);
    expect(text(result)).toMatch(/HTTP 400/);
    // The error body as text: structured content is the answer the output schema describes.
    expect(result.structuredContent).toBeUndefined();
    expect(text(result)).toMatch(/"error":/);
    const missing = await call(client, 'spf_check', { sender: SPF_SENDER });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/\bip\b/);
  });

  it('answers an unknown tool with a JSON-RPC error, as the spec says', async () => {
    await expect(call(client, 'no_such_tool')).rejects.toThrow(/unknown tool: no_such_tool/);
  });

  it('answers GET and DELETE with 405 (stateless: no SSE stream, no session to end)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${fx.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
  });

  it('needs no session: a bare POST with tools/call is answered', async () => {
    const res = await fetch(`${fx.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'dns_lookup', arguments: { target: 'example.test', type: 'MX' } },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const body = await res.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 7, result: { structuredContent: { type: 'MX' } } });
  });
});

/** One JSON-RPC message POSTed to /mcp in-process, as a browser or an agent would send it. */
function post(app: FastifyInstance, message: object, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    payload: JSON.stringify(message),
  });
}

const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

// Issue 29 F7: Origin was compared with the request's own Host, which a DNS-rebinding page controls.
describe('F7: the Origin rule (DNS rebinding) holds to configured origins, not to Host', () => {
  it('F7: refuses Host: evil.example with Origin: https://evil.example (a rebinding page), and opaque origins', async () => {
    const app = await buildTestApp();
    const rebound = await post(app, LIST, { host: 'evil.example', origin: 'https://evil.example' });
    expect(rebound.statusCode).toBe(403);
    expect(rebound.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    expect(rebound.headers['cache-control']).toBe('no-store');
    expect(
      (await post(app, LIST, { host: 'evil.example:80', origin: 'http://evil.example' })).statusCode,
    ).toBe(403);
    expect((await post(app, LIST, { origin: 'null' })).statusCode).toBe(403);
    // Nothing configured: a browser on this machine, at PORT, is the only one trusted.
    expect(
      (await post(app, LIST, { host: 'localhost:8080', origin: 'http://localhost:8080' })).statusCode,
    ).toBe(200);
    expect(
      (await post(app, LIST, { host: 'localhost:8080', origin: 'http://localhost:3000' })).statusCode,
    ).toBe(403);
  });

  it('F7: accepts a configured origin, whatever the Host, and refuses the rest', async () => {
    const app = await buildTestApp({ config: { mcpAllowedOrigins: ['https://netdiag.example'] } });
    const own = await post(app, LIST, { host: 'netdiag.example', origin: 'https://netdiag.example' });
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { tools: expect.any(Array) } });
    // Behind a proxy the Host may be an internal name: the origin is what counts.
    expect(
      (await post(app, LIST, { host: '10.0.0.5:8080', origin: 'https://netdiag.example' })).statusCode,
    ).toBe(200);
    expect((await post(app, LIST, { host: 'evil.example', origin: 'https://evil.example' })).statusCode).toBe(
      403,
    );
    expect((await post(app, LIST, { origin: 'http://netdiag.example' })).statusCode).toBe(403);
  });

  it('F7: accepts a request without Origin (an agent, not a browser)', async () => {
    const app = await buildTestApp({ config: { mcpAllowedOrigins: ['https://netdiag.example'] } });
    const agent = await post(app, LIST, { host: 'evil.example' });
    expect(agent.statusCode).toBe(200);
    expect(agent.json().result.tools.length).toBe(TOOLS.length);
  });
});

// Issue 29 F8: a malformed tools/call was answered -32603 (internal error).
describe('F8: malformed params are the caller’s error', () => {
  it('F8: answers a tools/call whose arguments are no object, or that names no tool, with -32602 (invalid params)', async () => {
    const app = await buildTestApp();
    const malformed: [string, unknown][] = [
      ['tools/call', { name: 'dns_lookup', arguments: 'target=example.test' }],
      ['tools/call', { name: 'dns_lookup', arguments: ['example.test'] }],
      ['tools/call', { arguments: { target: 'example.test' } }],
      ['tools/call', undefined],
      ['tools/list', { cursor: 5 }],
    ];
    for (const [method, params] of malformed) {
      const res = await post(app, { jsonrpc: '2.0', id: 9, method, params });
      const label = `${method} ${JSON.stringify(params)}`;
      expect(res.statusCode, label).toBe(200);
      expect(res.json(), label).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: -32602 } });
    }
  });
});

// Issue 29 F8: 300 tools/list calls of 20 KB each from one client were all answered.
describe('F8: every /mcp message is counted, a tool call once', () => {
  it('F8: answers the 31st tools/list from one client 429 with Retry-After under RATE_LIMIT_GENERAL=30/60', async () => {
    const app = await buildTestApp({ config: { rateLimitGeneral: { points: 30, seconds: 60 } } });
    for (let i = 1; i <= 30; i++) {
      const res = await post(app, { ...LIST, id: i });
      expect(res.statusCode, `call ${i}`).toBe(200);
      expect(res.headers.ratelimit).toBe(`"general";r=${30 - i};t=60`);
    }
    const refused = await post(app, { ...LIST, id: 31 });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(refused.json()).toMatchObject({ code: 'rate_limited', error: expect.stringMatching(/general/) });
    // The budget REST shares: spent for the same address, untouched for another.
    expect((await app.inject({ url: '/api/my-ip' })).statusCode).toBe(429);
    expect((await app.inject({ url: '/api/my-ip', remoteAddress: '198.51.100.7' })).statusCode).toBe(200);
  });

  it('F8: a tool call costs one point (its route’s), and one no route answered costs one here', async () => {
    const app = await buildTestApp({ config: { rateLimitGeneral: { points: 10, seconds: 60 } } });
    const call = (id: number, params: unknown) =>
      post(app, { jsonrpc: '2.0', id, method: 'tools/call', params });
    const routed = await call(1, { name: 'my_ip', arguments: {} });
    expect(routed.json().result.structuredContent).toMatchObject({ ip: '127.0.0.1' });
    // Counted by /api/my-ip, not by /mcp: no RateLimit of its own here.
    expect(routed.headers.ratelimit).toBeUndefined();
    const unknown = await call(2, { name: 'no_such_tool', arguments: {} });
    expect(unknown.json()).toMatchObject({ error: { code: -32602 } });
    expect(unknown.headers.ratelimit).toBe('"general";r=8;t=60');
    expect((await call(3, { name: 'my_ip', arguments: 'x' })).headers.ratelimit).toBe('"general";r=7;t=60');
    const notification = await post(app, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notification.statusCode).toBe(202);
    expect(notification.headers.ratelimit).toBe('"general";r=6;t=60');
    const rest = await app.inject({ url: '/api/my-ip' });
    expect(rest.headers.ratelimit).toBe('"general";r=5;t=60');
  });
});

describe('MCP and REST share one rate limit and one challenge gate', () => {
  it('counts tool calls and REST calls against the same address budget; a 429 says when to retry', async () => {
    const fx = await startFixtureApp({ config: { rateLimitGeneral: { points: 6, seconds: 60 } } });
    try {
      const client = await connect(fx.url);
      // Discovery costs what any request costs (issue 29 F8): initialize, the initialized
      // notification and tools/list take three points; each call below takes one.
      await client.listTools();
      expect((await fetch(`${fx.url}/api/dns?target=example.test`)).status).toBe(200);
      expect((await call(client, 'dns_lookup', { target: 'example.test' })).isError).toBeFalsy();
      expect((await fetch(`${fx.url}/api/dns?target=example.test`)).status).toBe(200);
      const limited = await call(client, 'dns_lookup', { target: 'example.test' });
      expect(limited.isError).toBe(true);
      // When to retry, said once (issue 31): the limiter's text, then the status.
      const first = limited.content[0]?.type === 'text' ? limited.content[0].text : '';
      expect(first).toMatch(
        /^rate limit exceeded \(general\); retry after \d+ s \(HTTP 429, rate_limited\)$/,
      );
      const rest = await fetch(`${fx.url}/api/dns?target=example.test`);
      expect(rest.status).toBe(429);
      await client.close();
    } finally {
      await fx.close();
    }
  }, 60_000);

  it('with protection on, a tool call needs the lookup session, the same cookie REST needs', async () => {
    const fx = await startFixtureApp({ challenge: true });
    try {
      const anonymous = await connect(fx.url);
      // Listing is discovery, not a lookup.
      expect((await anonymous.listTools()).tools.length).toBe(TOOLS.length);
      const refused = await call(anonymous, 'dns_lookup', { target: 'example.test' });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/lookup session is required.*challenge_required/);
      await anonymous.close();

      const verify = await fetch(`${fx.url}/api/challenge/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: 'pass:mcp-agent' }),
      });
      expect(verify.status).toBe(200);
      const cookie = verify.headers.get('set-cookie')!.split(';')[0]!;
      const verified = await connect(fx.url, { cookie });
      const answered = await call(verified, 'dns_lookup', { target: 'example.test' });
      expect(answered.isError, text(answered)).toBeFalsy();
      await verified.close();
    } finally {
      await fx.close();
    }
  }, 60_000);

  it('lets an agent the operator exempts by address (CHALLENGE_EXEMPT_CIDRS) call tools without a session', async () => {
    const fx = await startFixtureApp({ challenge: true, config: { challengeExemptCidrs: ['127.0.0.0/8'] } });
    try {
      const agent = await connect(fx.url);
      const answered = await call(agent, 'dns_lookup', { target: 'example.test' });
      expect(answered.isError, text(answered)).toBeFalsy();
      await agent.close();
    } finally {
      await fx.close();
    }
  }, 60_000);
});
