/**
 * Builds the app for a test with config overrides and closes it when the test
 * ends (STYLE habit 1). Never reads process.env, never reaches the internet.
 */
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { onTestFinished } from 'vitest';
import { type BuildOptions, buildApp } from '../src/app.js';
import { type Config, testConfig } from '../src/config/index.js';
import { createLogger } from '../src/logger.js';

export interface TestAppOptions extends BuildOptions {
  config?: Partial<Config>;
  /** Extra routes registered before ready (e.g. a probe route for a plugin test). */
  extend?: (app: FastifyInstance) => void | Promise<void>;
}

export async function buildTestApp(opts: TestAppOptions = {}): Promise<FastifyInstance> {
  const { config, extend, ...deps } = opts;
  // Load shedding reacts to wall-clock event-loop delay, which a busy test machine produces by itself;
  // only the suite that tests it turns it on.
  const app = await buildApp(testConfig({ loadShedEventLoopDelayMs: 0, ...config }), {
    logger: pino({ level: 'silent' }),
    ...deps,
  });
  if (extend) await extend(app);
  onTestFinished(() => app.close());
  await app.ready();
  return app;
}

/** A pino logger whose lines a test can read back (STYLE habit 14). */
export function capturingLogger(level: pino.Level = 'info'): {
  logger: pino.Logger;
  lines: () => Record<string, unknown>[];
} {
  const chunks: string[] = [];
  const logger = createLogger({ logLevel: level }, { write: (s: string) => chunks.push(s) });
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}
