/**
 * DNS messages on the wire (RFC 1035 §4) through dns-packet: the one query
 * every transport sends, and the decoding and checks every response passes
 * before it becomes a DnsAnswer.
 */
import * as packet from 'dns-packet';
import { ProviderError } from '../../errors.js';
import { canonicalName } from './names.js';
import {
  EDNS_OPTION_EDE,
  edeName,
  packetTypeName,
  RR_TYPE_CODES,
  rcodeName,
  typeMnemonic,
} from './parameters.js';
import { type PacketRecord, toDnsRR } from './records.js';
import type { DnsAnswer, DnsEde, DnsRecordType, DnsRR } from './types.js';

/**
 * EDNS0 UDP payload size we advertise: 1232 bytes avoids IP fragmentation on
 * every common path (DNS Flag Day 2020, https://www.dnsflagday.net/2020/).
 */
export const EDNS_UDP_PAYLOAD = 1232;

/** The largest DNS message any transport can carry (2-byte length prefix, RFC 1035 §4.2.2). */
export const MAX_MESSAGE_BYTES = 65_535;

export interface DnsQuestion {
  name: string;
  type: DnsRecordType;
}

/** How a query asks, when it is not the recursive one the resolver client sends. */
export interface QueryFlags {
  /** RD. Default true: a resolver is asked to recurse; an authoritative server is not. */
  recursionDesired?: boolean;
  /** CD (RFC 4035 §3.2.2). Default false; a client that validates itself sets it. */
  checkingDisabled?: boolean;
}

/**
 * A query with EDNS0 (RFC 6891) and the DO bit (RFC 3225), so the server
 * returns DNSSEC records (and a resolver sets AD when it validated).
 * Recursive (RD) unless `flags` says otherwise. `name` is already normalized.
 */
export function encodeQuery(id: number, q: DnsQuestion, flags: QueryFlags = {}): Buffer {
  const query = {
    type: 'query',
    id,
    flags:
      (flags.recursionDesired === false ? 0 : packet.RECURSION_DESIRED) |
      (flags.checkingDisabled ? packet.CHECKING_DISABLED : 0),
    questions: [{ name: q.name, type: packetTypeName(q.type), class: 'IN' }],
    additionals: [
      {
        name: '.',
        type: 'OPT',
        udpPayloadSize: EDNS_UDP_PAYLOAD,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: packet.DNSSEC_OK,
        options: [],
      },
    ],
  };
  // dns-packet's declarations list neither `UNKNOWN_<n>` types (HTTPS) nor an OPT record without flag_do.
  return packet.encode(query as unknown as packet.Packet);
}

/** A fresh random message id (RFC 5452 §9.2: ids must not be predictable). */
export function randomId(): number {
  return crypto.getRandomValues(new Uint16Array(1))[0]!;
}

/** dns-packet's decoded message, as far as we read it. */
interface PacketMessage {
  id: number;
  type: 'query' | 'response';
  flags: number;
  flag_aa: boolean;
  flag_tc: boolean;
  flag_rd: boolean;
  flag_ra: boolean;
  flag_ad: boolean;
  flag_cd: boolean;
  questions: { name: string; type: string; class: string }[];
  answers: PacketRecord[];
  authorities: PacketRecord[];
  additionals: (PacketRecord & { extendedRcode?: number; options?: { code: number; data?: Buffer }[] })[];
}

/** A record of a decoded message as dns-packet gives it (the OPT pseudo-record is kept apart). */
export type MessageRecord = Exclude<packet.Answer, packet.OptAnswer>;

/**
 * A response as dns-packet decodes it, checked as every response is (QR=1,
 * opcode QUERY, at most one OPT), with the full rcode (RFC 6891 §6.1.3).
 */
export interface DecodedMessage {
  id: number;
  rcode: number;
  flags: { aa: boolean; tc: boolean; rd: boolean; ra: boolean; ad: boolean; cd: boolean };
  /** The first question, as the server echoed it (name canonical, type by dns-packet's name). */
  question: { name: string; type: string; class: string } | undefined;
  answers: MessageRecord[];
  authorities: MessageRecord[];
  /** The additional section without the OPT pseudo-record. */
  additionals: MessageRecord[];
  /** The OPT pseudo-record's options (EDNS), empty without one. */
  ednsOptions: { code: number; data?: Buffer }[];
}

export interface DecodedResponse {
  id: number;
  /** The first question, as echoed by the server (type by mnemonic, name canonical). */
  question: { name: string; type: string; class: string } | undefined;
  answer: DnsAnswer;
}

/**
 * Decodes a response into dns-packet's records, for callers that need the
 * records as they came (the iterative engine, the validator); a message that
 * is not a well-formed response throws bad_response.
 */
