/**
 * Prometheus metrics on a listener of their own (METRICS_PORT on METRICS_HOST,
 * loopback by default), never on the public port: they describe the service's
 * traffic, its upstreams and its failures to its operator, not to its users.
 * With node:cluster the primary process serves them for every worker (server.ts).
 *
 * A plain node:http server: one path, no plugins, nothing a scrape could reach
 * beyond the text exposition format.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';

export interface MetricsListenerOptions {
  host: string;
  port: number;
  /** The exposition text (a registry's metrics(), or the cluster's aggregate). */
  collect: () => Promise<string>;
  contentType: string;
  log: Logger;
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}) {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(JSON.stringify({ error }));
}

export async function serveMetrics(opts: MetricsListenerOptions): Promise<MetricsListener> {
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics')
      return sendJson(res, 404, 'only /metrics is served here');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendJson(res, 405, `${req.method} is not allowed on /metrics; use GET, HEAD`, {
        allow: 'GET, HEAD',
      });
    }
    opts.collect().then(
      (text) => {
        res.writeHead(200, { 'content-type': opts.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        opts.log.error({ err }, 'metrics collection failed');
        sendJson(res, 500, 'internal error');
      },
    );
  };
  const server = createServer({ requestTimeout: 10_000, headersTimeout: 10_000 }, handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Listening on a port (not a pipe): address() is an AddressInfo.
  const { address, port } = server.address() as Exclude<ReturnType<typeof server.address>, string | null>;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics`;
  opts.log.info({ url }, 'metrics listening');
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
