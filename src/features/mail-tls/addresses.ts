/**
 * The SMTP sessions of one GET /api/mail-tls request: each distinct address
 * of its MX hosts is contacted once (issue 29 F3: ten MX names pointing at
 * one server cost that server one session, not ten), and the session is
 * reported under every host that points there, judged for that host's name.
 *
 * One session means one SNI: the first host in preference order that points
 * at the address (`tls.connection.sni` says which). The certificate the
 * server sent for it is judged for every other host name as a sender
 * connecting under that name would judge it (the chain as OpenSSL verified
 * it, the name checked for that host: net/smtp-starttls.ts `otherNames`).
 * A server that chooses its certificate by SNI may send another name's
 * sender another certificate; most senders send no SNI at all (Postfix's
 * default), so no single SNI is every sender's view anyway.
 *
 * A session that cannot be had (no slot freed in time: net/outbound.ts) fails
 * the request with its 503; the request's other sessions are stopped then, so
 * they free their slots at once rather than at their deadlines.
 */
import { UnsafeTargetError } from '../../net/errors.js';
import type { Outbound } from '../../net/outbound.js';
import { SMTP_PORT, type SmtpProbe, type SmtpProbeOptions, type SmtpReply } from '../../net/smtp-starttls.js';
import { clip } from '../../text.js';
import { reverseNames, type TrackedMailDns } from '../email/mail-dns.js';
import { NAMES_PER_LOOKUP_LIMIT } from '../spf/spf-types.js';
import { CertificateParseError } from '../tls/certificate.js';
import type { TlsEvidence } from '../tls/tls.schema.js';
import { sentList, tlsEvidence } from '../tls/tls.service.js';
import { type DaneInput, evaluateDane } from './dane.js';
import type { MailTlsAddress } from './mail-tls.schema.js';
import { addressStatus } from './verdicts.js';

/** One SMTP session's deadlines (net/smtp-starttls.ts). */
export type SmtpDeadlines = Pick<
  SmtpProbeOptions,
  'timeoutMs' | 'connectTimeoutMs' | 'bannerTimeoutMs' | 'replyTimeoutMs' | 'handshakeTimeoutMs'
>;

export interface SessionDeps {
  outbound: Pick<Outbound, 'probeSmtpStarttls'>;
  heloName: string;
  deadlines: SmtpDeadlines;
}

/** A host's TLSA answer and netdiag's own verdict on it. */
export interface HostTlsa {
  outcome: DaneInput['tlsa'];
  dnssec: DaneInput['dnssec'];
}

/** What became of one address: refused before contact, or its session and the SNI it sent. */
type Session = { refused: string } | { probe: SmtpProbe; sni: string };

export interface RequestSessions {
  /** The address as `host` sees it: the one session of the address, judged for `host`. */
  judge(
    host: string,
    address: string,
    family: 4 | 6,
    tlsa: HostTlsa,
    now: () => Date,
  ): Promise<MailTlsAddress>;
}

/**
 * Starts one session per distinct address of `hosts` (in preference order), at once.
 * Each session's outcome is awaited through `judge`.
 */
export function startSessions(
  deps: SessionDeps,
  dns: TrackedMailDns,
  hosts: readonly { host: string; addresses: readonly string[] }[],
): RequestSessions {
  const namesOf = new Map<string, string[]>();
  for (const { host, addresses } of hosts) {
    for (const address of addresses) {
      const names = namesOf.get(address) ?? [];
      if (!names.includes(host)) names.push(host);
      namesOf.set(address, names);
    }
  }
  const stop = new AbortController();
  const sessions = new Map<string, Promise<Session>>();
  const reverse = new Map<string, ReturnType<typeof forwardConfirmed>>();
  for (const [address, [sni, ...others]] of namesOf) {
    const session = sessionWith(deps, address, sni!, others, stop);
    // Every host of the address awaits it; should the request fail first, it must not be left unhandled.
    session.catch(() => undefined);
    sessions.set(address, session);
    reverse.set(address, forwardConfirmed(dns, address));
  }
  return {
    judge: async (host, address, family, tlsa, now) =>
      judged(host, address, family, tlsa, now, await sessions.get(address)!, await reverse.get(address)!),
  };
}

