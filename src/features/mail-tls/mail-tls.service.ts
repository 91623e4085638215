/**
 * GET /api/mail-tls: what a sending mail server meets at each MX host of a
 * domain. For every MX host (preference order, at most 10; the implicit MX of
 * RFC 5321 §5.1 when there is none) and at most one IPv4 and one IPv6 address
 * of it, all at once with one deadline each: the address checked by outbound
 * safety (a private one is reported as refused, never contacted), an SMTP
 * STARTTLS session on port 25 (net/smtp-starttls.ts), the certificate judged
 * as GET /api/tls judges it for the MX host name, DANE against the chain as
 * sent, the MTA-STS policy's verdict for the host, and FCrDNS.
 *
 * Cached 10 minutes; not when a DNS lookup failed or no host could be reached
 * (the usual cause is this service's own outbound port 25 being blocked).
 */
import { type CachedLoader, type Freshness, freshness } from '../../cache/cached.js';
import { AppError } from '../../errors.js';
import { UnsafeTargetError } from '../../net/errors.js';
import { normalizeDomain } from '../../net/names.js';
import type { Outbound } from '../../net/outbound.js';
import { SMTP_PORT, type SmtpProbe } from '../../net/smtp-starttls.js';
import type { DnsResolver } from '../../providers/dns/resolver.js';
import { createMailDns, reverseNames, type TrackedMailDns } from '../email/mail-dns.js';
import {
  evaluateMtaSts,
  MTA_STS_MAX_BYTES,
  type MtaStsEvaluation,
  mxPatternMatches,
  parseMtaStsRecord,
  policyUrl,
} from '../email/mta-sts.js';
import { sortMx } from '../email/mx.js';
import type { ResourceFetcher } from '../email/resource-fetcher.js';
import { smtpTlsaName } from '../email/tlsa.js';
import { type Finding, finding } from '../email/types.js';
import { NAMES_PER_LOOKUP_LIMIT } from '../spf/spf-types.js';
import { CertificateParseError } from '../tls/certificate.js';
import type { TlsEvidence } from '../tls/tls.schema.js';
import { sentList, tlsEvidence } from '../tls/tls.service.js';
import { evaluateDane } from './dane.js';
import type {
  MailTlsAddress,
  MailTlsDane,
  MailTlsHost,
  MailTlsQuery,
  MailTlsResponse,
} from './mail-tls.schema.js';
import {
  addressFindings,
  addressStatus,
  domainStatus,
  hostStatus,
  portBlocked,
  summarize,
  worstDane,
} from './verdicts.js';

export const MAIL_TLS_TTL = 600;
/** RFC 5321 does not bound MX sets; ten hosts is more than any real domain and bounds our connections. */
export const MAX_MX_HOSTS = 10;

export interface MailTlsDeps {
  dns: Pick<DnsResolver, 'resolve'>;
  outbound: Pick<Outbound, 'probeSmtpStarttls'>;
  fetcher: ResourceFetcher;
  loader: Pick<CachedLoader, 'load'>;
  clock: () => number;
  heloName: string;
  enabled: boolean;
  /** Deadline of one SMTP session up to the end of the handshake. */
  timeoutMs: number;
  /** Deadline of the TCP connect alone: where port 25 is blocked, the answer must come quickly. */
  connectTimeoutMs: number;
}

export async function lookupMailTls(
  deps: MailTlsDeps,
  query: MailTlsQuery,
): Promise<{ body: MailTlsResponse; cache: Freshness }> {
  if (!deps.enabled)
    throw new AppError(
      503,
      'unavailable',
      'mail-tls is turned off on this instance (MAIL_TLS_ENABLED=false)',
    );
  const domain = normalizeDomain(query.domain, { param: 'domain' });
  const result = await deps.loader.load(`mail-tls:${domain}`, async () => {
    const { body, cacheable } = await checkMailTls(deps, domain);
    return { value: body, ttl: cacheable ? MAIL_TLS_TTL : 0 };
  });
  return { body: result.value, cache: freshness(result) };
}

