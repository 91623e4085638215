/**
 * One scan's handshakes: every hello of a scan goes through `ScanSession.hello`,
 * which holds the scan's three bounds in one place — the handshake budget, the
 * per-address concurrency (a few at a time: a scan must not look like a flood),
 * and the one deadline of the whole scan — and counts what was spent. The
 * connections are the outbound client's (each takes a live-probe slot there).
 *
 *   const session = new ScanSession(connector, { address: '192.0.2.1', port: 443, ... });
 *   const reply = await session.hello({ version: 'TLSv1.2', cipherSuites: [...] });
 */
import { ConcurrencyLimit } from '../net/concurrency-limit.js';
import type { TcpExchangeOptions } from '../net/tcp-exchange.js';
import { buildClientHello, buildSslv2ClientHello, type ClientHelloOptions } from './client-hello.js';
import { type ProbeConnector, type ProbeResult, probeHello } from './probe.js';
import type { ServerReply } from './server-hello.js';

export interface ScanSessionOptions {
  /** The checked address every handshake goes to (resolved once: a scan is of one server). */
  address: string;
  port: number;
  /** SNI; none for an IP literal. */
  serverName: string | undefined;
  /** Handshakes at once against this address. */
  concurrency: number;
  /** The most handshakes the scan may make. */
  budget: number;
  /** When the whole scan must end. */
  deadline: AbortSignal;
  /** Each handshake's own bound, within the deadline. */
  handshakeTimeoutMs: number;
  /** SMTP: the plaintext conversation before each hello. */
  prelude?: TcpExchangeOptions['prelude'];
}

/** Why a hello got no answer from the server: the scan's bounds ran out. */
export class ScanExhausted extends Error {
  constructor(readonly bound: 'budget' | 'deadline') {
    super(bound === 'budget' ? 'the handshake budget is spent' : 'the scan deadline passed');
  }
}

/** A server's answer, with how the connection ended (a silent close is how many servers refuse). */
export interface HelloAnswer {
  reply: ServerReply;
  end: ProbeResult['end'];
}

export class ScanSession {
  readonly #connector: ProbeConnector;
  readonly #opts: ScanSessionOptions;
  readonly #limit: ConcurrencyLimit;
  #spent = 0;
  /** Set when a bound ran out: the scan is then incomplete. */
  exhausted: ScanExhausted | undefined;

  constructor(connector: ProbeConnector, opts: ScanSessionOptions) {
    this.#connector = connector;
    this.#opts = opts;
    this.#limit = new ConcurrencyLimit(opts.concurrency);
  }

  get handshakes(): number {
    return this.#spent;
  }

  get serverName(): string | undefined {
    return this.#opts.serverName;
  }

  get handshakeTimeoutMs(): number {
    return this.#opts.handshakeTimeoutMs;
  }

  /** A TLS ClientHello (SNI added); `until: 'flight'` reads a TLS ≤ 1.2 server's whole first flight. */
  hello(opts: Omit<ClientHelloOptions, 'serverName'>, until: 'answer' | 'flight' = 'answer') {
    const serverName = this.#opts.serverName;
    return this.#send(
      () => buildClientHello({ ...opts, ...(serverName ? { serverName } : {}) }).bytes,
      until,
    );
  }

  sslv2Hello(cipherSpecs: readonly number[]) {
    return this.#send(() => buildSslv2ClientHello(cipherSpecs), 'answer');
  }

  /**
   * Rejects with ScanExhausted when a bound ran out (before connecting), with the outbound
   * client's errors when the address may not or could not be contacted; resolves with
   * whatever the server did once connected.
   */
  async #send(bytes: () => Buffer, until: 'answer' | 'flight'): Promise<HelloAnswer> {
    const { deadline } = this.#opts;
    const release = await this.#slot();
    try {
      const result = await probeHello(
        this.#connector,
        { host: this.#opts.address, port: this.#opts.port, allowedPorts: [this.#opts.port] },
        bytes(),
        {
          timeoutMs: this.#opts.handshakeTimeoutMs,
          signal: deadline,
          until,
          ...(this.#opts.prelude ? { prelude: this.#opts.prelude } : {}),
        },
      );
      if (result.end === 'timeout' && deadline.aborted) throw this.#exhaust('deadline');
      return { reply: result.reply, end: result.end };
    } finally {
      release();
    }
  }

  /**
   * Any other connection of the scan (the certificates' complete handshakes), under the same
   * budget, concurrency and deadline; `fn` gets the deadline as its signal.
   */
  async budgeted<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const release = await this.#slot();
    try {
      return await fn(this.#opts.deadline);
    } finally {
      release();
    }
  }

  /** A concurrency slot and one handshake of the budget, or ScanExhausted. */
  async #slot(): Promise<() => void> {
    const { deadline } = this.#opts;
    if (deadline.aborted) throw this.#exhaust('deadline');
    let release: () => void;
    try {
      release = await this.#limit.acquire(deadline);
    } catch {
      throw this.#exhaust('deadline');
    }
    if (deadline.aborted || this.#spent >= this.#opts.budget) {
      release();
      throw this.#exhaust(deadline.aborted ? 'deadline' : 'budget');
    }
    this.#spent += 1;
    return release;
  }

  #exhaust(bound: 'budget' | 'deadline'): ScanExhausted {
    this.exhausted ??= new ScanExhausted(bound);
    return this.exhausted;
  }
}
