/**
 * `netdiag mcp --stdio`: the MCP server of /mcp (features/mcp/mcp-server.ts) over stdin and
 * stdout, for desktop agents that start their tools as processes. The app runs in this process
 * (logs on stderr: stdout is the protocol); the caller is the local machine, 127.0.0.1. It ends
 * when the agent closes stdin, or on SIGTERM / SIGINT.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from '../features/mcp/mcp-server.js';
import { type LocalApp, localCaller } from './local.js';

export async function serveMcpStdio(local: LocalApp, userAgent: string): Promise<void> {
  const server = createMcpServer(local.app, localCaller(userAgent));
  const transport = new StdioServerTransport();
  const ended = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await server.connect(transport);
  await ended;
  await server.close();
}
