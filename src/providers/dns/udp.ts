/**
 * DNS over UDP (RFC 1035 §4.2.1) to `udp://host:port`.
 *
 * Each query gets its own socket, hence a fresh random source port, and a
 * random id; the socket is connected, so the kernel drops datagrams from any
 * other address. Datagrams that still do not answer our exact question (id,
 * name, type, class) are ignored rather than trusted: that is what a blind
 * spoofing attempt looks like (RFC 5452 §4). An unanswered query is sent once
 * more; a truncated answer (TC=1) is asked again over TCP (RFC 7766 §5).
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
    const { host, port, url } = this.#endpoint;
    if (signal.aborted) return Promise.reject(abortError(signal, url));
    const id = randomId();
    const message = encodeQuery(id, q);
    const socket: Socket = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');

    return new Promise<DnsAnswer>((resolve, reject) => {
      let sends = 0;
      let timer: NodeJS.Timeout | undefined;
      // A datagram with our id that would not decode: reported if nothing better arrives.
      let malformed: ProviderError | undefined;

      let done = false;
      const finish = (err: ProviderError | undefined, answer?: DnsAnswer) => {
        if (done) return;
        done = true;
        if (timer) clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        socket.removeAllListeners('message');
        socket.on('error', () => {}); // late errors after we are done are of no interest
        socket.close();
        if (err) reject(err);
        else resolve(answer!);
      };
      const onAbort = () => finish(abortError(signal, url));
      const send = () => {
        sends += 1;
        socket.send(message, (err) => {
          if (err) finish(classifyError(err, url));
        });
        timer = setTimeout(() => {
          if (sends < MAX_SENDS) send();
          else
            finish(
              malformed ??
                new ProviderError('timeout', `no answer from ${host}:${port} after ${sends} tries`),
            );
        }, this.#retryAfterMs);
      };

      signal.addEventListener('abort', onAbort, { once: true });
      socket.on('error', (err) => finish(classifyError(err, url)));
      socket.on('message', (bytes: Buffer) => {
        let res: DecodedResponse;
        try {
          res = decodeResponse(bytes);
        } catch (err) {
          if (bytes.length >= 2 && bytes.readUInt16BE(0) === id && err instanceof ProviderError)
            malformed = err;
          return;
        }
        if (answersQuestion(res, id, q)) finish(undefined, res.answer);
        // Servers may leave the question out of a refusal or failure; with our id it is still their answer.
        else if (res.id === id && res.question === undefined && !isAnswerRcode(res.answer.rcode)) {
          finish(undefined, res.answer);
        }
      });
      socket.connect(port, host, () => send());
    });
  }
}
