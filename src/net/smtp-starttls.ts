/**
 * One STARTTLS probe of a mail server (RFC 5321, RFC 3207): connect to port
 * 25 of a checked address, read the banner, EHLO, STARTTLS, the TLS
 * handshake with SNI = the MX host name (observed exactly as GET /api/tls
 * observes one), EHLO again over TLS, QUIT. Never MAIL FROM or RCPT TO: no
 * mail is ever attempted.
 *
 * The probe never throws for what the server did: a refused connection, a
 * 421 banner, no STARTTLS, a failed handshake are all results, with the stage
 * they happened at and what was seen before. It throws only an
 * UnsafeTargetError (the address may not be contacted) or a bug.
 *
 * No server can hold it past `timeoutMs`, connect to QUIT: that one deadline
 * covers the session, after TLS included, and each stage has its own within
 * it (connect, banner, each reply, handshake), counted for the whole reply
 * rather than between bytes, so a tarpit that trickles a byte at a time or
 * goes silent after TLS ends the probe at a stage's deadline, as a timeout.
 *
 *   const probe = await probeSmtpStarttls('192.0.2.25', { servername: 'mx.example.com', heloName, ... });
 */
import type { Duplex } from 'node:stream';
import { checkServerIdentity, type TLSSocket } from 'node:tls';
import { TargetError, UnsafeTargetError } from './errors.js';
import type { AddressResolver } from './resolve-target.js';
import { type ObservedHandshake, observeTlsHandshake } from './tls-handshake.js';

export const SMTP_PORT = 25;

/** A reply (RFC 5321 §4.2): the code and each line's text after it. */
export interface SmtpReply {
  code: number;
  lines: string[];
}

export type SmtpStage = 'connect' | 'banner' | 'ehlo' | 'starttls' | 'tls handshake' | 'ehlo after tls';

export interface SmtpProbe {
  address: string;
  banner?: SmtpReply;
  ehlo?: SmtpReply;
  /** EHLO keywords, upper case (`STARTTLS`, `SIZE`, `PIPELINING`, ...). */
  extensions: string[];
  starttlsOffered: boolean | null;
  /** The reply to STARTTLS. */
  starttls?: SmtpReply;
  handshake?: ObservedHandshake;
  /**
   * The chain's verdict for each of `otherNames` (OpenSSL's chain verification, the name
   * checked as Node checks the SNI name); the handshake's own `authorized` is for `servername`.
   */
  otherNames?: NameVerdict[];
  ehloAfterTls?: SmtpReply;
  /** Milliseconds each completed stage took, in order. */
  timings: { stage: SmtpStage; ms: number }[];
  /** Where and why the probe stopped early; absent when every stage completed. */
  failure?: {
    stage: SmtpStage;
    kind: 'timeout' | 'refused' | 'protocol' | 'tls' | 'network';
    message: string;
  };
}

export interface NameVerdict {
  name: string;
  authorized: boolean;
  authorizationError: string | null;
}

export interface SmtpProbeOptions {
  resolver: AddressResolver;
  allowCidrs: readonly string[];
  ca?: string | string[];
  /** The MX host name: SNI and the name the certificate is verified against. */
  servername: string;
  /** Further MX host names of this address: the certificate is verified against each too (no other SNI is sent). */
  otherNames?: readonly string[];
  /** The name this service gives in EHLO (SMTP_HELO_NAME). */
  heloName: string;
  /** Deadline of the whole session, connect to the reply to QUIT. */
  timeoutMs: number;
  /** A shorter deadline for the TCP connect alone (a blocked port 25 should be told quickly). */
  connectTimeoutMs?: number;
  /** A shorter deadline for the banner, from the connect (greeting pauses make it the slowest reply). */
  bannerTimeoutMs?: number;
  /** A shorter deadline for each reply to a command, before and after TLS. */
  replyTimeoutMs?: number;
  /** A shorter deadline for the TLS handshake. */
  handshakeTimeoutMs?: number;
  signal?: AbortSignal;
  /** Default 25; tests point it elsewhere only through `allowedPorts`. */
  port?: number;
}

