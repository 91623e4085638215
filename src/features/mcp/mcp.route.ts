/**
 * /mcp: the lookup tools for AI agents over MCP's Streamable HTTP transport, stateless
 * (no session between calls; docs/mcp.md). POST carries one JSON-RPC message and is
 * answered with one JSON response (or 202 for a notification); GET and DELETE answer 405,
 * as the transport spec says a server without a standalone SSE stream or sessions does.
 *
 * Every message costs what any request costs. A tools/call is answered by the route it
 * names with the caller's address and Cookie, so the rate limit (shared with REST) and,
 * when protection is on, the challenge gate apply to it exactly as to the REST call, and
 * it is counted there, once. Every other message (initialize, tools/list, notifications,
 * and a tool call no route answered) is counted here against the general budget; like
 * /openapi.json, discovery is not gated.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../../api-schema.js';
import type { AppContext } from '../../context.js';
import { clientIp } from '../../plugins/client-address.js';

/**
 * The MCP SDK, with the zod it validates with, is loaded by the first /mcp request: about
 * 1.3 MB of source and the heap its modules build, which a process that never serves /mcp
 * would otherwise carry from its start (docs/performance.md, memory).
 */
let sdk:
  | Promise<{
      createMcpServer: typeof import('./mcp-server.js').createMcpServer;
      Transport: typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').WebStandardStreamableHTTPServerTransport;
    }>
  | undefined;
function loadSdk() {
  sdk ??= Promise.all([
    import('./mcp-server.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]).then(([server, transport]) => ({
    createMcpServer: server.createMcpServer,
    Transport: transport.WebStandardStreamableHTTPServerTransport,
  }));
  return sdk;
}

const JsonRpcMessage = Type.Object(
  { jsonrpc: Type.Literal('2.0') },
  {
    additionalProperties: true,
    description:
      'One JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, ...).',
  },
);

const DESCRIPTION =
  'Model Context Protocol endpoint (Streamable HTTP, stateless): the tools dns_lookup, email_security, ' +
  'spf_check, mail_tls, rdap_lookup, tls_certificate, inspect_host, ct_certificates, subdomains, global_dns, ' +
  'ip_geo, ip_privacy and my_ip, each answered by its /api route (same limits, challenge gate, cache and ' +
  'attribution). Send `Accept: application/json, text/event-stream`. JSON-RPC errors are answered in ' +
  'JSON-RPC form, as the transport requires.';

/** Node's header object as Fetch headers (repeated headers joined, as Fetch does). */
function fetchHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return headers;
}

function jsonRpcError(reply: FastifyReply, status: 403 | 405, message: string) {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .send({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

/**
 * The transport spec asks servers to refuse a request whose Origin is present and not
 * theirs: a page that reached this service by DNS rebinding sends its own Origin and the
 * Host it was rebound to, so the two agree, and only a list the operator configured
 * (MCP_ALLOWED_ORIGINS, PUBLIC_ORIGIN, else loopback; config/index.ts) tells the service's
 * own pages from it. MCP clients that are not browsers send no Origin.
 */
function foreignOrigin(request: FastifyRequest, allowed: ReadonlySet<string>): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  try {
    return !allowed.has(new URL(origin).origin);
  } catch {
    // `null` (an opaque origin: a sandboxed frame, a file) or garbage.
    return true;
  }
}

export default async function mcpRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const allowedOrigins = new Set(ctx.config.mcpAllowedOrigins);
  app.post(
    '/mcp',
    {
      schema: {
        tags: ['mcp'],
        summary: 'MCP tools for AI agents (Streamable HTTP transport, stateless)',
        description: DESCRIPTION,
        body: JsonRpcMessage,
        response: {
          200: { description: 'The JSON-RPC response.', type: 'object', additionalProperties: true },
          202: { description: 'A notification or response was accepted; no body.', type: 'null' },
          400: {
            description: 'Not a valid JSON-RPC message (JSON-RPC error).',
            type: 'object',
            additionalProperties: true,
          },
          403: {
            description:
              'Origin is present and not one MCP_ALLOWED_ORIGINS allows (JSON-RPC error; DNS rebinding).',
            type: 'object',
            additionalProperties: true,
          },
          406: {
            description: 'Accept does not list application/json and text/event-stream (JSON-RPC error).',
            type: 'object',
            additionalProperties: true,
          },
          ...errorResponses(429),
        },
      },
    },
    async (request, reply) => {
      const foreign = foreignOrigin(request, allowedOrigins);
      const toolCall = (request.body as { method?: unknown }).method === 'tools/call';
      // Counted before it is answered, as /api counts; a tool call is counted by its route.
      if (foreign || !toolCall) await app.rateLimits.charge(request, reply);
      if (foreign) {
        return jsonRpcError(
          reply,
          403,
          `Origin ${request.headers.origin?.slice(0, 200)} is not one this server accepts`,
        );
      }
      let routed = false;
      const { createMcpServer, Transport } = await loadSdk();
      const server = createMcpServer(
        app,
        {
          ip: clientIp(request),
          cookie: request.headers.cookie,
          userAgent: request.headers['user-agent'],
          requestId: request.id,
        },
        {
          routed: () => {
            routed = true;
          },
        },
      );
      const transport = new Transport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      transport.onerror = (err) => request.log.debug({ err }, 'mcp transport error');
      try {
        await server.connect(transport);
        const url = `http://${request.host}${request.url}`;
        const response = await transport.handleRequest(
          new Request(url, { method: 'POST', headers: fetchHeaders(request) }),
          { parsedBody: request.body },
        );
        // A tool call that reached no route (malformed, an unknown tool, refused by the
        // transport) was counted nowhere: it is counted now, answered or refused (429).
        if (toolCall && !routed) await app.rateLimits.charge(request, reply);
        // The transport's own statuses (its errors are JSON-RPC bodies); the text is sent as it wrote it.
        reply.code(response.status as 200).header('cache-control', 'no-store');
        response.headers.forEach((value, name) => {
          reply.header(name, value);
        });
        const text = await response.text();
        return reply.send(text === '' ? undefined : text);
      } finally {
        await server.close();
      }
    },
  );
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      schema: {
        tags: ['mcp'],
        summary: `${method} is not offered: the MCP endpoint is stateless (405)`,
        response: {
          405: { description: 'JSON-RPC error; Allow: POST.', type: 'object', additionalProperties: true },
        },
      },
      handler: (_request, reply) =>
        jsonRpcError(
          reply.header('allow', 'POST'),
          405,
          'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages',
        ),
    });
  }
}
