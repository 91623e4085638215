/**
 * The lookups as tools: one list that the MCP endpoint (/mcp, and `netdiag mcp --stdio`)
 * and the `netdiag` CLI both read. A tool is a route and little more: its input and output
 * schemas and its cost are taken from the route's own options (app.routeTable), and a call
 * is answered by the route itself (call-route.ts), so limits, the challenge gate, the cache
 * and attribution apply exactly as they do over REST. What a tool adds is said here: a short
 * description for agents, and the defaults it fills in (defaults.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { RouteEntry } from '../../app.js';
import { type Summarize, summaries } from './summaries.js';
import { type JsonSchemaObject, toolInputSchema, toolOutputSchema } from './tool-schemas.js';

export interface ToolSpec {
  /** The MCP tool name. */
  readonly name: string;
  /** The CLI command (`netdiag <command> ...`). */
  readonly command: string;
  readonly title: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /**
   * What the tool answers and when to use it, for an agent choosing among the tools: a few
   * sentences. How the route works (upstreams, fallbacks, caching, operator settings) is the
   * route's OpenAPI description and docs/, not every agent's context.
   */
  readonly description: string;
  /** Enumerated parameters the route accepts in any case (its preValidation folds them). */
  readonly caseInsensitive?: readonly string[];
  /** One or two sentences a model (or a person on a terminal) reads first. */
  readonly summarize: Summarize;
}

