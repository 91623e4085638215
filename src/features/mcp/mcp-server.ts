/**
 * The MCP server: the lookup tools (features/tools) over the Model Context Protocol, with
 * the official SDK. One Server per caller: over HTTP one per request (the stateless
 * Streamable HTTP transport keeps nothing between calls), over stdio one per process.
 *
 * The low-level `Server`, not `McpServer`: the tools' input schemas are the routes' own
 * JSON Schemas (TypeBox), which McpServer would want restated in zod.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { CONTRACT_VERSION } from '../../plugins/openapi.js';
import { type Caller, callRoute, errorText, type ToolArguments } from '../tools/call-route.js';
import { type ToolDefinition, toolDefinitions } from '../tools/catalog.js';
import { missingDefaults } from '../tools/defaults.js';

const INSTRUCTIONS =
  'netdiag answers network-diagnostics questions about public names and addresses: DNS records, email ' +
  'authentication (SPF, DMARC, DKIM, MTA-STS, BIMI) and the mail servers themselves, registration data (RDAP), ' +
  'TLS certificates, HTTP security, certificate-transparency history, subdomains, one DNS question from ten ' +
  'countries, and IP facts. Every provider-backed answer names its source (`source`, `providers_tried`). Tools ' +
  'are read-only and reach the public internet; expensive ones (live measurements) have a smaller rate limit. ' +
  'Private and special-use addresses are refused. A tool error carries the API error text; HTTP 429 says when ' +
  'to retry.';

/** Tool list per app, built once: the routes do not change after the app is ready. */
const listed = new WeakMap<FastifyInstance, { tools: Tool[]; byName: Map<string, ToolDefinition> }>();

function toolsOf(app: FastifyInstance) {
  let entry = listed.get(app);
  if (entry === undefined) {
    const definitions = toolDefinitions(app);
    entry = {
      tools: definitions.map((d) => ({
        name: d.spec.name,
        title: d.spec.title,
        description: d.description,
        inputSchema: d.inputSchema,
        ...(d.outputSchema === undefined ? {} : { outputSchema: d.outputSchema }),
        annotations: {
          title: d.spec.title,
          readOnlyHint: true,
          // Reaches the world: DNS resolvers, RDAP servers, CT logs, the named hosts themselves.
          openWorldHint: true,
          destructiveHint: false,
          idempotentHint: true,
        },
      })),
      byName: new Map(definitions.map((d) => [d.spec.name, d])),
    };
    listed.set(app, entry);
  }
  return entry;
}

/**
 * The result of one tool call: the route's JSON as structured content, its summary as text.
 * A route error is a tool error whose text is the error and then the route's error body as
 * JSON: not structured content, which clients check against the output schema (the SDK's
 * client does, error or not), and an error body is not the answer that schema describes.
 */
export async function runTool(
  app: FastifyInstance,
  definition: ToolDefinition,
  args: ToolArguments,
  caller: Caller,
): Promise<CallToolResult> {
  const filled = { ...args, ...missingDefaults(definition.spec, args) };
  const answer = await callRoute(app, definition.spec, filled, caller);
  if (answer.status === 200 && typeof answer.body === 'object' && answer.body !== null) {
    const body = answer.body as Record<string, unknown>;
    return { content: [{ type: 'text', text: definition.spec.summarize(body) }], structuredContent: body };
  }
  return {
    isError: true,
    content: [
      { type: 'text', text: errorText(answer) },
      ...(typeof answer.body === 'object' && answer.body !== null
        ? [{ type: 'text' as const, text: JSON.stringify(answer.body) }]
        : []),
    ],
  };
}

/** What the SDK's schemas (zod) report of a mismatch. */
interface ZodLikeError {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}

/**
 * A request's params, checked: malformed params are the caller's fault, JSON-RPC's -32602
 * (invalid params), not the -32603 (internal error) the SDK answers when the schema a
 * handler is registered under refuses a request. So handlers are registered under their
 * method alone (`byMethod`) and check the params here.
 */
function paramsOf<T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: ZodLikeError } },
  request: unknown,
): T {
  const checked = schema.safeParse(request);
  if (checked.success) return checked.data;
  const issue = checked.error.issues[0];
  const where = issue?.path.map(String).join('.') ?? '';
  throw new McpError(
    ErrorCode.InvalidParams,
    `invalid params: ${where ? `${where}: ` : ''}${issue?.message}`,
  );
}

/**
 * `routed`: told when a tool call is handed to its route, which counts it against the
 * caller's budgets (the /mcp route counts every other message itself).
 */
export function createMcpServer(
  app: FastifyInstance,
  caller: Caller,
  hooks: { routed?: () => void } = {},
): Server {
  const server = new Server(
    { name: 'netdiag', title: 'netdiag network diagnostics', version: CONTRACT_VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  const byMethod = <S extends typeof ListToolsRequestSchema | typeof CallToolRequestSchema>(schema: S) =>
    schema.pick({ method: true }).loose();
  server.setRequestHandler(byMethod(ListToolsRequestSchema), (request) => {
    paramsOf(ListToolsRequestSchema, request);
    return { tools: toolsOf(app).tools };
  });
  // The SDK checks tools/call itself too (as -32602) before this handler runs.
  server.setRequestHandler(byMethod(CallToolRequestSchema), (raw) => {
    const request = paramsOf(CallToolRequestSchema, raw);
    const definition = toolsOf(app).byName.get(request.params.name);
    // The spec's answer to an unknown tool is a protocol error, not a tool result.
    if (definition === undefined) {
      throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${request.params.name}`);
    }
    hooks.routed?.();
    return runTool(app, definition, request.params.arguments ?? {}, caller);
  });
  return server;
}
