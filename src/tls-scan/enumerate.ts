/**
 * What a server accepts, told from ServerHellos alone: which protocol
 * versions, which cipher suites in which order, which key-exchange groups,
 * the DHE prime's size and the TLS ≤ 1.2 extensions it acknowledges. No
 * handshake is completed (docs/tls-scan.md, "How the scan works").
 *
 * Suites and groups are enumerated by offering everything and removing what
 * the server chose, so a protocol costs one handshake per accepted suite plus
 * one, not one per registered suite (testssl.sh's and sslyze's method too).
 * ChaCha20 suites are offered last throughout: a server that enforces its own
 * order may still give ChaCha20 to a client that lists it first (OpenSSL's
 * PrioritizeChaCha, for phones without AES hardware), and a ChaCha20-first
 * offer would read that as the client's order winning — the false positive of
 * internet.nl's issues 683, 753 and 1734.
 */

import { TargetError } from '../net/errors.js';
import {
  type CipherSuite,
  FALLBACK_SCSV,
  SSLV2_CIPHER_SPECS,
  suitesFor,
  type TlsProtocol,
} from './cipher-suites.js';
import { type ClientHelloOptions, NAMED_GROUPS } from './client-hello.js';
import { type Ffdhe, readServerKeyExchange } from './key-exchange.js';
import type { ServerHello } from './server-hello.js';
import { type HelloAnswer, ScanExhausted, type ScanSession } from './session.js';

/** Newest first: the order the answer lists protocols' suites in. */
export const TLS_VERSIONS: readonly TlsProtocol[] = ['TLSv1.3', 'TLSv1.2', 'TLSv1.1', 'TLSv1', 'SSLv3'];

export interface AcceptedSuite {
  protocol: TlsProtocol | 'SSLv2';
  code: number;
}

export interface ProtocolFindings {
  offered: Record<TlsProtocol | 'SSLv2', boolean>;
  /** Per offered TLS protocol, in the order found. */
  suites: Map<TlsProtocol, number[]>;
  sslv2Specs: number[];
  serverPreference: Partial<Record<TlsProtocol, boolean | null>>;
  chacha20Preference: Partial<Record<TlsProtocol, boolean | null>>;
  /** The first ServerHello of each offered TLS ≤ 1.2 protocol (its extensions tell the features). */
  hellos: Partial<Record<TlsProtocol, ServerHello>>;
}

const ECDHE_GROUPS = ['x25519', 'secp256r1', 'secp384r1', 'secp521r1', 'x448'] as const;
const FFDHE_GROUPS = ['ffdhe2048', 'ffdhe3072', 'ffdhe4096', 'ffdhe6144', 'ffdhe8192'] as const;
const HYBRID_GROUPS = ['X25519MLKEM768', 'SecP256r1MLKEM768', 'SecP384r1MLKEM1024'] as const;
/** Every group the scan asks about, in a modern client's order of preference. */
export const SCAN_GROUPS = [...HYBRID_GROUPS, ...ECDHE_GROUPS, ...FFDHE_GROUPS] as const;
export type ScanGroup = (typeof SCAN_GROUPS)[number];
const code = (g: ScanGroup) => NAMED_GROUPS[g];
const TLS12_GROUPS = [...ECDHE_GROUPS, ...FFDHE_GROUPS].map(code);

const isChaCha = (s: CipherSuite) => s.encryption === 'ChaCha20';
const forwardSecret = (s: CipherSuite) => /^(EC)?DHE|^any$/.test(s.keyExchange);
const aead = (s: CipherSuite) => /GCM|CCM|ChaCha20|AEGIS/.test(s.encryption);

/** A modern client's order: forward secrecy, then AEAD, then strength; ChaCha20 last (see above). */
export function clientOrder(suites: readonly CipherSuite[]): number[] {
  const rank = (s: CipherSuite) =>
    (isChaCha(s) ? 8 : 0) + (forwardSecret(s) ? 0 : 4) + (aead(s) ? 0 : 2) + (s.export ? 1 : 0);
  return [...suites].sort((a, b) => rank(a) - rank(b) || b.bits - a.bits).map((s) => s.code);
}

const TABLE = new Map<TlsProtocol, CipherSuite[]>(TLS_VERSIONS.map((p) => [p, suitesFor(p)]));
const byCode = (protocol: TlsProtocol, c: number) => TABLE.get(protocol)!.find((s) => s.code === c);

