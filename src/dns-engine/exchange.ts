/**
 * One question to one authoritative server, over UDP or TCP, on port 53 and
 * no other: the DNS client's own exchanges (providers/dns/udp.ts udpExchange,
 * stream.ts tcpExchange) with the query an iterative resolver sends:
 *
 * - RD=0: an authoritative server is asked about its own zones, not to recurse;
 * - EDNS0 with a 1232-byte buffer (DNS Flag Day 2020) and DO=1, so the DNSSEC
 *   records come too (RFC 3225); CD=1, since netdiag validates itself and a
 *   server that does check must not withhold data for it (RFC 4035 §3.2.2);
 * - a fresh random id and, over UDP, a socket of its own (a random source
 *   port), and only a response echoing our id and question is taken
 *   (RFC 5452 §9.2, §4);
 * - a single send per exchange: the engine moves on to the zone's next server
 *   rather than resending to a silent one, as resolvers do.
 *
 * Whether the address may be contacted at all is the caller's decision, taken
 * before this is called (outbound safety, docs/architecture.md §3).
 */
import { ProviderError } from '../errors.js';
import { RR_TYPE_CODES, typeMnemonic } from '../providers/dns/parameters.js';
import { tcpExchange } from '../providers/dns/stream.js';
import { udpExchange } from '../providers/dns/udp.js';
import { type DecodedMessage, decodeMessage, encodeQuery, randomId } from '../providers/dns/wire.js';
import { canonicalName } from './names.js';
import type { EngineQueryType } from './types.js';

/** The only port a name server is ever asked on. */
export const DNS_PORT = 53;

export type ExchangeResult =
  | { ok: true; message: DecodedMessage; wire: Buffer; ms: number }
  | {
      ok: false;
      error: 'timeout' | 'network' | 'bad_response';
      detail: string;
      /** The system's error code for a network failure (ECONNREFUSED, ENETUNREACH, ...). */
      code?: string;
      ms: number;
    };

export interface ExchangeOptions {
  transport: 'udp' | 'tcp';
  /** How long this server gets. */
  timeoutMs: number;
  /** The request's own signal: when it aborts, the exchange rejects (the caller's deadline). */
  signal: AbortSignal;
}

const FLAGS = { recursionDesired: false, checkingDisabled: true } as const;

/**
 * Sends the question and waits for the answer. A server that is silent, unreachable or
 * answers nonsense is a result (`ok: false`), not an exception; only the request's own
 * signal makes it reject.
 */
export async function exchange(
  address: string,
  question: { name: string; type: EngineQueryType },
  opts: ExchangeOptions,
): Promise<ExchangeResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const endpoint = {
    host: address,
    port: DNS_PORT,
    url: `${opts.transport}://${address.includes(':') ? `[${address}]` : address}:${DNS_PORT}`,
  };
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = AbortSignal.any([opts.signal, deadline]);
  const q = { name: question.name, type: question.type };
  try {
    const answer =
      opts.transport === 'udp'
        ? await (() => {
            const id = randomId();
            return udpExchange(endpoint, encodeQuery(id, q, FLAGS), signal, {
              resendAfterMs: opts.timeoutMs,
              sends: 1,
              read: (bytes) => readDatagram(bytes, id, question),
            });
          })()
        : await tcpExchange(
            endpoint,
            (id) => encodeQuery(id, q, FLAGS),
            (bytes, id) => readStreamAnswer(bytes, id, question),
            signal,
            opts.timeoutMs,
          );
    return { ok: true, ...answer, ms: elapsed() };
  } catch (err) {
    if (opts.signal.aborted) throw err;
    if (!(err instanceof ProviderError)) throw err;
    const error =
      err.kind === 'timeout' ? 'timeout' : err.kind === 'bad_response' ? 'bad_response' : 'network';
    const code = (err.cause as { code?: unknown } | undefined)?.code;
    return {
      ok: false,
      error,
      detail: err.message,
      ...(typeof code === 'string' ? { code } : {}),
      ms: elapsed(),
    };
  }
}

type Read = { message: DecodedMessage; wire: Buffer };

/** Over UDP a stray or forged datagram is ignored (undefined); one with our id that will not decode is reported. */
function readDatagram(bytes: Buffer, id: number, question: { name: string; type: string }): Read | undefined {
  let message: DecodedMessage;
  try {
    message = decodeMessage(bytes);
  } catch (err) {
    if (bytes.length >= 2 && bytes.readUInt16BE(0) === id) throw err;
    return undefined;
  }
  return message.id === id && echoes(message, question) ? { message, wire: bytes } : undefined;
}

/** Over TCP the connection carries only our exchange: a response to another question is a broken server. */
function readStreamAnswer(bytes: Buffer, id: number, question: { name: string; type: string }): Read {
  const message = decodeMessage(bytes);
  if (message.id !== id || !echoes(message, question)) {
    throw new ProviderError('bad_response', 'DNS response does not match the question asked');
  }
  return { message, wire: bytes };
}

/** The response's question is ours: same name (case aside), type and class IN. */
function echoes(message: DecodedMessage, question: { name: string; type: string }): boolean {
  const q = message.question;
  return (
    q !== undefined &&
    q.name === canonicalName(question.name) &&
    q.class === 'IN' &&
    RR_TYPE_CODES[typeMnemonic(q.type)] === RR_TYPE_CODES[question.type]
  );
}
