/**
 * /mcp through the official SDK's own client over HTTP, against the whole app listening on
 * loopback with fixture upstreams (test/e2e/fixture-app.ts): the tool list, every tool
 * called, errors as tool results, the limiter shared with REST, the challenge gate.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/features/tools/catalog.js';
import { type FixtureApp, SPF_SENDER, startFixtureApp } from '../e2e/fixture-app.js';
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
      new RegExp(`^${fx.inspectHost}:443: TLSv1\\.3 .* trusted, matches the host name`),
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
    expect(result.structuredContent).toMatchObject({ error: expect.any(String) });
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

  it("refuses a browser request from another origin (DNS rebinding), accepts the server's own", async () => {
    const post = (origin: string) =>
      fetch(`${fx.url}/mcp`, {
        method: 'POST',
        headers: {
          origin,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const foreign = await post('http://evil.example');
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    expect((await post(fx.url)).status).toBe(200);
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

describe('MCP and REST share one rate limit and one challenge gate', () => {
  it('counts tool calls and REST calls against the same address budget; a 429 says when to retry', async () => {
    const fx = await startFixtureApp({ config: { rateLimitGeneral: { points: 3, seconds: 60 } } });
    try {
      const client = await connect(fx.url);
      // Discovery is not counted (like /openapi.json): only lookups are.
      await client.listTools();
      expect((await fetch(`${fx.url}/api/dns?target=example.test`)).status).toBe(200);
      expect((await call(client, 'dns_lookup', { target: 'example.test' })).isError).toBeFalsy();
      expect((await fetch(`${fx.url}/api/dns?target=example.test`)).status).toBe(200);
      const limited = await call(client, 'dns_lookup', { target: 'example.test' });
      expect(limited.isError).toBe(true);
      expect(text(limited)).toMatch(/HTTP 429: retry after \d+ s/);
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