export function decodeMessage(bytes: Buffer): DecodedMessage {
  if (bytes.length > MAX_MESSAGE_BYTES)
    throw new ProviderError('bad_response', 'DNS message larger than 65535 bytes');
  let msg: PacketMessage;
  try {
    msg = packet.decode(bytes) as unknown as PacketMessage;
  } catch (err) {
    throw new ProviderError('bad_response', `undecodable DNS message (${(err as Error).message})`, {
      cause: err,
    });
  }
  if (msg.type !== 'response')
    throw new ProviderError('bad_response', 'DNS message is not a response (QR=0)');
  // Opcode lives in bits 11-14 of the flags word; we only ever ask standard queries.
  if (((msg.flags >> 11) & 0xf) !== 0)
    throw new ProviderError('bad_response', 'DNS response opcode is not QUERY');

  const opts = msg.additionals.filter((rr) => rr.type === 'OPT');
  if (opts.length > 1)
    throw new ProviderError('bad_response', 'DNS response carries more than one OPT record');
  const opt = opts[0];
  const q = msg.questions[0];
  return {
    id: msg.id,
    // RFC 6891 §6.1.3: the OPT record holds the upper 8 bits of the 12-bit rcode.
    rcode: ((opt?.extendedRcode ?? 0) << 4) | (msg.flags & 0xf),
    flags: {
      aa: msg.flag_aa,
      tc: msg.flag_tc,
      rd: msg.flag_rd,
      ra: msg.flag_ra,
      ad: msg.flag_ad,
      cd: msg.flag_cd,
    },
    question: q && { name: canonicalName(q.name), type: q.type, class: q.class },
    answers: msg.answers as unknown as MessageRecord[],
    authorities: msg.authorities as unknown as MessageRecord[],
    additionals: msg.additionals.filter((rr) => rr.type !== 'OPT') as unknown as MessageRecord[],
    ednsOptions: opt?.options ?? [],
  };
}

/** Decodes a response into a DnsAnswer; a message that is not a well-formed response throws bad_response. */
export function decodeResponse(bytes: Buffer): DecodedResponse {
  const msg = decodeMessage(bytes);
  let answers: DnsRR[];
  let authorities: DnsRR[];
  try {
    answers = convert(msg.answers as unknown as PacketRecord[]);
    authorities = convert(msg.authorities as unknown as PacketRecord[]);
  } catch (err) {
    throw new ProviderError('bad_response', `malformed record in DNS response (${(err as Error).message})`, {
      cause: err,
    });
  }

  const q = msg.question;
  return {
    id: msg.id,
    question: q && { name: q.name, type: typeMnemonic(q.type), class: q.class },
    answer: {
      rcode: rcodeName(msg.rcode),
      flags: msg.flags,
      answers,
      authorities,
      ede: extendedErrors(msg.ednsOptions),
    },
  };
}

function convert(records: PacketRecord[]): DnsRR[] {
  const out: DnsRR[] = [];
  for (const rec of records) {
    const rr = toDnsRR(rec);
    if (rr) out.push(rr);
  }
  return out;
}

/** RFC 8914 §2: INFO-CODE (2 bytes) then optional UTF-8 EXTRA-TEXT. */
function extendedErrors(options: { code: number; data?: Buffer }[]): DnsEde[] {
  const out: DnsEde[] = [];
  for (const option of options) {
    if (option.code !== EDNS_OPTION_EDE || !option.data || option.data.length < 2) continue;
    const ede: DnsEde = { code: option.data.readUInt16BE(0) };
    // Some servers NUL-terminate the text; RFC 8914 says it SHOULD NOT be.
    const text = option.data.subarray(2).toString('utf8').replace(/\0+$/, '');
    if (text !== '') ede.text = text;
    out.push(ede);
  }
  return out;
}

/** Whether the response answers exactly our question (same id, name, type, class IN). */
export function answersQuestion(res: DecodedResponse, id: number, q: DnsQuestion): boolean {
  if (res.id !== id || !res.question) return false;
  return (
    res.question.name === q.name &&
    res.question.class === 'IN' &&
    RR_TYPE_CODES[res.question.type] === RR_TYPE_CODES[q.type]
  );
}

export function isAnswerRcode(rcode: string): boolean {
  return rcode === 'NOERROR' || rcode === 'NXDOMAIN';
}

/**
 * NOERROR (with or without data) and NXDOMAIN are answers; every other rcode
 * (SERVFAIL, REFUSED, FORMERR, NOTIMP, BADVERS, BADCOOKIE, ...) is an
 * operational failure the chain falls back from.
 */
export function assertAnswer(answer: DnsAnswer): DnsAnswer {
  if (isAnswerRcode(answer.rcode)) return answer;
  const details = answer.ede.map((e) => `EDE ${e.code} ${edeName(e.code)}${e.text ? `: ${e.text}` : ''}`);
  const message = details.length > 0 ? `${answer.rcode} (${details.join('; ')})` : answer.rcode;
  throw new ProviderError('upstream_error', message);
}

/**
 * Decodes and checks a response received on a connection that carries only
 * our exchanges (TCP, DoT, DoH): a wrong id or question there is a broken
 * server, not a spoofing attempt, so it fails instead of being ignored.
 */
export function expectAnswer(bytes: Buffer, id: number, q: DnsQuestion): DnsAnswer {
  const res = decodeResponse(bytes);
  if (res.question === undefined && !isAnswerRcode(res.answer.rcode)) {
    // Servers may omit the question when refusing or failing; the rcode is still the truth.
    return assertAnswer(res.answer);
  }
  if (!answersQuestion(res, id, q)) {
    throw new ProviderError('bad_response', 'DNS response does not match the question asked');
  }
  return assertAnswer(res.answer);
}
