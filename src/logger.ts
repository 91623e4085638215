/**
 * The process's pino logger: JSON lines on stdout, secrets redacted. Its own
 * module so the cluster primary, which serves no requests, can log without
 * loading the app.
 */
import type { IncomingMessage } from 'node:http';
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
  return pino(options, destination ?? lineBatches(1));
}

/** The process logger's destination (below) on a file descriptor: stdout (1) in production. */
export function lineBatches(fd: number): pino.DestinationStream {
  return new LineBatch(pino.destination({ dest: fd, sync: true }));
}

/**
 * stdout for the process's logger: the lines logged in one turn of the event loop, written
 * together at its end in one write(2) through sonic-boom (pino's destination, synchronous
 * mode, which waits out a full pipe). A write per line would be a system call per request.
 * sonic-boom's asynchronous mode batches too, but while a write is under way it measures its
 * whole pending buffer again for every line appended (Buffer.byteLength of a growing
 * concatenation, up to 16 KiB: microseconds and kilobytes of garbage per line under load,
 * bench/hot-path.ts), and on exit it writes what it holds while a write may still be in
 * flight, which can garble the last lines. Here no line waits past its turn, none is in
 * flight when the process exits, and lines keep their order.
 */
const live = new Set<WeakRef<LineBatch>>();
const writeLastBatches = () => {
  for (const ref of live) ref.deref()?.flushSync();
};

class LineBatch implements pino.DestinationStream {
  readonly #sink: ReturnType<typeof pino.destination>;
  #pending = '';
  #scheduled = false;

  constructor(sink: ReturnType<typeof pino.destination>) {
    this.#sink = sink;
    if (live.size === 0) process.once('exit', writeLastBatches);
    live.add(new WeakRef(this));
  }

  write(line: string): void {
    this.#pending += line;
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flushSync());
    }
  }

  /** pino's logger.flush(): what was logged so far, written before the callback. */
  flush(cb?: (err?: Error) => void): void {
    this.flushSync();
    cb?.();
  }

  /** The turn's lines, written now (also at the end of the turn, and on exit). */
  flushSync(): void {
    this.#scheduled = false;
    if (this.#pending === '') return;
    const batch = this.#pending;
    this.#pending = '';
    this.#sink.write(batch);
  }
}

/** A log call's arguments as given (an object and/or a message and its format arguments). */
type LogArgs = [obj: unknown, msg?: string, ...args: unknown[]];

/**
 * Fastify gives every request a child logger bound to its reqId, though most requests log
 * nothing through it: their one access-log line is written by accessLog(). This child is
 * created on first use, so a request that logs nothing else never pays for it (the cost is in
 * docs/performance.md); what it logs is what the eager child would have logged. A class, not
 * closures: nothing is allocated per request but the object itself.
 */
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

/** The longest URL an access-log line holds whole (the rest is elided). */
const LOGGED_URL_LENGTH = 300;

/** One request's access-log line: who asked what, and how it was answered. */
export type AccessLog = (
  reqId: string,
  method: string,
  url: string,
  statusCode: number,
  elapsedMs: number,
  ip: string,
) => void;

/**
 * The one access-log line per request, for every path that answers one (Fastify's
 * onResponse hook in app.ts, and plugins/response-cache.ts): written through the app's
 * logger without redaction. The line holds only fields the app builds itself (method, URL,
 * status, time, address, request id), none of which a redaction path names, and
 * redaction's path matching doubles the cost of every line (docs/performance.md).
 */
export function accessLog(logger: FastifyBaseLogger): AccessLog {
  const access = logger.child({}, { redact: [] });
  return (reqId, method, url, statusCode, elapsedMs, ip) =>
    access.info(
      {
        // First, where the request's child logger put it when it wrote this line.
        reqId,
        method,
        url: url.length > LOGGED_URL_LENGTH ? `${url.slice(0, LOGGED_URL_LENGTH)}…` : url,
        statusCode,
        ms: Math.round(elapsedMs * 10) / 10,
        ip,
      },
      'request',
    );
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** A request's id: the caller's X-Request-Id when it is a plausible one, else a fresh UUID. */
export function requestIdOf(raw: IncomingMessage): string {
  const given = raw.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}
