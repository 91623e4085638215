/**
 * The lookups as tools: one list that the MCP endpoint (/mcp, and `netdiag mcp --stdio`)
 * and the `netdiag` CLI both read. A tool is a route and nothing more: its input schema,
 * description and cost are taken from the route's own options (app.routeTable), and a
 * call is answered by the route itself (call-route.ts), so limits, the challenge gate,
 * the cache and attribution apply exactly as they do over REST.
 */
import type { FastifyInstance } from 'fastify';
import type { RouteEntry } from '../../app.js';
import { type Summarize, summaries } from './summaries.js';

export interface ToolSpec {
  /** The MCP tool name. */
  readonly name: string;
  /** The CLI command (`netdiag <command> ...`). */
  readonly command: string;
  readonly title: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** One or two sentences a model (or a person on a terminal) reads first. */
  readonly summarize: Summarize;
}

const LIST = [
  { name: 'dns_lookup', command: 'dns', title: 'DNS lookup', method: 'GET', path: '/api/dns' },
  {
    name: 'email_security',
    command: 'email',
    title: 'E-mail security',
    method: 'GET',
    path: '/api/email-security',
  },
  { name: 'spf_check', command: 'spf', title: 'SPF check', method: 'GET', path: '/api/spf' },
  { name: 'mail_tls', command: 'mail-tls', title: 'Mail servers', method: 'GET', path: '/api/mail-tls' },
  { name: 'rdap_lookup', command: 'rdap', title: 'Registration (RDAP)', method: 'GET', path: '/api/rdap' },
  { name: 'tls_certificate', command: 'tls', title: 'TLS certificate', method: 'GET', path: '/api/tls' },
  { name: 'inspect_host', command: 'inspect', title: 'Inspect host', method: 'GET', path: '/api/inspect' },
  {
    name: 'ct_certificates',
    command: 'certificates',
    title: 'Certificate transparency',
    method: 'GET',
    path: '/api/certificates',
  },
  { name: 'subdomains', command: 'subdomains', title: 'Subdomains', method: 'GET', path: '/api/subdomains' },
  { name: 'global_dns', command: 'global-dns', title: 'Global DNS', method: 'POST', path: '/api/global-dns' },
  { name: 'ip_geo', command: 'ip-geo', title: 'IP geolocation', method: 'GET', path: '/api/ip-geo' },
  {
    name: 'ip_privacy',
    command: 'ip-privacy',
    title: 'IP privacy relay',
    method: 'GET',
    path: '/api/ip-privacy',
  },
  { name: 'my_ip', command: 'my-ip', title: 'My IP', method: 'GET', path: '/api/my-ip' },
] as const satisfies readonly Omit<ToolSpec, 'summarize'>[];

export type ToolName = (typeof LIST)[number]['name'];

export const TOOLS: readonly ToolSpec[] = LIST.map((tool) => ({ ...tool, summarize: summaries[tool.name] }));

export function toolNamed(name: string): ToolSpec | undefined {
  return TOOLS.find((tool) => tool.name === name);
}

export function toolForCommand(command: string): ToolSpec | undefined {
  return TOOLS.find((tool) => tool.command === command);
}

/** A JSON Schema object (what TypeBox builds, without its symbol keys). */
export type JsonSchemaObject = {
  type: 'object';
  properties?: Record<string, object>;
  required?: string[];
} & Record<string, unknown>;

export interface ToolDefinition {
  spec: ToolSpec;
  description: string;
  inputSchema: JsonSchemaObject;
  expensive: boolean;
}

const NO_INPUT: JsonSchemaObject = { type: 'object', properties: {}, additionalProperties: false };

/** TypeBox schemas carry symbol-keyed metadata; tool clients get plain JSON. */
function plainJson(schema: unknown): JsonSchemaObject {
  return JSON.parse(JSON.stringify(schema)) as JsonSchemaObject;
}

function routeOf(app: FastifyInstance, spec: ToolSpec): RouteEntry | undefined {
  return app.routeTable.find((route) => route.method === spec.method && route.url === spec.path);
}

/**
 * The tools this app serves, described from its routes: a route that is not registered
 * (a feature switched off) is not offered. The description ends with what a call costs,
 * in this deployment's own limits.
 */
export function toolDefinitions(app: FastifyInstance): ToolDefinition[] {
  const [general, expensive] = app.rateLimits.tiers();
  const out: ToolDefinition[] = [];
  for (const spec of TOOLS) {
    const route = routeOf(app, spec);
    if (route?.schema === undefined) continue;
    const { summary, description, querystring, body } = route.schema as {
      summary?: string;
      description?: string;
      querystring?: unknown;
      body?: unknown;
    };
    const input = spec.method === 'GET' ? querystring : body;
    const cost = route.expensive
      ? `Cost: an expensive lookup (live measurement): counts against both the expensive limit ` +
        `(${expensive?.limit} per ${expensive?.window_seconds} s per client address) and the general one ` +
        `(${general?.limit} per ${general?.window_seconds} s).`
      : `Cost: counts against the general limit (${general?.limit} per ${general?.window_seconds} s per ` +
        'client address), shared with the REST API.';
    out.push({
      spec,
      description: [summary && `${summary}.`, description, cost].filter(Boolean).join(' '),
      inputSchema: input === undefined ? NO_INPUT : plainJson(input),
      expensive: route.expensive,
    });
  }
  return out;
}
