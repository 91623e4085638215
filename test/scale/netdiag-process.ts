/**
 * The real entry point as a child process, the way an operator runs it: the
 * compiled server (`node dist/server.js`, built by the suite's global setup) or
 * `npm start`, configuration from the environment, pino JSON lines on stdout.
 * Used by the scale-out suite to start several instances against one Redis, and
 * by the entry-point suite.
 *
 *   const a = await startNetdiag({ REDIS_URL: redis.url, SESSION_SECRET: secret });
 *   const res = await a.get('/api/dns?target=example.com', { 'x-forwarded-for': '198.51.100.7' });
 *   a.lines;            // every log line so far, parsed
 *   await a.stop();     // SIGTERM, then SIGKILL after 10 s
 *
 * Every request opens a new connection (no keep-alive agent), so with
 * WEB_CONCURRENCY > 1 node:cluster spreads requests over the workers, and no
 * pooled socket outlives the test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

export interface NetdiagProcess {
  /** `http://127.0.0.1:PORT` */
  base: string;
  /** The process started: node itself, or npm with `via: 'npm'`. */
  pid: number;
  /** The process that announced the listener (the `pid` of its log line). */
  serverPid: number;
  /** With METRICS_PORT set: the metrics listener's URL, once it has announced itself. */
  metricsUrl(): string | undefined;
  /** GET on the metrics listener. */
  metrics(): Promise<HttpAnswer>;
  /** Every stdout line, parsed (non-JSON lines are kept as `{ msg: line }`). */
  lines: Record<string, unknown>[];
  /** Stderr, as text. */
  stderr(): string;
  get(path: string, headers?: Record<string, string>): Promise<HttpAnswer>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpAnswer>;
  /** Resolves with the process's exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

const LISTENING = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;

/**
 * Starts `node dist/server.js` (or `npm start`, or the source under tsx) with only the given variables
 * (plus PATH, HOME, PORT=0, HOST=127.0.0.1, LOG_LEVEL=info), and resolves once
 * `listeners` "Server listening" lines have appeared (one per worker).
 */
export async function startNetdiag(
  env: Record<string, string>,
  opts: {
    listeners?: number;
    startTimeoutMs?: number;
    via?: 'node' | 'npm' | 'tsx' | 'netdiag';
    nodeArgs?: string[];
    /** Once listening, read stdout without keeping or parsing it (a benchmark's millions of access-log lines). */
    drainAfterListening?: boolean;
  } = {},
): Promise<NetdiagProcess> {
  const listeners = opts.listeners ?? 1;
  const node = opts.nodeArgs ?? [];
  const [command, args] =
    opts.via === 'npm'
      ? ['npm', ['start', '--silent']]
      : opts.via === 'netdiag'
        ? // The command line's `netdiag serve` (bin/netdiag.mjs), which runs the same dist/server.js.
          [process.execPath, [...node, 'bin/netdiag.mjs', 'serve']]
        : opts.via === 'tsx'
          ? // From source, as `npm start` ran it before the build (bench/memory.ts compares the two).
            [process.execPath, [...node, '--import', 'tsx', 'src/server.ts']]
          : [process.execPath, [...node, 'dist/server.js']];
  const child: ChildProcess = spawn(command, args, {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let serverPid = -1;
  let metricsUrl: string | undefined;
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  let buffer = '';
  let draining = false;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const urls: string[] = [];
    const timer = setTimeout(
      () => reject(new Error(`netdiag did not listen within ${opts.startTimeoutMs ?? 45_000} ms: ${stderr}`)),
      opts.startTimeoutMs ?? 45_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      if (draining) return;
      buffer += chunk.toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const text = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(text) as Record<string, unknown>;
        } catch {
          line = { msg: text };
        }
        lines.push(line);
        if (line.msg === 'metrics listening' && typeof line.url === 'string') metricsUrl = line.url;
        const url = LISTENING.exec(String(line.msg))?.[1];
        if (url) {
          serverPid = Number(line.pid);
          urls.push(url);
          if (urls.length === listeners) {
            draining = opts.drainAfterListening === true;
            clearTimeout(timer);
            resolve(url);
          }
        }
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`netdiag exited early with ${code}: ${stderr}`));
    });
  });
  let base: string;
  try {
    base = await listening;
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }

  const stop = async (): Promise<number | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return exited;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    base,
    pid: child.pid ?? -1,
    serverPid,
    metricsUrl: () => metricsUrl,
    metrics: () => {
      if (metricsUrl === undefined) return Promise.reject(new Error('no metrics listener announced'));
      const url = new URL(metricsUrl);
      return send(url.origin, 'GET', url.pathname, undefined, {});
    },
    lines,
    stderr: () => stderr,
    get: (path, headers = {}) => send(base, 'GET', path, undefined, headers),
    post: (path, body, headers = {}) =>
      send(base, 'POST', path, JSON.stringify(body), { 'content-type': 'application/json', ...headers }),
    exited,
    stop,
  };
}

/** One request on its own connection (agent: false), with a 15 s cap. */
export function send(
  base: string,
  method: string,
  path: string,
  body: string | undefined,
  headers: Record<string, string>,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers, agent: false, timeout: 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json: <T>() => JSON.parse(text) as T,
        });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 15 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The first `name=value` of a Set-Cookie header, ready for a Cookie header. */
export function cookieOf(answer: HttpAnswer): string {
  const set = answer.headers['set-cookie'];
  const first = Array.isArray(set) ? set[0] : set;
  return (first ?? '').split(';')[0] ?? '';
}

/** Polls `check` every 200 ms until it returns true or `timeoutMs` passes. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A counter's value in Prometheus text, summed over the series whose labels include `labels`. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (ok) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
