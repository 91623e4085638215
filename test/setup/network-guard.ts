/**
 * The network is closed in tests (STYLE habit 6, globalping's
 * `nock.disableNetConnect()`), one step further: fakes speak real protocols on
 * loopback, so what is refused here is any connection past loopback — TCP,
 * TLS, HTTP/1.1 and HTTP/2 (all through net.Socket#connect), UDP datagrams,
 * and DNS lookups of names other than localhost — plus any connection to the
 * port testConfig() gives every upstream a test has not configured itself
 * (UNCONFIGURED_UPSTREAM_PORT). Either fails the test that made it, loudly,
 * even when the code under test swallowed the error and answered 502: such a
 * test would pass for the wrong reason.
 *
 * Loaded by vitest (setupFiles) into every test worker.
 */
import dgram from 'node:dgram';
import dns from 'node:dns';
import { isIP, Socket } from 'node:net';
import { afterAll, afterEach } from 'vitest';
import { UNCONFIGURED_UPSTREAM_PORT } from '../../src/config/index.js';
import { parseIpNumber } from '../../src/providers/ip/ip-number.js';

const violations: string[] = [];

function isLoopback(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost') return true;
  // The project's own parser: every IPv4-mapped spelling (::ffff:7f00:1 too) reads as IPv4.
  const ip = parseIpNumber(bare);
  if (ip === undefined) return false;
  if (ip.version === 4) return ip.v4 >>> 24 === 127;
  return ip.w[0] === 0 && ip.w[1] === 0 && ip.w[2] === 0 && ip.w[3] === 1;
}

/** Undefined when allowed; otherwise why not. */
function refusal(host: string | undefined, port: number | undefined): string | undefined {
  const target = `${host ?? 'localhost'}:${port ?? '?'}`;
  if (!isLoopback(host ?? 'localhost')) return `a connection past loopback (${target})`;
  if (port === UNCONFIGURED_UPSTREAM_PORT) {
    return `an upstream the test did not configure (${target}, testConfig's default): point it at a fake`;
  }
  return undefined;
}

function refuse(what: string): Error {
  const err = new Error(`network guard: ${what}`);
  // The project's own frames say which code tried; dependencies' and Node's do not.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  const frames = stack
    .split('\n')
    .slice(1)
    .filter((f) => !/node_modules|node:|network-guard|<anonymous>/.test(f))
    .slice(0, 8);
  violations.push(`${what}\n${frames.join('\n')}`);
  return Object.assign(err, { code: 'ENETUNREACH' });
}

type ConnectArgs = Parameters<Socket['connect']>;
const connect = Socket.prototype.connect;
Socket.prototype.connect = function guardedConnect(this: Socket, ...args: unknown[]) {
  // net.connect() hands its arguments on already normalized, as one array ([options, callback]).
  const [first, second] = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  let host: string | undefined;
  let port: number | undefined;
  let path: string | undefined;
  if (typeof first === 'object' && first !== null) {
    const options = first as { host?: string; port?: number | string; path?: string };
    ({ host, path } = options);
    port = options.port === undefined ? undefined : Number(options.port);
  } else if (typeof first === 'string' && !/^\d+$/.test(first)) {
    path = first;
  } else {
    port = Number(first);
    host = typeof second === 'string' ? second : undefined;
  }
  // A Unix socket never leaves the machine.
  const why = path === undefined ? refusal(host, port) : undefined;
  if (why !== undefined) {
    const err = refuse(why);
    process.nextTick(() => this.destroy(err));
    return this;
  }
  return connect.apply(this, args as ConnectArgs);
} as Socket['connect'];

type SendArgs = Parameters<dgram.Socket['send']>;
const send = dgram.Socket.prototype.send;
dgram.Socket.prototype.send = function guardedSend(this: dgram.Socket, ...args: unknown[]) {
  // send(msg, [offset, length,] port, address, callback): the address is the string after the port.
  const portIndex = args.findIndex(
    (a, i) => i > 0 && typeof a === 'number' && typeof args[i + 1] === 'string',
  );
  if (portIndex > 0) {
    const why = refusal(args[portIndex + 1] as string, args[portIndex] as number);
    if (why !== undefined) {
      const err = refuse(`a UDP datagram: ${why}`);
      const callback = args.find((a) => typeof a === 'function') as ((e: Error) => void) | undefined;
      process.nextTick(() => (callback ? callback(err) : this.emit('error', err)));
      return;
    }
  }
  return send.apply(this, args as SendArgs);
} as dgram.Socket['send'];

type Lookup = (hostname: string, ...rest: unknown[]) => unknown;
function guardLookup<T extends Lookup>(original: T, name: string): T {
  return function guardedLookup(this: unknown, hostname: string, ...rest: unknown[]) {
    if (!isLoopback(hostname) && isIP(hostname) === 0) {
      const err = refuse(`a DNS lookup of ${hostname} (${name})`);
      const callback = rest.find((a) => typeof a === 'function') as ((e: Error) => void) | undefined;
      if (callback) {
        process.nextTick(() => callback(err));
        return undefined;
      }
      return Promise.reject(err);
    }
    return original.call(this, hostname, ...rest);
  } as T;
}
dns.lookup = guardLookup(dns.lookup as unknown as Lookup, 'dns.lookup') as unknown as typeof dns.lookup;
dns.promises.lookup = guardLookup(
  dns.promises.lookup as unknown as Lookup,
  'dns.promises.lookup',
) as unknown as typeof dns.promises.lookup;
for (const method of ['resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveMx', 'resolveTxt'] as const) {
  dns[method] = guardLookup(dns[method] as unknown as Lookup, `dns.${method}`) as never;
  dns.promises[method] = guardLookup(
    dns.promises[method] as unknown as Lookup,
    `dns.promises.${method}`,
  ) as never;
}

/** The attempts refused so far, forgotten once taken: for the guard's own test only. */
export function takeViolations(): string[] {
  return violations.splice(0);
}

function assertNoViolation(): void {
  if (violations.length === 0) return;
  const found = violations.splice(0);
  throw new Error(`the network guard refused ${found.length} attempt(s):\n${found.join('\n\n')}`);
}

afterEach(assertNoViolation);
afterAll(assertNoViolation);