/** The hello for `protocol` offering `suites`: everything a server might want besides. */
function helloFor(
  protocol: TlsProtocol,
  suites: readonly number[],
  alpn: readonly string[],
): Omit<ClientHelloOptions, 'serverName'> {
  if (protocol === 'TLSv1.3') {
    return {
      version: 'TLSv1.3',
      cipherSuites: suites,
      groups: SCAN_GROUPS.map(code),
      keyShares: ['x25519'],
      alpn,
    };
  }
  // SSLv3 servers predate extensions; some refuse a hello that carries them.
  if (protocol === 'SSLv3') return { version: 'SSLv3', cipherSuites: suites, noExtensions: true };
  return { version: protocol, cipherSuites: suites, groups: TLS12_GROUPS, alpn };
}

/** The suite a reply chose for `protocol`, if it is a ServerHello (or HRR) of that protocol. */
function chosen(answer: HelloAnswer, protocol: TlsProtocol): number | undefined {
  const { reply } = answer;
  if ((reply.kind === 'server_hello' || reply.kind === 'hello_retry_request') && reply.version === protocol)
    return reply.cipherSuite;
  return undefined;
}

/** Protocols, suites and order. Throws only what the session throws before the first answer. */
export async function enumerateProtocols(
  session: ScanSession,
  alpn: readonly string[],
  notes: string[],
): Promise<ProtocolFindings> {
  const found: ProtocolFindings = {
    offered: {
      SSLv2: false,
      SSLv3: false,
      TLSv1: false,
      'TLSv1.1': false,
      'TLSv1.2': false,
      'TLSv1.3': false,
    },
    suites: new Map(),
    sslv2Specs: [],
    serverPreference: {},
    chacha20Preference: {},
    hellos: {},
  };
  const detect = TLS_VERSIONS.map(async (protocol) => {
    const offer = clientOrder(TABLE.get(protocol)!);
    const answer = await session.hello(helloFor(protocol, offer, alpn));
    const first = chosen(answer, protocol);
    if (first === undefined) {
      // Silence is not a refusal: say that the verdict rests on a timeout.
      if (answer.end === 'timeout')
        notes.push(
          `The ${protocol} hello got no answer within ${session.handshakeTimeoutMs} ms; ${protocol} is reported as not offered.`,
        );
      return;
    }
    found.offered[protocol] = true;
    if (answer.reply.kind === 'server_hello' && protocol !== 'TLSv1.3') found.hellos[protocol] = answer.reply;
    await enumerateSuites(session, protocol, offer, first, alpn, found);
  });
  const sslv2 = session.sslv2Hello(SSLV2_CIPHER_SPECS.map((s) => s.code)).then((answer) => {
    if (answer.reply.kind !== 'sslv2_server_hello') return;
    found.offered.SSLv2 = true;
    // An SSLv2 server lists every spec it shares with the client in one answer (SSLv2 draft §2.6).
    found.sslv2Specs = answer.reply.cipherSpecs;
  });
  // Every detection failing to connect means the target cannot be scanned: that error is the
  // scan's. One failing among answers (a server limiting connections) is a gap, said in notes.
  const settled = await Promise.allSettled([...detect, sslv2]);
  const failures = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  const unreached = failures.filter((err) => !(err instanceof ScanExhausted));
  if (unreached.length === settled.length) throw unreached[0];
  for (const err of unreached) noteFailure(notes, 'A protocol probe')(err);
  if (session.exhausted) notes.push(`Protocols and suites may be incomplete: ${session.exhausted.message}.`);
  return found;
}

/** Offer everything, remove what the server chose, until it refuses; then tell whose order it was. */
async function enumerateSuites(
  session: ScanSession,
  protocol: TlsProtocol,
  offer: number[],
  first: number,
  alpn: readonly string[],
  found: ProtocolFindings,
): Promise<void> {
  const accepted = [first];
  let remaining = offer.filter((c) => c !== first);
  while (remaining.length > 0) {
    const next = chosen(await session.hello(helloFor(protocol, remaining, alpn)), protocol);
    if (next === undefined || !remaining.includes(next)) break;
    accepted.push(next);
    remaining = remaining.filter((c) => c !== next);
  }
  found.suites.set(protocol, accepted);
  await preference(session, protocol, accepted, alpn, found);
}