async function checkMailTls(
  deps: MailTlsDeps,
  domain: string,
): Promise<{ body: MailTlsResponse; cacheable: boolean }> {
  const dns = createMailDns(deps.dns);
  const now = () => new Date(deps.clock());
  const [mx, stsTxt] = await Promise.all([dns.mx(domain), dns.txt(`_mta-sts.${domain}`)]);
  if (mx.kind === 'error') {
    const stats = dns.stats();
    throw stats.firstFailure ?? new AppError(502, 'upstream_failed', `MX lookup of ${domain} failed`);
  }
  const base = {
    domain,
    helo_name: deps.heloName,
    checked_at: now().toISOString(),
  };
  const records = mx.kind === 'answer' ? sortMx(mx.records) : [];
  const nullMx = records.length === 1 && records[0]!.exchange === '.';
  if (mx.kind === 'answer' && mx.rcode === 'NXDOMAIN') {
    return done(
      dns,
      {
        ...base,
        status: 'no_mail',
        summary: `${domain} does not exist (NXDOMAIN).`,
        mx: { state: 'nxdomain', hosts: 0 },
      },
      [],
      true,
    );
  }
  if (nullMx) {
    return done(
      dns,
      {
        ...base,
        status: 'no_mail',
        summary: `${domain} publishes a null MX: it accepts no mail (RFC 7505), so there is no server to test.`,
        mx: { state: 'null_mx', hosts: 0 },
      },
      [],
      true,
    );
  }
  const implicit = records.length === 0;
  const hosts = implicit
    ? [{ host: domain, preference: null }]
    : records.slice(0, MAX_MX_HOSTS).map((r) => ({ host: r.exchange, preference: r.priority }));

  // The MTA-STS policy is fetched only when the TXT record calls for it (RFC 8461 §3).
  const wantsPolicy = stsTxt.kind === 'answer' && parseMtaStsRecord(stsTxt.records).state === 'ok';
  const fetched = wantsPolicy
    ? await deps.fetcher({ url: policyUrl(domain), maxBytes: MTA_STS_MAX_BYTES })
    : undefined;
  const sts = evaluateMtaSts({
    domain,
    txt: stsTxt,
    ...(fetched ? { fetched } : {}),
    mxHosts: hosts.map((h) => h.host),
  });

  const tested = await Promise.all(hosts.map((h) => testHost(deps, dns, h, sts, now)));
  const findings: Finding[] = [];
  const anyAddress = tested.some((h) => h.addresses.length > 0);
  if (implicit && !anyAddress) {
    return done(
      dns,
      {
        ...base,
        status: 'no_mail',
        summary: `${domain} has no MX and no address: no mail can be delivered to it.`,
        mx: { state: 'no_address', hosts: 0 },
        mta_sts: stsView(sts),
      },
      [],
      !dnsFailed(dns),
    );
  }
  const blocked = portBlocked(tested);
  if (blocked) findings.push(blocked);
  const status = domainStatus(tested);
  return done(
    dns,
    {
      ...base,
      status,
      summary: summarize(domain, tested, status),
      mx: { state: implicit ? 'implicit' : 'present', hosts: records.length },
      mta_sts: stsView(sts),
      hosts: tested,
    },
    findings,
    !dnsFailed(dns) && !blocked,
  );
}

function done(
  dns: TrackedMailDns,
  partial: Omit<
    MailTlsResponse,
    'hosts' | 'findings' | 'mta_sts' | 'source' | 'source_id' | 'providers_tried'
  > &
    Partial<Pick<MailTlsResponse, 'hosts' | 'mta_sts'>>,
  findings: Finding[],
  cacheable: boolean,
): { body: MailTlsResponse; cacheable: boolean } {
  return {
    body: {
      ...partial,
      mta_sts: partial.mta_sts ?? { mode: null, mx: [], state: 'not_applicable' },
      hosts: partial.hosts ?? [],
      findings,
      ...dns.attribution(),
    },
    cacheable,
  };
}

function dnsFailed(dns: TrackedMailDns): boolean {
  return dns.stats().firstFailure !== undefined;
}

function stsView(sts: MtaStsEvaluation): MailTlsResponse['mta_sts'] {
  return { mode: sts.policy?.mode ?? null, mx: sts.policy?.mx ?? [], state: sts.state };
}

