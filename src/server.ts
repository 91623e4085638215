/**
 * Process entry: read config (a bad value stops the process with one line
 * naming the variable), build the app, listen, close gracefully on SIGTERM.
 * WEB_CONCURRENCY > 1 forks that many workers sharing the port (node:cluster).
 */
import cluster from 'node:cluster';
import { buildApp, createLogger } from './app.js';
import { type Config, ConfigError, loadConfig } from './config/index.js';

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

async function serve(config: Config): Promise<void> {
  const logger = createLogger(config);
  if (config.unsafeAllowTargetCidrs.length > 0) {
    logger.warn(
      { cidrs: config.unsafeAllowTargetCidrs },
      'UNSAFE_ALLOW_TARGET_CIDRS is set: outbound safety is disabled for these ranges. Never set this in production.',
    );
  }
  if (config.redisUrl === undefined) logger.info('REDIS_URL unset: in-process cache and rate limits');
  const app = await buildApp(config, { logger });
  app.ctx.metrics.enableDefaultMetrics();

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    // A stuck upstream must not keep the process alive forever.
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
}

const config = readConfig();
if (config.webConcurrency > 1 && cluster.isPrimary) {
  for (let i = 0; i < config.webConcurrency; i++) cluster.fork();
  cluster.on('exit', (worker, code) => {
    if (code !== 0) process.stderr.write(`netdiag: worker ${worker.process.pid} exited with ${code}\n`);
  });
  const stop = (signal: NodeJS.Signals) => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
} else {
  serve(config).catch((err: unknown) => {
    process.stderr.write(`netdiag: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
