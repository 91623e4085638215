/**
 * Process entry: read config (a bad value stops the process with one line
 * naming the variable), build the app, listen, close gracefully on SIGTERM.
 * WEB_CONCURRENCY > 1 forks that many workers sharing the port (node:cluster);
 * the primary then only supervises them and, with METRICS_PORT, serves the
 * metrics of all of them summed (prom-client's AggregatorRegistry asks each
 * worker's registry over IPC).
 */
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { type Config, ConfigError, FALLBACK_HELO_NAME, loadConfig } from './config/index.js';
import { createLogger } from './logger.js';
import { type MetricsListener, serveMetrics } from './metrics-listener.js';

/** Past this, a stuck upstream or client no longer holds the process open on shutdown. */
const SHUTDOWN_GRACE_MS = 10_000;

function readConfig(): Config {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`netdiag: invalid configuration: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** Runs `close` once on the first SIGTERM or SIGINT, then exits 0 (1 if it failed or took too long). */
function onSignal(log: Logger, close: () => Promise<void>): void {
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS);
    force.unref();
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** The metrics listener METRICS_PORT asks for, if it does. */
async function metricsListener(
  config: Config,
  log: Logger,
  collect: () => Promise<string>,
  contentType: string,
): Promise<MetricsListener | undefined> {
  if (config.metricsPort === undefined) return undefined;
  return serveMetrics({ host: config.metricsHost, port: config.metricsPort, collect, contentType, log });
}

async function serve(config: Config): Promise<void> {
  const logger = createLogger(config);
  if (config.unsafeAllowTargetCidrs.length > 0) {
    logger.warn(
      { cidrs: config.unsafeAllowTargetCidrs },
      'UNSAFE_ALLOW_TARGET_CIDRS is set: outbound safety is disabled for these ranges. Never set this in production.',
    );
  }
  if (config.redisUrl === undefined) logger.info('REDIS_URL unset: in-process cache and rate limits');
  if (config.mailTlsEnabled && config.smtpHeloName === FALLBACK_HELO_NAME) {
    logger.warn(
      `SMTP_HELO_NAME and PUBLIC_ORIGIN unset: /api/mail-tls greets mail servers as ${FALLBACK_HELO_NAME}, ` +
        'a name that never resolves and that some servers refuse. Set SMTP_HELO_NAME to this host’s public name.',
    );
  }
  // Loaded here, not at the top: a cluster primary never builds the app and stays small.
  const { buildApp } = await import('./app.js');
  const app = await buildApp(config, { logger });
  const { registry } = app.ctx.metrics;
  app.ctx.metrics.enableDefaultMetrics();

  let metrics: MetricsListener | undefined;
  onSignal(logger, async () => {
    await Promise.all([app.close(), metrics?.close()]);
  });
  await app.listen({ port: config.port, host: config.host });

  if (cluster.isWorker) {
    // Answers the primary's aggregator (prom-client listens for its IPC requests once an
    // AggregatorRegistry exists in the worker) with exactly this app's registry.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([registry]);
  } else {
    metrics = await metricsListener(config, logger, () => registry.metrics(), registry.contentType);
  }
}

async function supervise(config: Config): Promise<void> {
  const logger = createLogger(config);
  for (let i = 0; i < config.webConcurrency; i++) cluster.fork();
  let stopping = false;
  const allExited = new Promise<void>((resolve) => {
    cluster.on('exit', (worker, code, signal) => {
      if (code !== 0 && !stopping) logger.error({ pid: worker.process.pid, code, signal }, 'worker exited');
      if (Object.keys(cluster.workers ?? {}).length === 0) resolve();
    });
  });

  let metrics: MetricsListener | undefined;
  onSignal(logger, async () => {
    stopping = true;
    // Each worker closes itself gracefully on the same signal.
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    await Promise.all([allExited, metrics?.close()]);
  });
  const aggregate = new AggregatorRegistry();
  metrics = await metricsListener(config, logger, () => aggregate.clusterMetrics(), aggregate.contentType);
}

const config = readConfig();
const start = config.webConcurrency > 1 && cluster.isPrimary ? supervise : serve;
start(config).catch((err: unknown) => {
  process.stderr.write(`netdiag: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
