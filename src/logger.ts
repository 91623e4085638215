/**
 * The process's pino logger: JSON lines on stdout, secrets redacted. Its own
 * module so the cluster primary, which serves no requests, can log without
 * loading the app.
 */
import pino, { type Logger } from 'pino';
import type { Config } from './config/index.js';

export function createLogger(config: Pick<Config, 'logLevel'>, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    // Secrets never reach the logs: session cookies, bearer tokens, challenge tokens, API keys.
    redact: {
      paths: [
        'req.headers.cookie',
        'req.headers.authorization',
        'res.headers["set-cookie"]',
        '*.token',
        '*.secret',
        '*.apiKey',
        '*.api_key',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