const LIST = [
  {
    name: 'dns_lookup',
    command: 'dns',
    title: 'DNS lookup',
    method: 'GET',
    path: '/api/dns',
    description:
      'DNS records of one type for a name (A by default; PTR takes an IP address), with the response code ' +
      '(NOERROR, NXDOMAIN, ...) and the resolver’s AD flag (its DNSSEC verdict, not netdiag’s own validation, ' +
      'GET /api/dnssec). Use it for any question about what DNS says now; for whether the whole world sees the same ' +
      'answer, use global_dns.',
    caseInsensitive: ['type'],
  },
  {
    name: 'dnssec_validate',
    command: 'dnssec',
    title: 'DNSSEC validation',
    method: 'GET',
    path: '/api/dnssec',
    description:
      'Validates DNSSEC for a name and type (A by default) itself, from the root trust anchor down: secure, ' +
      'insecure (where the chain of trust ends), bogus (the first broken link, its zone and reason, e.g. ' +
      "signature_expired) or indeterminate, with each zone's DS, DNSKEY and signature windows. Use it when a " +
      'name fails only at validating resolvers (SERVFAIL) or to check a signed zone or TLSA record; dns_lookup ' +
      "only repeats a resolver's AD flag.",
  },
  {
    name: 'email_security',
    command: 'email',
    title: 'Email security',
    method: 'GET',
    path: '/api/email-security',
    description:
      "Scores a domain's email authentication and transport security 0–100 with a grade: MX, SPF, DMARC, " +
      'DKIM, MTA-STS, TLS-RPT, BIMI and DNSSEC (netdiag’s own validation: a broken chain is named, not an ' +
      'error), each with its points, the rules behind them and what to fix first. Use ' +
      'it to audit how a domain sends and receives mail; give `selector` when you know its DKIM selector.',
  },
  {
    name: 'spf_check',
    command: 'spf',
    title: 'SPF check',
    method: 'GET',
    path: '/api/spf',
    description:
      "Would mail from this IP address, as this sender, pass SPF? Evaluates the domain's SPF policy (RFC 7208 " +
      'check_host) and returns the result (pass, fail, softfail, neutral, none, temperror, permerror) with a ' +
      'trace of every record and term; a temperror caused by broken DNSSEC names the broken link. Use it to ' +
      'explain a delivery failure or test an SPF change; the address ' +
      'is only compared, never contacted.',
  },
  {
    name: 'mail_tls',
    command: 'mail-tls',
    title: 'Mail servers',
    method: 'GET',
    path: '/api/mail-tls',
    description:
      "Tests a domain's mail servers live: for each MX host an SMTP session on port 25 with STARTTLS, the " +
      'certificate, DANE and whether a sender enforcing MTA-STS would deliver. No mail is sent. Use it when the ' +
      'question is whether mail reaches the domain over TLS; email_security covers the DNS records.',
  },
  {
    name: 'rdap_lookup',
    command: 'rdap',
    title: 'Registration (RDAP)',
    method: 'GET',
    path: '/api/rdap',
    description:
      'Registration data (RDAP) of a domain or an IP address: registrar, status, registration and expiry ' +
      'dates, name servers and contacts as published; for an address its network block and holder. Use it ' +
      'for who registered or holds something and when it expires. `type` is inferred from `target` when left out.',
    caseInsensitive: ['type'],
  },
  {
    name: 'tls_certificate',
    command: 'tls',
    title: 'TLS certificate',
    method: 'GET',
    path: '/api/tls',
    description:
      'The certificate chain and TLS parameters a host serves on port 443, from one live handshake: protocol, ' +
      'cipher, issuer, validity dates, whether it is trusted and matches the name, and findings by severity. ' +
      'Use it for certificate expiry, chain or TLS configuration questions.',
  },
  {
    name: 'tls_scan',
    command: 'tls-scan',
    title: 'TLS scan',
    method: 'GET',
    path: '/api/tls-scan',
    description:
      'Scans what a web server (port 443) or mail server (`service` smtp: port 25, STARTTLS) accepts: every ' +
      "protocol from SSLv2 to TLS 1.3, each cipher suite in the server's order, key-exchange groups " +
      '(post-quantum hybrids too), a certificate per key type, the OCSP staple and TLS features, with ' +
      'findings, a grade and the Mozilla and NCSC-NL ratings. Takes seconds; use tls_certificate for the ' +
      'certificate alone.',
  },
  {
    name: 'message_analyze',
    command: 'message',
    title: 'Message analysis',
    method: 'POST',
    path: '/api/message',
    description:
      'Judges one e-mail message (raw RFC 5322 text, or its headers alone): verifies each DKIM ' +
      'signature and the ARC chain, checks SPF for the connecting `ip` (else read from the Received ' +
      "headers) and the From domain's DMARC, with the hops and their delays and whether the message's " +
      'own Authentication-Results can be trusted. Use it for "did this mail come from who it says?"; ' +
      'email_security audits a domain.',
  },
  {
    name: 'blocklists_check',
    command: 'blocklists',
    title: 'Blocklists',
    method: 'GET',
    path: '/api/blocklists',
    description:
      'Is an `ip` (or a `domain`, and its MX hosts’ addresses) on DNS blocklists? Per list: listed (the ' +
      'list’s meaning of its code, the TXT reason, the delisting page), not_listed, refused (the list ' +
      'declined to answer: never a listing), error, or broken (fails its test points: not counted). Give ' +
      'one of ip or domain. Use it for "is my mail server blacklisted?".',
  },
  {
    name: 'inspect_host',
    command: 'inspect',
    title: 'Inspect host',
    method: 'GET',
    path: '/api/inspect',
    description:
      'Fetches http:// and https:// of a public host and reports the redirect chain, the final response, its ' +
      'security headers graded A+ to F, the TLS evidence and the network (addresses, reverse DNS, AS). Use it ' +
      'for whether a site is up, where it redirects and whether its security headers are right.',
  },
  {
    name: 'ct_certificates',
    command: 'certificates',
    title: 'Certificate transparency',
    method: 'GET',
    path: '/api/certificates',
    description:
      'Certificates issued for a domain and the names below it, as logged in Certificate Transparency, newest ' +
      'first (`truncated` and `gaps` say when the list is not the whole history). Use it for issuance history: ' +
      'which CAs issued what, when, for which names. A logged certificate need not be served.',
  },
  {
    name: 'subdomains',
    command: 'subdomains',
    title: 'Subdomains',
    method: 'GET',
    path: '/api/subdomains',
    description:
      'Host names below a domain found in its Certificate Transparency history, the 50 most recent resolved ' +
      'now (active, wildcard or not resolving). Use it to discover public names; names that never had a ' +
      'publicly logged certificate do not appear.',
  },
  {
    name: 'global_dns',
    command: 'global-dns',
    title: 'Global DNS',
    method: 'POST',
    path: '/api/global-dns',
    description:
      'Asks one DNS question (`type` A by default) from resolvers in ten countries and says whether they all ' +
      'see the same answer. Takes up to about 20 s. Use it after a DNS change (propagation) or for geo-DNS and ' +
      'CDN answers; for one answer, dns_lookup is faster.',
    caseInsensitive: ['type'],
  },
  {
    name: 'ip_geo',
    command: 'ip-geo',
    title: 'IP geolocation',
    method: 'GET',
    path: '/api/ip-geo',
    description:
      'Approximate location and network of a public IP address: country, region, city, AS number and ' +
      'organization. It describes the network, never a device or a home. Use it for where an address is and ' +
      'who runs its network.',
  },
  {
    name: 'ip_privacy',
    command: 'ip-privacy',
    title: 'IP privacy relay',
    method: 'GET',
    path: '/api/ip-privacy',
    description:
      'Whether a public IP address is a published relay exit (iCloud Private Relay, Tor). Use it to tell a ' +
      "relay user's address from the user's own; no match does not rule out a VPN or another proxy.",
  },
  {
    name: 'my_ip',
    command: 'my-ip',
    title: 'My IP',
    method: 'GET',
    path: '/api/my-ip',
    description:
      'The address this service sees the caller connect from (127.0.0.1 over stdio), with its location, AS ' +
      "and relay classification. Use it to learn the agent's own public address.",
  },
] as const satisfies readonly Omit<ToolSpec, 'summarize'>[];

