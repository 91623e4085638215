/**
 * Lookups sent to a netdiag instance (`--api URL`, or NETDIAG_API) through the typed client,
 * netdiag/client: the same routes over HTTP, answered under that instance's limits and gate.
 */
import { createNetdiagClient } from '../client/index.js';
import { queryOf, type RawBody } from '../features/tools/call-route.js';
import type { ToolSpec } from '../features/tools/catalog.js';
import type { Answer } from './answer.js';
import { UsageError } from './args.js';

export function apiBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--api: "${url}" is not a URL (e.g. https://netdiag.example)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`--api: "${url}" is not an http(s) URL`);
  }
  return parsed.origin + parsed.pathname.replace(/\/+$/, '');
}

export async function askRemote(
  baseUrl: string,
  tool: ToolSpec,
  args: Record<string, unknown>,
  userAgent: string,
  signal: AbortSignal,
  raw?: RawBody,
): Promise<Answer> {
  const client = createNetdiagClient({ baseUrl, headers: { 'user-agent': userAgent } });
  const input =
    tool.method === 'GET' || raw
      ? { query: queryOf(args), signal, ...(raw ? { raw } : {}) }
      : { body: args, signal };
  const { status, body, retryAfter } = await client.call(tool.method, tool.path, input);
  return { status, body, retryAfter };
}