async function testHost(
  deps: MailTlsDeps,
  dns: TrackedMailDns,
  { host, preference }: { host: string; preference: number | null },
  sts: MtaStsEvaluation,
  now: () => Date,
): Promise<MailTlsHost> {
  const findings: Finding[] = [];
  const tlsaName = smtpTlsaName(host);
  const [a, aaaa, tlsa] = await Promise.all([dns.a(host), dns.aaaa(host), dns.tlsa(tlsaName)]);
  // At most one address of each family: enough to see both paths a sender may take.
  const picked = [
    ...(a.kind === 'answer' ? a.records.slice(0, 1).map((address) => ({ address, family: 4 as const })) : []),
    ...(aaaa.kind === 'answer'
      ? aaaa.records.slice(0, 1).map((address) => ({ address, family: 6 as const }))
      : []),
  ];
  if (picked.length === 0) {
    findings.push(
      finding(
        'error',
        a.kind === 'error' || aaaa.kind === 'error'
          ? `The address lookup for ${host} failed: senders cannot reach it now.`
          : `${host} has no A or AAAA record: senders cannot deliver to it.`,
        'RFC 5321 §5.1',
      ),
    );
  }
  const addresses = await Promise.all(
    picked.map((p) => testAddress(deps, dns, host, p.address, p.family, tlsa, now)),
  );
  const policyMode = sts.state === 'policy' ? (sts.policy?.mode ?? null) : null;
  const matches =
    policyMode === 'enforce' || policyMode === 'testing'
      ? (sts.policy?.mx ?? []).some((p) => mxPatternMatches(p, host))
      : null;
  const reached = addresses.filter((x) => x.tls !== null);
  const validCert =
    reached.length > 0 &&
    reached.every((x) => x.tls?.connection.authorized && x.tls.connection.hostname_matches);
  const deliverable = matches === null ? null : matches && validCert;
  if (deliverable === false) {
    findings.push(
      finding(
        policyMode === 'enforce' ? 'error' : 'warning',
        !matches
          ? `${host} matches none of the MTA-STS policy's mx patterns: a sender enforcing the policy will not deliver here.`
          : `${host}'s certificate is not valid for its name: a sender enforcing MTA-STS will not deliver here.`,
        'RFC 8461 §4.1, §4.2',
      ),
    );
  }
  const dane = worstDane(addresses.map((x) => x.dane).filter((d): d is MailTlsDane => d !== null));
  return {
    host,
    preference,
    status: hostStatus(addresses, dane, deliverable, findings),
    addresses,
    dane,
    mta_sts: { mode: policyMode, matches_policy: matches, deliverable },
    findings: [...findings, ...(dane?.findings ?? []), ...addresses.flatMap((x) => addressFindings(host, x))],
  };
}

async function testAddress(
  deps: MailTlsDeps,
  dns: TrackedMailDns,
  host: string,
  address: string,
  family: 4 | 6,
  tlsa: Parameters<typeof evaluateDane>[0]['tlsa'],
  now: () => Date,
): Promise<MailTlsAddress> {
  const ptrPromise = forwardConfirmed(dns, address);
  let probe: SmtpProbe;
  try {
    probe = await deps.outbound.probeSmtpStarttls(address, {
      servername: host,
      heloName: deps.heloName,
      timeoutMs: deps.timeoutMs,
      connectTimeoutMs: deps.connectTimeoutMs,
    });
  } catch (err) {
    if (!(err instanceof UnsafeTargetError)) throw err;
    const { ptr, fcrdns } = await ptrPromise;
    return {
      address,
      family,
      status: 'refused',
      refused_reason: err.message,
      ptr,
      fcrdns,
      smtp: null,
      tls: null,
      dane: null,
    };
  }
  // DANE matches the certificates as the server sent them (RFC 7672 §3.1); Node's reconstruction only when unreadable.
  const sent = probe.handshake ? sentList(probe.handshake) : undefined;
  const chain = probe.handshake ? (sent ?? probe.handshake.peerChain) : undefined;
  let tls: TlsEvidence | null = null;
  if (probe.handshake && probe.handshake.peerChain.length > 0) {
    try {
      tls = tlsEvidence(probe.handshake, { host, port: SMTP_PORT, sni: host, now: now() }, sent);
    } catch (err) {
      if (!(err instanceof CertificateParseError)) throw err;
    }
  }
  const dane = evaluateDane({ host, tlsa, chain, now: now() });
  const { ptr, fcrdns } = await ptrPromise;
  return {
    address,
    family,
    status: addressStatus(probe, tls, dane),
    ptr,
    fcrdns,
    smtp: {
      banner: probe.banner ?? null,
      ehlo_extensions: probe.extensions,
      starttls_offered: probe.starttlsOffered,
      ehlo_after_tls: probe.ehloAfterTls ?? null,
      timings: probe.timings,
      ...(probe.failure ? { failure: probe.failure } : {}),
    },
    tls,
    dane,
  };
}

/** PTR names of the address, and whether one of them resolves back to it (FCrDNS); null when the PTR lookup failed. */
async function forwardConfirmed(
  dns: TrackedMailDns,
  address: string,
): Promise<{ ptr: string[]; fcrdns: boolean | null }> {
  const found = await reverseNames(dns, address, NAMES_PER_LOOKUP_LIMIT);
  return found ? { ptr: found.names, fcrdns: found.confirmed.length > 0 } : { ptr: [], fcrdns: null };
}