/**
 * Server preference: offer the accepted suites in reverse (ChaCha20 still last). The server's
 * first pick again means its order rules; the reversed list's first means the client's does.
 */
async function preference(
  session: ScanSession,
  protocol: TlsProtocol,
  accepted: number[],
  alpn: readonly string[],
  found: ProtocolFindings,
): Promise<void> {
  found.serverPreference[protocol] = null;
  found.chacha20Preference[protocol] = null;
  if (accepted.length < 2) return;
  const suite = (c: number) => byCode(protocol, c)!;
  const chacha = accepted.filter((c) => isChaCha(suite(c)));
  const others = accepted.filter((c) => !isChaCha(suite(c)));
  const reversed = others.length >= 2 ? [...others].reverse().concat(chacha) : [...accepted].reverse();
  const pick = chosen(await session.hello(helloFor(protocol, reversed, alpn)), protocol);
  if (pick === accepted[0]) found.serverPreference[protocol] = true;
  else if (pick === reversed[0]) found.serverPreference[protocol] = false;
  // Under the server's order, does a ChaCha20-first client still get ChaCha20?
  if (found.serverPreference[protocol] !== true || chacha.length === 0 || chacha.includes(accepted[0]!))
    return;
  const chachaFirst = [chacha[0]!, ...accepted.filter((c) => c !== chacha[0])];
  const got = chosen(await session.hello(helloFor(protocol, chachaFirst, alpn)), protocol);
  if (got !== undefined) found.chacha20Preference[protocol] = got === chacha[0];
}

export interface GroupFindings {
  /** In the order the server chose them. */
  groups: { name: ScanGroup; protocol: 'TLSv1.3' | 'TLSv1.2' }[];
  dheBits: number | null;
  /** The RFC 7919 group the DHE prime is, null for a prime of the server's own. */
  dheGroup: Ffdhe | null;
}

/**
 * Groups: with TLS 1.3, a hello offering every group and no key share makes the server name the
 * one it wants in a HelloRetryRequest (RFC 8446 §4.1.4) — no ML-KEM share need be computed —
 * then that group is removed and the hello sent again. Without TLS 1.3, the same with ECDHE
 * suites, the curve read from the ServerKeyExchange (RFC 8422 §5.4). The DHE prime's size comes
 * from a DHE-only hello's ServerKeyExchange (RFC 5246 §7.4.3).
 */
export async function enumerateGroups(
  session: ScanSession,
  protocols: ProtocolFindings,
  notes: string[],
): Promise<GroupFindings> {
  const out: GroupFindings = { groups: [], dheBits: null, dheGroup: null };
  const tls13 = protocols.suites.get('TLSv1.3');
  const tls12 = (['TLSv1.2', 'TLSv1.1', 'TLSv1', 'SSLv3'] as const).find((p) => protocols.suites.has(p));
  const tasks: Promise<void>[] = [];
  if (tls13) tasks.push(groups13(session, tls13, out));
  if (tls12) {
    const suites = protocols.suites.get(tls12)!.map((c) => byCode(tls12, c)!);
    // TLS ≤ 1.2 ties an ECDSA certificate to the curves the client lists (RFC 8422 §5.1): with
    // its curve removed the server must refuse, so RSA-signed suites tell the groups when there are any.
    const ecdheAll = suites.filter((s) => s.keyExchange === 'ECDHE');
    const rsa = ecdheAll.filter((s) => s.authentication === 'RSA');
    const ecdhe = (rsa.length > 0 ? rsa : ecdheAll).map((s) => s.code);
    const dhe = suites.filter((s) => s.keyExchange === 'DHE').map((s) => s.code);
    if (!tls13 && ecdhe.length > 0) tasks.push(groups12(session, tls12, ecdhe, out));
    if (dhe.length > 0) tasks.push(dheSize(session, tls12, dhe, out));
  }
  await Promise.all(tasks.map((t) => t.catch(noteFailure(notes, 'The group probes'))));
  return out;
}