/** A failure of an SMTP exchange, naming its stage. */
export class SmtpStageError extends Error {
  constructor(
    readonly stage: SmtpStage,
    readonly kind: 'protocol' | 'timeout' | 'network',
    message: string,
  ) {
    super(message);
  }
}

/** Lines longer than this, or replies of more lines, are not SMTP (RFC 5321 §4.5.3.1.5 allows 512 octets). */
const MAX_LINE = 4096;
const MAX_LINES = 200;

/**
 * Reads SMTP replies from a stream. Holds what it has read past the reply it
 * returned, so a server that sends bytes after its 220 to STARTTLS (the
 * injection of CVE-2011-0411's family) is seen, not handed to TLS.
 */
class ReplyReader {
  #buffer = '';
  #lines: string[] = [];
  #waiter: (() => void) | undefined;
  #error: Error | undefined;
  readonly #onData = (chunk: Buffer) => {
    this.#buffer += chunk.toString('latin1');
    let end = this.#buffer.indexOf('\n');
    while (end >= 0) {
      this.#lines.push(this.#buffer.slice(0, end).replace(/\r$/, ''));
      this.#buffer = this.#buffer.slice(end + 1);
      end = this.#buffer.indexOf('\n');
    }
    if (this.#buffer.length > MAX_LINE) this.#error = new Error('a reply line longer than 4096 octets');
    this.#waiter?.();
  };
  readonly #onEnd = () => {
    this.#error ??= new Error('the server closed the connection');
    this.#waiter?.();
  };

  constructor(private readonly stream: Duplex) {
    stream.on('data', this.#onData);
    stream.on('end', this.#onEnd);
    stream.on('close', this.#onEnd);
  }

  /** The next complete reply; rejects on close, garbage or the signal. */
  async next(signal: AbortSignal): Promise<SmtpReply> {
    for (;;) {
      const reply = this.#take();
      if (reply) return reply;
      if (this.#error) throw this.#error;
      signal.throwIfAborted();
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          this.#waiter = undefined;
          resolve();
        };
        this.#waiter = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Stops reading; returns how many bytes had arrived past the last reply. */
  detach(): number {
    this.stream.off('data', this.#onData);
    this.stream.off('end', this.#onEnd);
    this.stream.off('close', this.#onEnd);
    this.stream.pause();
    return this.#lines.reduce((n, l) => n + l.length + 2, 0) + this.#buffer.length;
  }

  #take(): SmtpReply | undefined {
    const lines: string[] = [];
    let code: number | undefined;
    for (const [i, line] of this.#lines.entries()) {
      const m = /^([2-5][0-9][0-9])([ -]|$)(.*)$/.exec(line);
      if (!m || (code !== undefined && Number(m[1]) !== code)) {
        this.#error = new Error(`not an SMTP reply: ${JSON.stringify(line.slice(0, 80))}`);
        return undefined;
      }
      code = Number(m[1]);
      lines.push(m[3]!);
      if (lines.length > MAX_LINES) {
        this.#error = new Error(`a reply of more than ${MAX_LINES} lines`);
        return undefined;
      }
      if (m[2] !== '-') {
        this.#lines = this.#lines.slice(i + 1);
        return { code, lines };
      }
    }
    return undefined;
  }
}

const replyText = (r: SmtpReply) => `${r.code} ${r.lines.join(' / ')}`.slice(0, 300);

/**
 * The next reply within the stage's deadline (`ms`, when set) and the session's (`session`);
 * a failure names the stage, a timeout says which deadline passed.
 */
async function replyWithin(
  reader: ReplyReader,
  stage: SmtpStage,
  session: AbortSignal,
  ms: number | undefined,
): Promise<SmtpReply> {
  const own = ms === undefined ? undefined : AbortSignal.timeout(ms);
  try {
    return await reader.next(own ? AbortSignal.any([session, own]) : session);
  } catch (err) {
    if (own?.aborted) throw new SmtpStageError(stage, 'timeout', `no complete reply within ${ms} ms`);
    if (session.aborted) throw new SmtpStageError(stage, 'timeout', 'the session deadline passed');
    const message = (err as Error).message;
    throw new SmtpStageError(stage, message.startsWith('not an SMTP') ? 'protocol' : 'network', message);
  }
}

/** What the plaintext part of a session showed (SmtpProbe's fields). */
export type StarttlsSeen = Pick<SmtpProbe, 'banner' | 'ehlo' | 'extensions' | 'starttlsOffered' | 'starttls'>;

export type StarttlsOptions = Pick<SmtpProbeOptions, 'heloName' | 'bannerTimeoutMs' | 'replyTimeoutMs'>;

/**
 * The plaintext part of a session (RFC 5321, RFC 3207 §4): the banner, EHLO, STARTTLS and its
 * 220, leaving `tcp` paused at the first byte TLS must read. What it saw is written into `seen`
 * as it goes; `stage` is told each stage as it starts and again once it completed. Throws an
 * SmtpStageError naming the stage (on a failure SmtpStageError.cause is never set). Used by
 * this probe and by every handshake of a TLS scan of port 25 (src/tls-scan/).
 */
export async function negotiateStarttls(
  tcp: Duplex,
  session: AbortSignal,
  opts: StarttlsOptions,
  seen: StarttlsSeen,
  stage: (name: 'banner' | 'ehlo' | 'starttls', completed: boolean) => void = () => {},
): Promise<void> {
  const reader = new ReplyReader(tcp);
  const step = (name: 'banner' | 'ehlo' | 'starttls', command?: string): Promise<SmtpReply> => {
    stage(name, false);
    if (command) tcp.write(`${command}\r\n`);
    return replyWithin(reader, name, session, name === 'banner' ? opts.bannerTimeoutMs : opts.replyTimeoutMs);
  };
  seen.banner = await step('banner');
  stage('banner', true);
  // RFC 5321 §3.1: 554 (or 421) in the greeting means "no service here".
  if (seen.banner.code !== 220)
    throw new SmtpStageError('banner', 'protocol', `the banner is ${replyText(seen.banner)}`);
  seen.ehlo = await step('ehlo', `EHLO ${opts.heloName}`);
  stage('ehlo', true);
  if (seen.ehlo.code !== 250)
    throw new SmtpStageError('ehlo', 'protocol', `EHLO answered ${replyText(seen.ehlo)}`);
  seen.extensions = seen.ehlo.lines.slice(1).map((l) => (l.split(' ')[0] ?? '').toUpperCase());
  seen.starttlsOffered = seen.extensions.includes('STARTTLS');
  if (!seen.starttlsOffered) {
    tcp.write('QUIT\r\n');
    await replyWithin(reader, 'starttls', session, opts.replyTimeoutMs).catch(() => undefined);
    throw new SmtpStageError('starttls', 'protocol', 'STARTTLS is not offered in the EHLO reply');
  }
  seen.starttls = await step('starttls', 'STARTTLS');
  if (seen.starttls.code !== 220)
    throw new SmtpStageError('starttls', 'protocol', `STARTTLS answered ${replyText(seen.starttls)}`);
  const extra = reader.detach();
  // RFC 3207 §4: nothing may follow the 220 before TLS; bytes there would be read as TLS records.
  if (extra > 0)
    throw new SmtpStageError(
      'starttls',
      'protocol',
      `the server sent ${extra} bytes after its 220 to STARTTLS`,
    );
  stage('starttls', true);
}

/**
 * Probes one address of one MX host. Throws only UnsafeTargetError (refused
 * before any connection); everything the server does is in the result.
 */
export async function probeSmtpStarttls(address: string, opts: SmtpProbeOptions): Promise<SmtpProbe> {
  const probe: SmtpProbe = { address, extensions: [], starttlsOffered: null, timings: [] };
  const started = performance.now();
  let mark = started;
  const lap = (stage: SmtpStage) => {
    const now = performance.now();
    probe.timings.push({ stage, ms: Math.round(now - mark) });
    mark = now;
  };

  /** The SMTP stage in progress: a deadline can end it before its own error does. */
  let current: 'banner' | 'ehlo' | 'starttls' | undefined;
  // `session` is safeTlsConnect's signal: the session deadline (it started it with ours) and the caller's.
  const beforeTls = async (tcp: Duplex, session: AbortSignal) => {
    lap('connect');
    await negotiateStarttls(tcp, session, opts, probe, (stage, done) => {
      current = stage;
      if (done) lap(stage);
    });
  };

  const afterHandshake = async (tls: TLSSocket) => {
    lap('tls handshake');
    if (opts.otherNames?.length) probe.otherNames = verdictsFor(tls, opts.otherNames);
    const reader = new ReplyReader(tls);
    // What is left of the session deadline: after TLS is inside it, not a second one.
    const left = AbortSignal.timeout(Math.max(0, Math.floor(opts.timeoutMs - (performance.now() - started))));
    const session = opts.signal ? AbortSignal.any([left, opts.signal]) : left;
    try {
      tls.write(`EHLO ${opts.heloName}\r\n`);
      probe.ehloAfterTls = await replyWithin(reader, 'ehlo after tls', session, opts.replyTimeoutMs);
      lap('ehlo after tls');
      // Wait for the 221 (RFC 5321 §4.1.1.10): closing at once can drop the QUIT unsent, and the
      // server logs a lost connection instead of a clean end.
      tls.write('QUIT\r\n');
      await replyWithin(reader, 'ehlo after tls', session, opts.replyTimeoutMs).catch(() => undefined);
    } catch (err) {
      const kind = err instanceof SmtpStageError ? err.kind : 'network';
      probe.failure = { stage: 'ehlo after tls', kind, message: (err as Error).message };
    } finally {
      reader.detach();
    }
  };

  try {
    probe.handshake = await observeTlsHandshake(address, {
      resolver: opts.resolver,
      allowCidrs: opts.allowCidrs,
      ...(opts.ca ? { ca: opts.ca } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      timeoutMs: opts.timeoutMs,
      ...(opts.connectTimeoutMs ? { connectTimeoutMs: opts.connectTimeoutMs } : {}),
      ...(opts.handshakeTimeoutMs ? { handshakeTimeoutMs: opts.handshakeTimeoutMs } : {}),
      port: opts.port ?? SMTP_PORT,
      allowedPorts: [opts.port ?? SMTP_PORT],
      servername: opts.servername,
      alpnProtocols: [],
      param: 'mx',
      beforeTls,
      afterHandshake,
    });
  } catch (err) {
    if (err instanceof UnsafeTargetError) throw err;
    probe.failure = describe(err, current);
  }
  return probe;
}

/**
 * What Node would have concluded for each name as the SNI name: the chain verified by
 * OpenSSL (its verdict does not depend on the name), then the name checked against the leaf.
 */
function verdictsFor(tls: TLSSocket, names: readonly string[]): NameVerdict[] {
  const chainError = tls.authorized ? null : String(tls.authorizationError);
  // Node checks the name only once the chain verified: a name mismatch is the one error that says it did.
  const chainVerified = chainError === null || chainError === 'ERR_TLS_CERT_ALTNAME_INVALID';
  const leaf = tls.getPeerCertificate();
  return names.map((name) => {
    if (!chainVerified) return { name, authorized: false, authorizationError: chainError };
    const mismatch = checkServerIdentity(name, leaf);
    const error = mismatch ? ((mismatch as { code?: string }).code ?? mismatch.message) : null;
    return { name, authorized: error === null, authorizationError: error };
  });
}

function describe(err: unknown, smtpStage: SmtpStage | undefined): NonNullable<SmtpProbe['failure']> {
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof SmtpStageError)
    return { stage: cause.stage, kind: cause.kind, message: cause.message };
  if (err instanceof TargetError) {
    const stage: SmtpStage =
      err.stage === 'tls handshake'
        ? 'tls handshake'
        : err.stage === 'starttls'
          ? (smtpStage ?? 'banner')
          : 'connect';
    const refused = /ECONNREFUSED/.test(err.message);
    const kind =
      err.kind === 'timeout' || /ETIMEDOUT/.test(err.message)
        ? 'timeout'
        : refused
          ? 'refused'
          : stage === 'tls handshake'
            ? 'tls'
            : 'network';
    return { stage, kind, message: err.message };
  }
  throw err;
}
