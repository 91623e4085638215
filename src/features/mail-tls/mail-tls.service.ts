/**
 * GET /api/mail-tls: what a sending mail server meets at each MX host of a
 * domain. For every MX host (preference order, at most 10; the implicit MX of
 * RFC 5321 §5.1 when there is none) and at most one IPv4 and one IPv6 address
 * of it, all at once with one deadline each: the address checked by outbound
 * safety (a private one is reported as refused, never contacted), an SMTP
 * STARTTLS session on port 25 (net/smtp-starttls.ts), one per distinct
 * address however many hosts point there (addresses.ts), the certificate
 * judged as GET /api/tls judges it for the MX host name, DANE against the
 * chain as sent, the MTA-STS policy's verdict for the host, and FCrDNS.
 * Sessions are bounded service-wide (net/outbound.ts): when none can be had
 * in time the request fails 503 with Retry-After, and is not cached.
 *
 * DANE stands on netdiag's own DNSSEC validation of each TLSA answer
 * (features/dnssec/verdicts.ts), never a resolver's AD bit. A broken chain of
 * trust is a diagnosis, not an outage: when a validating resolver refuses the
 * MX or address answers (SERVFAIL) and netdiag finds them bogus, the hosts are
 * still tested as the domain's servers publish them, with a finding naming the
 * broken link, and the domain fails (validating senders cannot deliver).
 *
 * Cached 10 minutes; not when a DNS lookup failed, a DNSSEC validation reached
 * no verdict, or no host could be reached (the usual cause is this service's
 * own outbound port 25 being blocked).
 */
import { type CachedLoader, type Freshness, freshness } from '../../cache/cached.js';
import { AppError } from '../../errors.js';
import { normalizeDomain } from '../../net/names.js';
import type { DnsResolver } from '../../providers/dns/resolver.js';
import {
  type DnssecValidator,
  describeReason,
  type Reason,
  RequestVerdicts,
  VALIDATOR_UNAVAILABLE,
} from '../dnssec/verdicts.js';
import { createMailDns, type TrackedMailDns } from '../email/mail-dns.js';
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
import { type HostTlsa, type RequestSessions, type SessionDeps, startSessions } from './addresses.js';
import type { MailTlsDane, MailTlsHost, MailTlsQuery, MailTlsResponse } from './mail-tls.schema.js';
import { addressFindings, domainStatus, hostStatus, portBlocked, summarize, worstDane } from './verdicts.js';

export const MAIL_TLS_TTL = 600;
/** RFC 5321 does not bound MX sets; ten hosts is more than any real domain and bounds our connections. */
export const MAX_MX_HOSTS = 10;

export interface MailTlsDeps extends SessionDeps {
  dns: Pick<DnsResolver, 'resolve'>;
  fetcher: ResourceFetcher;
  loader: Pick<CachedLoader, 'load'>;
  clock: () => number;
  enabled: boolean;
  /** netdiag's own DNSSEC validation (features/dnssec/verdicts.ts). */
  dnssec: DnssecValidator;
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
  const verdicts = new RequestVerdicts(deps.dnssec);
  const dns = createMailDns(deps.dns, { verdicts, readBogus: true });
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

  const resolved = await Promise.all(hosts.map((h) => hostAddresses(dns, verdicts, h)));
  const sessions = startSessions(
    deps,
    dns,
    resolved.map((r) => ({ host: r.host, addresses: r.picked.map((p) => p.address) })),
  );
  const tested = await Promise.all(resolved.map((r) => testHost(r, sessions, sts, now)));
  const findings: Finding[] = mx.kind === 'answer' && mx.bogus ? [bogusMx(domain, mx.bogus)] : [];
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
      findings,
      !dnsFailed(dns),
    );
  }
  const blocked = portBlocked(tested);
  if (blocked) findings.push(blocked);
  // Validating senders cannot read the MX at all: none of them delivers, whatever the hosts do.
  const status = mx.kind === 'answer' && mx.bogus ? 'fail' : domainStatus(tested);
  const undetermined = resolved.some(
    (r) => r.tlsa.dnssec.status === 'indeterminate' && r.tlsa.dnssec.reason?.code !== VALIDATOR_UNAVAILABLE,
  );
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
    !dnsFailed(dns) && !blocked && !undetermined,
  );
}