async function sessionWith(
  deps: SessionDeps,
  address: string,
  sni: string,
  otherNames: string[],
  stop: AbortController,
): Promise<Session> {
  try {
    const probe = await deps.outbound.probeSmtpStarttls(address, {
      servername: sni,
      ...(otherNames.length > 0 ? { otherNames } : {}),
      heloName: deps.heloName,
      ...deps.deadlines,
      signal: stop.signal,
    });
    return { probe, sni };
  } catch (err) {
    if (err instanceof UnsafeTargetError) return { refused: err.message };
    stop.abort(err);
    throw err;
  }
}

function judged(
  host: string,
  address: string,
  family: 4 | 6,
  tlsa: HostTlsa,
  now: () => Date,
  session: Session,
  { ptr, fcrdns }: { ptr: string[]; fcrdns: boolean | null },
): MailTlsAddress {
  if ('refused' in session) {
    return {
      address,
      family,
      status: 'refused',
      refused_reason: session.refused,
      ptr,
      fcrdns,
      smtp: null,
      tls: null,
      dane: null,
    };
  }
  const { probe, sni } = session;
  // OpenSSL's verdict for this host's name: the handshake's own for the SNI name, the probe's check for the others.
  const verdict = host === sni ? undefined : probe.otherNames?.find((v) => v.name === host);
  const handshake =
    probe.handshake && verdict
      ? { ...probe.handshake, authorized: verdict.authorized, authorizationError: verdict.authorizationError }
      : probe.handshake;
  // DANE matches the certificates as the server sent them (RFC 7672 §3.1); Node's reconstruction only when unreadable.
  const sent = handshake ? sentList(handshake) : undefined;
  const chain = handshake ? (sent ?? handshake.peerChain) : undefined;
  let tls: TlsEvidence | null = null;
  if (handshake && handshake.peerChain.length > 0) {
    try {
      tls = tlsEvidence(handshake, { host, port: SMTP_PORT, sni, now: now() }, sent);
    } catch (err) {
      if (!(err instanceof CertificateParseError)) throw err;
    }
  }
  const dane = evaluateDane({ host, tlsa: tlsa.outcome, dnssec: tlsa.dnssec, chain, now: now() });
  return {
    address,
    family,
    status: addressStatus(probe, tls, dane),
    ptr,
    fcrdns,
    smtp: {
      banner: shownReply(probe.banner),
      ehlo_extensions: probe.extensions.slice(0, SHOWN.lines).map((k) => clip(k, SHOWN.keyword)),
      starttls_offered: probe.starttlsOffered,
      ehlo_after_tls: shownReply(probe.ehloAfterTls),
      timings: probe.timings,
      ...(probe.failure ? { failure: probe.failure } : {}),
    },
    tls,
    dane,
  };
}

/**
 * What the answer shows of a server's replies: the server writes them (up to
 * 200 lines of 4 KB each before the probe calls it garbage), and one request
 * holds up to 20 sessions, so lines are listed up to `lines` and cut at
 * RFC 5321's 512 octets (§4.5.3.1.5); an EHLO keyword at `keyword`.
 */
const SHOWN = { lines: 30, line: 512, keyword: 64 } as const;

function shownReply(reply: SmtpReply | undefined): SmtpReply | null {
  if (reply === undefined) return null;
  return { code: reply.code, lines: reply.lines.slice(0, SHOWN.lines).map((l) => clip(l, SHOWN.line)) };
}

/** PTR names of the address, and whether one of them resolves back to it (FCrDNS); null when the PTR lookup failed. */
async function forwardConfirmed(
  dns: TrackedMailDns,
  address: string,
): Promise<{ ptr: string[]; fcrdns: boolean | null }> {
  const found = await reverseNames(dns, address, NAMES_PER_LOOKUP_LIMIT);
  return found ? { ptr: found.names, fcrdns: found.confirmed.length > 0 } : { ptr: [], fcrdns: null };
}
