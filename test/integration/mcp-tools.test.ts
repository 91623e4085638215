/**
 * The tools as an agent developer's client sees them (issue 31 §5), through the official SDK
 * client over HTTP against the whole app on fixture upstreams: every tool declares its output
 * schema, which the client compiles (Ajv) and checks every structured result against; the
 * first natural call of global_dns and rdap_lookup, without `type`, is answered; enumerations
 * take what the routes take (`mx` as well as `MX`); route errors stay outside the schema.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/features/tools/catalog.js';
import { type FixtureApp, SPF_SENDER, startFixtureApp } from '../e2e/fixture-app.js';
import { bindHierarchyUnavailable } from '../fakes/bind-hierarchy.js';
import { SCAN_SERVER_SUITES } from '../fakes/tls-scan-server.js';
import { hasShared } from '../shared-data.js';

const bindUnavailable = bindHierarchyUnavailable();
if (bindUnavailable) console.warn(`mcp-tools: dnssec_validate not called: ${bindUnavailable}`);

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('MCP tools for agent developers (issue 31 §5)', () => {
  let fx: FixtureApp;
  let client: Client;
  let tools: Tool[];
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const tool = (name: string) => tools.find((t) => t.name === name)!;

  beforeAll(async () => {
    // The signed hierarchy, where it can run, is the DNS engine's root for dnssec_validate.
    fx = await startFixtureApp({ dnssec: bindUnavailable === undefined });
    client = new Client({ name: 'netdiag-agent-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', fx.url)));
    // Listing is what makes the SDK client compile the output schemas and check every
    // structured result against them (it throws on a result that does not conform).
    tools = (await client.listTools()).tools;
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await fx?.close();
  });

  it('declares an output schema for every tool: the route’s 200 schema, an object, plain JSON Schema', () => {
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    for (const t of tools) {
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(Object.keys(t.outputSchema?.properties ?? {}).length, t.name).toBeGreaterThan(0);
      // OpenAPI's keyword on the tagged unions (RDAP's registrar, inspect's parts) is left out.
      expect(JSON.stringify(t.outputSchema), t.name).not.toMatch(/"discriminator"/);
    }
    expect(tool('dns_lookup').outputSchema?.required).toEqual(
      expect.arrayContaining(['target', 'type', 'rcode', 'records', 'source', 'providers_tried']),
    );
  });

  it('tells an agent what each tool answers in a few sentences, without operator settings', () => {
    for (const t of tools) {
      expect(t.description?.length, t.name).toBeLessThan(600);
      expect(t.description, t.name).not.toMatch(/[A-Z]{3,}_[A-Z_]+/);
    }
    const total = tools.reduce((n, t) => n + (t.description?.length ?? 0), 0);
    expect(total).toBeLessThan(13 * 600);
  });

  it('answers with structured content the SDK client checks against the output schema', async () => {
    const dns = await call('dns_lookup', { target: 'example.test', type: 'MX' });
    expect(dns.isError, text(dns)).toBeFalsy();
    const validate = new AjvJsonSchemaValidator().getValidator(tool('dns_lookup').outputSchema!);
    expect(validate(dns.structuredContent).valid).toBe(true);
    // The schema is a real one: the answer without a required field does not conform.
    const { rcode: _, ...withoutRcode } = dns.structuredContent as Record<string, unknown>;
    expect(validate(withoutRcode).valid).toBe(false);
    for (const [name, args] of [
      ['email_security', { domain: 'example.test' }],
      ['spf_check', { ip: '198.51.100.7', sender: SPF_SENDER }],
      ['ct_certificates', { domain: 'example.com' }],
      ['subdomains', { domain: 'example.com' }],
      ['ip_geo', { ip: '172.224.226.34' }],
      ['my_ip', {}],
    ] as const) {
      const result = await call(name, args);
      expect(result.isError, `${name}: ${text(result)}`).toBeFalsy();
      expect(result.structuredContent, name).toBeDefined();
    }
  });

  it('calls global_dns without `type`: A, as the CLI and the site ask', async () => {
    const schema = tool('global_dns').inputSchema;
    expect(schema.required).toEqual(['target']);
    expect(schema.properties?.type).toMatchObject({ default: 'A' });
    const result = await call('global_dns', { target: 'cdn.jsdelivr.net' });
    expect(result.isError, text(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ target: 'cdn.jsdelivr.net', type: 'A' });
    expect(text(result)).toMatch(/^cdn\.jsdelivr\.net A from 10 countries: /);
  });

  it.skipIf(!hasShared)('calls rdap_lookup without `type`: a name is a domain query', async () => {
    expect(tool('rdap_lookup').inputSchema.required).toEqual(['target']);
    const result = await call('rdap_lookup', { target: 'google.com' });
    expect(result.isError, text(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ type: 'domain' });
    expect(text(result)).toMatch(/^google\.com \(domain\): registrar /);
  });

  it('calls rdap_lookup without `type` for an address as an ip query', async () => {
    // The fixture registries hold no address; the route's own 400 shows it was asked type=ip.
    const result = await call('rdap_lookup', { target: '10.1.2.3' });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/10\.1\.2\.3 is not a public address/);
  });

  it('takes enumerations in either case, as the routes do', async () => {
    for (const [name, values] of [
      ['dns_lookup', ['MX', 'mx']],
      ['global_dns', ['AAAA', 'aaaa']],
      ['rdap_lookup', ['domain', 'DOMAIN']],
    ] as const) {
      expect(tool(name).inputSchema.properties?.type, name).toMatchObject({
        enum: expect.arrayContaining([...values]),
      });
    }
    const mx = await call('dns_lookup', { target: 'example.test', type: 'mx' });
    expect(mx.isError, text(mx)).toBeFalsy();
    expect(mx.structuredContent).toMatchObject({ type: 'MX' });
    if (hasShared) {
      const upper = await call('rdap_lookup', { target: 'google.com', type: 'DOMAIN' });
      expect(upper.isError, text(upper)).toBeFalsy();
    }
  });

  it.skipIf(bindUnavailable !== undefined)(
    'calls dnssec_validate with the name alone (type A): the verdict first, the chain as structured content',
    async () => {
      const validate = new AjvJsonSchemaValidator().getValidator(tool('dnssec_validate').outputSchema!);
      const secure = await call('dnssec_validate', { target: 'www.secure.test' });
      expect(secure.isError, text(secure)).toBeFalsy();
      expect(validate(secure.structuredContent).valid).toBe(true);
      expect(secure.structuredContent).toMatchObject({ type: 'A', status: 'secure', reason: null });
      expect(text(secure)).toMatch(
        /^www\.secure\.test A is secure: every link from the trust anchor down to secure\.test verified\. Chain: \. secure, test secure, secure\.test secure\./,
      );
      // A broken chain is an answer, not a tool error: the first broken link, named.
      const bogus = await call('dnssec_validate', { target: 'www.expired.test', type: 'a' });
      expect(bogus.isError, text(bogus)).toBeFalsy();
      expect(bogus.structuredContent).toMatchObject({
        status: 'bogus',
        reason: { code: 'signature_expired', zone: 'expired.test' },
      });
      expect(text(bogus)).toMatch(
        /^www\.expired\.test A is bogus: the chain breaks at expired\.test \(signature_expired\)/,
      );
    },
  );

  it('calls tls_scan with the target alone (https): the verdict sentence first, the scan as structured content', async (t) => {
    if (!fx.scanHost) t.skip('the scan target needs port 443 (root)');
    expect(tool('tls_scan').inputSchema.properties).toHaveProperty('service');
    const result = await call('tls_scan', { target: fx.scanHost });
    expect(result.isError, text(result)).toBeFalsy();
    expect(text(result)).toMatch(
      /^www\.scan\.test \(HTTPS\) is graded [A-FT]\+?.*: it meets .+, and the NCSC-NL guidelines rate it .+\. Protocols: TLSv1\.3, TLSv1\.2; 5 cipher suites/,
    );
    const scan = (result.structuredContent as { scan: Record<string, unknown> }).scan;
    expect(scan).toMatchObject({
      status: 'ok',
      service: 'https',
      port: 443,
      server_preference: { 'TLSv1.2': true },
    });
    const names = (scan.cipher_suites as { protocol: string; name: string }[])
      .filter((s) => s.protocol === 'TLSv1.2')
      .map((s) => s.name);
    expect(names).toEqual(SCAN_SERVER_SUITES['TLSv1.2']);
    // A mail server that is not there is an answer about it, not a tool error.
    const smtp = await call('tls_scan', { target: fx.scanHost, service: 'smtp' });
    expect(smtp.isError, text(smtp)).toBeFalsy();
    expect(text(smtp)).toMatch(/^www\.scan\.test \(SMTP with STARTTLS\) could not be scanned: /);
  }, 60_000);

  // Issue 34: the message analyzer, its JSON body (the route also takes a raw one) as the tool's input.
  it('calls message_analyze with a message and who connected: the verdict sentence first, the analysis as structured content', async () => {
    const input = tool('message_analyze').inputSchema;
    expect(Object.keys(input.properties ?? {}).sort()).toEqual(['helo', 'ip', 'mail_from', 'message']);
    expect(input.required).toEqual(['message']);
    const message = [
      'From: Alice <alice@sender.test>',
      'To: bob@receiver.test',
      'Subject: hi',
      '',
      'Hello.',
      '',
    ].join('\r\n');
    const result = await call('message_analyze', { message, ip: '198.51.100.7', mail_from: SPF_SENDER });
    expect(result.isError, text(result)).toBeFalsy();
    const analysis = result.structuredContent as {
      verdict: { summary: string };
      envelope: Record<string, unknown>;
      spf: { result: string } | null;
    };
    expect(text(result).startsWith(analysis.verdict.summary)).toBe(true);
    expect(text(result)).toMatch(/ DKIM \S+, ARC \S+, SPF pass, DMARC \S+\./);
    expect(text(result)).toContain('connecting: 198.51.100.7, MAIL FROM <alice@sender.test>;');
    expect(analysis.envelope).toMatchObject({ ip: '198.51.100.7', mail_from: SPF_SENDER, source: 'given' });
    expect(analysis.spf?.result).toBe('pass');
    // An empty message is the route's 400, as a tool error.
    const empty = await call('message_analyze', { message: ' ' });
    expect(empty.isError).toBe(true);
    expect(text(empty)).toMatch(/message.*empty.*HTTP 400/);
  }, 60_000);

  it('calls blocklists_check with an ip or a domain: the answer’s summary first, every list an answer (error without list servers)', async () => {
    const input = tool('blocklists_check').inputSchema;
    expect(Object.keys(input.properties ?? {}).sort()).toEqual(['domain', 'ip']);
    expect(input.required ?? []).toEqual([]);
    // The fixtures serve no list: the engine's root (the signed test hierarchy here, where BIND
    // runs, else an address where nothing answers) knows none of the lists' zones, so no list
    // gives a usable answer: each is `error`, or `broken` where its test points are NXDOMAIN too.
    const ip = await call('blocklists_check', { ip: '1.1.1.1' });
    expect(ip.isError, text(ip)).toBeFalsy();
    const answer = ip.structuredContent as {
      summary: string;
      listed_count: number;
      lists: { status: string }[];
      mx: unknown;
    };
    expect(text(ip).startsWith(answer.summary)).toBe(true);
    expect(answer.lists.length).toBeGreaterThan(0);
    expect(answer.listed_count).toBe(0);
    for (const l of answer.lists) expect(['error', 'broken']).toContain(l.status);
    expect(text(ip)).toMatch(/ Lists: \d+ (no answer|broken)(, \d+ broken)?\.$/);
    expect(answer.mx).toBeNull();
    const domain = await call('blocklists_check', { domain: 'sender.test' });
    expect(domain.isError, text(domain)).toBeFalsy();
    expect((domain.structuredContent as { mx: { host: string }[] }).mx.map((h) => h.host)).toEqual([
      'mx.sender.test',
    ]);
    expect(text(domain)).toMatch(
      /MX addresses: mx\.sender\.test 192\.0\.2\.25 listed on none of 0 usable lists/,
    );
    // A private address is the route's 400, as a tool error.
    const refused = await call('blocklists_check', { ip: '10.0.0.1' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/HTTP 400/);
  }, 60_000);

  it('answers a route error as a tool error with the error body as text, not as structured content', async () => {
    // Structured content would be checked against the output schema, which an error body is not.
    const result = await call('dns_lookup', { target: 'example.test', type: 'NOPE' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/type.*HTTP 400/) });
    const body = result.content[1];
    expect(body?.type).toBe('text');
    expect(JSON.parse(body?.type === 'text' ? body.text : '')).toMatchObject({ error: expect.any(String) });
  });
});