function bogusMx(domain: string, reason: Reason): Finding {
  return finding(
    'error',
    `DNSSEC bogus: the MX answer for ${domain} fails netdiag's validation at ${describeReason(reason)}. ` +
      `Validating resolvers answer SERVFAIL for it, so senders that validate cannot deliver mail to ${domain} at all. ` +
      'The hosts below are the ones its authoritative servers name, tested as published.',
    'RFC 4035 §5.5',
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

/** A host's addresses to contact and its TLSA answer. */
interface HostAddresses {
  host: string;
  preference: number | null;
  /** At most one address of each family: enough to see both paths a sender may take. */
  picked: { address: string; family: 4 | 6 }[];
  /** The A or AAAA lookup failed (rather than finding nothing). */
  lookupFailed: boolean;
  /** The address answers fail DNSSEC validation: validating resolvers refuse them (the first broken link). */
  bogus: Reason | undefined;
  tlsa: HostTlsa;
}

async function hostAddresses(
  dns: TrackedMailDns,
  verdicts: RequestVerdicts,
  { host, preference }: { host: string; preference: number | null },
): Promise<HostAddresses> {
  const tlsaName = smtpTlsaName(host);
  const [a, aaaa, tlsa, verdict] = await Promise.all([
    dns.a(host),
    dns.aaaa(host),
    dns.tlsa(tlsaName),
    verdicts.verdict(tlsaName, 'TLSA'),
  ]);
  const picked = [
    ...(a.kind === 'answer' ? a.records.slice(0, 1).map((address) => ({ address, family: 4 as const })) : []),
    ...(aaaa.kind === 'answer'
      ? aaaa.records.slice(0, 1).map((address) => ({ address, family: 6 as const }))
      : []),
  ];
  const bogus = [a, aaaa].flatMap((o) => (o.kind === 'answer' && o.bogus ? [o.bogus] : []))[0];
  return {
    host,
    preference,
    picked,
    lookupFailed: a.kind === 'error' || aaaa.kind === 'error',
    bogus,
    tlsa: { outcome: tlsa, dnssec: { status: verdict.status, reason: verdict.reason } },
  };
}

async function testHost(
  { host, preference, picked, lookupFailed, bogus, tlsa }: HostAddresses,
  sessions: RequestSessions,
  sts: MtaStsEvaluation,
  now: () => Date,
): Promise<MailTlsHost> {
  const findings: Finding[] = [];
  if (bogus) {
    findings.push(
      finding(
        'error',
        `DNSSEC bogus: the address records of ${host} fail netdiag's validation at ${describeReason(bogus)}. Senders that validate cannot resolve ${host} and do not deliver mail to it; it was tested at the addresses its servers publish.`,
        'RFC 4035 §5.5',
      ),
    );
  }
  if (picked.length === 0) {
    findings.push(
      finding(
        'error',
        lookupFailed
          ? `The address lookup for ${host} failed: senders cannot reach it now.`
          : `${host} has no A or AAAA record: senders cannot deliver to it.`,
        'RFC 5321 §5.1',
      ),
    );
  }
  const addresses = await Promise.all(
    picked.map((p) => sessions.judge(host, p.address, p.family, tlsa, now)),
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
    status: bogus ? 'fail' : hostStatus(addresses, dane, deliverable, findings),
    addresses,
    dane,
    mta_sts: { mode: policyMode, matches_policy: matches, deliverable },
    findings: [...findings, ...(dane?.findings ?? []), ...addresses.flatMap((x) => addressFindings(host, x))],
  };
}
