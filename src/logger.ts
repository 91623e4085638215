/**
 * The process's pino logger: JSON lines on stdout, secrets redacted. Its own
 * module so the cluster primary, which serves no requests, can log without
 * loading the app.
 */
import type { FastifyBaseLogger } from 'fastify';
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
  // Asynchronous writes to stdout: a line waits in memory while the previous write is under
  // way, so under load many lines go in one write instead of one blocking write(2) per
  // request (stalling the event loop whenever the reader of the pipe falls behind). pino
  // flushes what is buffered when the process exits.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

/**
 * Fastify gives every request a child logger bound to its reqId, ~0.6 µs each, though most
 * requests log nothing through it: their one access-log line is written by accessLogger().
 * This child is created on first use, so a request that logs nothing else never pays for it;
 * what it logs is what the eager child would have logged. A class, not closures: nothing is
 * allocated per request but the object itself.
 */
/** A log call's arguments as given (an object and/or a message and its format arguments). */
type LogArgs = [obj: unknown, msg?: string, ...args: unknown[]];

class LazyChildLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: pino.Bindings;
  readonly #options: pino.ChildLoggerOptions;
  #real: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: pino.Bindings, options: pino.ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get level(): string {
    return this.#real?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  #logger(): FastifyBaseLogger {
    this.#real ??= this.#parent.child(this.#bindings, this.#options);
    return this.#real;
  }

  /** The child to write a line at `level` through, or undefined when the parent drops that level. */
  #writer(level: pino.Level): FastifyBaseLogger | undefined {
    if (this.#real !== undefined) return this.#real;
    const check = (this.#parent as Partial<Logger>).isLevelEnabled;
    if (check !== undefined && this.#options.level === undefined && !check.call(this.#parent, level)) {
      return undefined;
    }
    return this.#logger();
  }

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }

  fatal(...args: LogArgs): void {
    this.#writer('fatal')?.fatal(...args);
  }
  error(...args: LogArgs): void {
    this.#writer('error')?.error(...args);
  }
  warn(...args: LogArgs): void {
    this.#writer('warn')?.warn(...args);
  }
  info(...args: LogArgs): void {
    this.#writer('info')?.info(...args);
  }
  debug(...args: LogArgs): void {
    this.#writer('debug')?.debug(...args);
  }
  trace(...args: LogArgs): void {
    this.#writer('trace')?.trace(...args);
  }
  silent(): void {}
}

export function lazyChildLogger(
  parent: FastifyBaseLogger,
  bindings: pino.Bindings,
  options: pino.ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options);
}

/**
 * The logger of the one access-log line per request: the app's logger without redaction.
 * The line holds only fields the app builds itself (method, URL, status, time, address,
 * request id), none of which a redaction path names, and redaction's path matching
 * doubles the cost of every line (2.8 → 5.5 µs, bench/hot-path.ts).
 */
export function accessLogger(logger: FastifyBaseLogger): FastifyBaseLogger {
  return logger.child({}, { redact: [] });
}