async function groups13(session: ScanSession, suites: number[], out: GroupFindings): Promise<void> {
  let remaining: ScanGroup[] = [...SCAN_GROUPS];
  while (remaining.length > 0) {
    const { reply } = await session.hello({
      version: 'TLSv1.3',
      cipherSuites: suites,
      groups: remaining.map(code),
      keyShares: [],
    });
    const group =
      reply.kind === 'hello_retry_request'
        ? reply.selectedGroup
        : reply.kind === 'server_hello'
          ? reply.extensions.keyShareGroup
          : null;
    const name = remaining.find((g) => code(g) === group);
    if (!name) return;
    out.groups.push({ name, protocol: 'TLSv1.3' });
    remaining = remaining.filter((g) => g !== name);
  }
}

async function groups12(
  session: ScanSession,
  protocol: TlsProtocol,
  suites: number[],
  out: GroupFindings,
): Promise<void> {
  let remaining: ScanGroup[] = [...ECDHE_GROUPS];
  while (remaining.length > 0) {
    const { reply } = await session.hello(
      { version: protocol, cipherSuites: suites, groups: remaining.map(code) },
      'flight',
    );
    if (reply.kind !== 'server_hello') return;
    const group = readServerKeyExchange(reply, 'ECDHE')?.group;
    const name = remaining.find((g) => code(g) === group);
    if (!name) return;
    out.groups.push({ name, protocol: 'TLSv1.2' });
    remaining = remaining.filter((g) => g !== name);
  }
}

async function dheSize(
  session: ScanSession,
  protocol: TlsProtocol,
  suites: number[],
  out: GroupFindings,
): Promise<void> {
  // No ffdhe groups offered: the prime a server gives a client that names none (RFC 7919 §4).
  const { reply } = await session.hello(
    { version: protocol, cipherSuites: suites, groups: ECDHE_GROUPS.map(code) },
    'flight',
  );
  if (reply.kind !== 'server_hello') return;
  const params = readServerKeyExchange(reply, 'DHE');
  out.dheBits = params?.dhBits ?? null;
  out.dheGroup = params?.dhGroup ?? null;
}

export interface HelloFeatures {
  compression: boolean | null;
  heartbeat: boolean | null;
  fallbackScsv: boolean | null;
}

/**
 * TLS compression and heartbeat (one TLS ≤ 1.2 hello offering DEFLATE and the heartbeat
 * extension), and TLS_FALLBACK_SCSV: a hello below the best version carrying the SCSV must be
 * refused with inappropriate_fallback (RFC 7507 §3).
 */
export async function helloFeatures(
  session: ScanSession,
  protocols: ProtocolFindings,
  notes: string[],
): Promise<HelloFeatures> {
  const out: HelloFeatures = { compression: null, heartbeat: null, fallbackScsv: null };
  const offered = TLS_VERSIONS.filter((p) => protocols.suites.has(p));
  const best12 = offered.find((p) => p !== 'TLSv1.3');
  const tasks: Promise<void>[] = [];
  if (best12) {
    const suites = protocols.suites.get(best12)!;
    tasks.push(
      session
        .hello({ ...helloFor(best12, suites, []), compressionMethods: [1, 0], heartbeat: true })
        .then(({ reply }) => {
          if (reply.kind !== 'server_hello') return;
          out.compression = reply.compressionMethod !== 0;
          out.heartbeat = reply.extensions.heartbeat !== null;
        }),
    );
  }
  const below = offered[1];
  if (below && below !== 'TLSv1.3') {
    const suites = [...protocols.suites.get(below)!, FALLBACK_SCSV];
    tasks.push(
      session.hello(helloFor(below, suites, [])).then(({ reply }) => {
        if (reply.kind === 'alert') out.fallbackScsv = reply.name === 'inappropriate_fallback';
        else if (reply.kind === 'server_hello') out.fallbackScsv = false;
      }),
    );
  }
  await Promise.all(tasks.map((t) => t.catch(noteFailure(notes, 'The feature probes'))));
  return out;
}

/**
 * A bound running out ends a part of the scan (the answer says so once, as incomplete); a
 * connection the server refused or dropped mid-scan is a gap said in `notes`; anything else is
 * a bug and is thrown.
 */
function noteFailure(notes: string[], what: string): (err: unknown) => void {
  return (err) => {
    if (err instanceof ScanExhausted) return;
    if (err instanceof TargetError) {
      notes.push(
        `${what} could not reach the server (${err.message}); what they would have told is left out.`,
      );
      return;
    }
    throw err;
  };
}
