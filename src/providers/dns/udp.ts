/**
 * DNS over UDP (RFC 1035 §4.2.1) to `udp://host:port`.
 *
 * Each query gets its own socket, hence a fresh random source port, and a
 * random id; the socket is connected, so the kernel drops datagrams from any
 * other address. Datagrams that still do not answer our exact question (id,
 * name, type, class) are ignored rather than trusted: that is what a blind
 * spoofing attempt looks like (RFC 5452 §4). An unanswered query is sent once
 * more; a truncated answer (TC=1) is asked again over TCP (RFC 7766 §5).
 *
 * udpExchange is that exchange for any message and any reading of the
 * answer: the iterative engine (src/dns-engine/) sends its queries through it.
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import { ProviderError } from '../../errors.js';
import { classifyError } from '../http-client.js';
import type { ProviderInfo } from '../types.js';
import { abortError } from './abort.js';
import { type ResolverEndpoint, resolverInfo } from './endpoint.js';
import { StreamDnsProvider, type StreamTransportOptions } from './stream.js';
import type { DnsAnswer, DnsRecordType, DnsTransportProvider } from './types.js';
import {
  answersQuestion,
  assertAnswer,
  type DecodedResponse,
  type DnsQuestion,
  decodeResponse,
  encodeQuery,
  isAnswerRcode,
  randomId,
} from './wire.js';

export interface UdpTransportOptions extends StreamTransportOptions {
  /** Wait this long for an answer before sending the query a second and last time. Default 2000 ms. */
  retryAfterMs?: number;
}

/** Sends per query: the first try and one retry. */
const MAX_SENDS = 2;

export class UdpDnsProvider implements DnsTransportProvider {
  readonly transport = 'udp' as const;
  readonly info: ProviderInfo;
  readonly #endpoint: ResolverEndpoint;
  readonly #retryAfterMs: number;
  /** The same resolver over TCP, for truncated answers. */
  readonly #tcp: StreamDnsProvider;

  constructor(endpoint: ResolverEndpoint, opts: UdpTransportOptions = {}) {
    this.info = resolverInfo(endpoint, opts.id);
    this.#endpoint = endpoint;
    this.#retryAfterMs = opts.retryAfterMs ?? 2000;
    const tcpUrl = `tcp://${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}`;
    this.#tcp = new StreamDnsProvider(
      { ...endpoint, transport: 'tcp', url: tcpUrl },
      { ...opts, id: undefined },
    );
  }

  async query(name: string, type: DnsRecordType, signal: AbortSignal): Promise<DnsAnswer> {
    const answer = await this.#exchange({ name, type }, signal);
    // A truncated answer is incomplete whatever its rcode says; only TCP can carry the whole of it.
    if (answer.flags.tc) return this.#tcp.query(name, type, signal);
    return assertAnswer(answer);
  }

  close(): Promise<void> {
    return this.#tcp.close();
  }

  #exchange(q: DnsQuestion, signal: AbortSignal): Promise<DnsAnswer> {
    const id = randomId();
    return udpExchange(this.#endpoint, encodeQuery(id, q), signal, {
      resendAfterMs: this.#retryAfterMs,
      sends: MAX_SENDS,
      read: (bytes) => {
        let res: DecodedResponse;
        try {
          res = decodeResponse(bytes);
        } catch (err) {
          // Our id on a datagram that would not decode: reported if nothing better arrives.
          if (bytes.length >= 2 && bytes.readUInt16BE(0) === id) throw err;
          return undefined;
        }
        if (answersQuestion(res, id, q)) return res.answer;
        // Servers may leave the question out of a refusal or failure; with our id it is still their answer.
        if (res.id === id && res.question === undefined && !isAnswerRcode(res.answer.rcode))
          return res.answer;
        return undefined;
      },
    });
  }
}

export interface UdpExchangeOptions<T> {
  /**
   * Reads one datagram: its value when it is the answer, undefined to ignore it (a spoofing
   * attempt, a stray). A ProviderError it throws is kept and reported if nothing better arrives.
   */
  read: (bytes: Buffer) => T | undefined;
  /** How long to wait for an answer after each send. */
  resendAfterMs: number;
  /** Sends in all (the first and the retries) before giving up with a timeout. */
  sends: number;
}

/**
 * One UDP exchange from a socket of its own (so a fresh random source port,
 * RFC 5452 §9.2), connected to the server, so the kernel drops datagrams from
 * any other address: `message` is sent, and sent again after `resendAfterMs`
 * until `sends` are spent, and the first datagram `read` accepts is the answer.
 */
export function udpExchange<T>(
  endpoint: Pick<ResolverEndpoint, 'host' | 'port' | 'url'>,
  message: Buffer,
  signal: AbortSignal,
  opts: UdpExchangeOptions<T>,
): Promise<T> {
  const { host, port, url } = endpoint;
  if (signal.aborted) return Promise.reject(abortError(signal, url));
  const socket: Socket = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');

  return new Promise<T>((resolve, reject) => {
    let sends = 0;
    let timer: NodeJS.Timeout | undefined;
    // A datagram read refused as malformed: reported if nothing better arrives.
    let malformed: ProviderError | undefined;

    let done = false;
    const finish = (err: ProviderError | undefined, answer?: T) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.removeAllListeners('message');
      socket.on('error', () => {}); // late errors after we are done are of no interest
      socket.close();
      if (err) reject(err);
      else resolve(answer as T);
    };
    const onAbort = () => finish(abortError(signal, url));
    const send = () => {
      sends += 1;
      socket.send(message, (err) => {
        if (err) finish(classifyError(err, url));
      });
      timer = setTimeout(() => {
        if (sends < opts.sends) send();
        else
          finish(
            malformed ?? new ProviderError('timeout', `no answer from ${host}:${port} after ${sends} tries`),
          );
      }, opts.resendAfterMs);
    };

    signal.addEventListener('abort', onAbort, { once: true });
    socket.on('error', (err) => finish(classifyError(err, url)));
    socket.on('message', (bytes: Buffer) => {
      let value: T | undefined;
      try {
        value = opts.read(bytes);
      } catch (err) {
        if (err instanceof ProviderError) malformed = err;
        else finish(new ProviderError('bad_response', String(err)));
        return;
      }
      if (value !== undefined) finish(undefined, value);
    });
    // A failed connect (no route to the address's family: ENETUNREACH) goes to this callback, not
    // to 'error'; sending on the unconnected socket would throw outside any handler.
    const connected = (err?: Error) => (err ? finish(classifyError(err, url)) : send());
    socket.connect(port, host, connected as () => void);
  });
}