export type ToolName = (typeof LIST)[number]['name'];

export const TOOLS: readonly ToolSpec[] = LIST.map((tool) => ({ ...tool, summarize: summaries[tool.name] }));

export function toolNamed(name: string): ToolSpec | undefined {
  return TOOLS.find((tool) => tool.name === name);
}

export function toolForCommand(command: string): ToolSpec | undefined {
  return TOOLS.find((tool) => tool.command === command);
}

export interface ToolDefinition {
  spec: ToolSpec;
  description: string;
  inputSchema: JsonSchemaObject;
  /** What a successful call's structured content conforms to: the route's 200 response schema. */
  outputSchema: JsonSchemaObject | undefined;
  expensive: boolean;
}

/**
 * A POST route's JSON body schema: the schema itself, or, for a route that also takes a raw body
 * (POST /api/message: the message as message/rfc822), its `application/json` content's. A tool
 * is called with JSON arguments.
 */
function jsonBody(body: unknown): unknown {
  const content = (body as { content?: Record<string, { schema?: unknown }> } | undefined)?.content;
  return content === undefined ? body : content['application/json']?.schema;
}

function routeOf(app: FastifyInstance, spec: ToolSpec): RouteEntry | undefined {
  return app.routeTable.find((route) => route.method === spec.method && route.url === spec.path);
}

/**
 * The tools this app serves, with their routes' schemas: a route that is not registered
 * (a feature switched off) is not offered. The description ends with what a call costs,
 * in this deployment's own limits.
 */
export function toolDefinitions(app: FastifyInstance): ToolDefinition[] {
  const [general, expensive] = app.rateLimits.tiers();
  const out: ToolDefinition[] = [];
  for (const spec of TOOLS) {
    const route = routeOf(app, spec);
    if (route?.schema === undefined) continue;
    const { querystring, body, response } = route.schema as {
      querystring?: unknown;
      body?: unknown;
      response?: unknown;
    };
    const cost = route.expensive
      ? `Cost: a live measurement, counted against the expensive limit (${expensive?.limit} per ` +
        `${expensive?.window_seconds} s per client address) and the general limit (${general?.limit} per ` +
        `${general?.window_seconds} s).`
      : `Cost: counted against the general limit (${general?.limit} per ${general?.window_seconds} s per ` +
        'client address).';
    out.push({
      spec,
      description: `${spec.description} ${cost}`,
      inputSchema: toolInputSchema(spec, spec.method === 'GET' ? querystring : jsonBody(body)),
      outputSchema: toolOutputSchema(response),
      expensive: route.expensive,
    });
  }
  return out;
}
