/**
 * The verdicts of GET /api/mail-tls, from the evidence each session left:
 * per address, per host (every path must hold, RFC 7672 §2.2), for the
 * domain, and the findings in words with the rule each rests on.
 */
import type { SmtpProbe } from '../../net/smtp-starttls.js';
import { type Finding, finding } from '../email/types.js';
import type { TlsEvidence } from '../tls/tls.schema.js';
import type { MailTlsAddress, MailTlsDane, MailTlsHost, MailTlsResponse } from './mail-tls.schema.js';

/** One address: unreachable, no STARTTLS or a failed handshake, a certificate or DANE a checking sender refuses. */
export function addressStatus(
  probe: SmtpProbe,
  tls: TlsEvidence | null,
  dane: MailTlsDane,
): MailTlsAddress['status'] {
  const failure = probe.failure;
  if (failure && (failure.stage === 'connect' || failure.stage === 'banner')) return 'unreachable';
  if (!tls) return 'fail';
  if (dane.verdict === 'mismatch' || dane.verdict === 'bogus' || dane.verdict === 'error') return 'fail';
  if (!tls.connection.authorized || !tls.connection.hostname_matches) return 'warn';
  if (dane.verdict === 'insecure' || dane.verdict === 'unusable') return 'warn';
  // No verdict on records that do not match: unknown whether senders apply them, a risk either way.
  if (dane.verdict === 'indeterminate' && dane.records.some((r) => r.result === 'mismatch')) return 'warn';
  if (tls.findings.some((f) => f.severity === 'critical' || f.severity === 'high')) return 'warn';
  return 'pass';
}

const RANK: Record<MailTlsAddress['status'], number> = {
  pass: 0,
  no_mail: 0,
  warn: 1,
  refused: 2,
  unreachable: 3,
  fail: 4,
};

/** The worst DANE verdict among a host's addresses: DANE must hold on every path (RFC 7672 §2.2). */
export function worstDane(verdicts: MailTlsDane[]): MailTlsDane | null {
  const order: MailTlsDane['verdict'][] = [
    'bogus',
    'error',
    'mismatch',
    'unchecked',
    'unusable',
    'insecure',
    'indeterminate',
    'valid',
    'none',
  ];
  return [...verdicts].sort((a, b) => order.indexOf(a.verdict) - order.indexOf(b.verdict))[0] ?? null;
}

export function hostStatus(
  addresses: MailTlsAddress[],
  dane: MailTlsDane | null,
  deliverable: boolean | null,
  findings: Finding[],
): MailTlsHost['status'] {
  if (addresses.length === 0) return 'fail';
  if (addresses.every((a) => a.status === 'refused')) return 'refused';
  const reachable = addresses.filter((a) => a.status !== 'refused' && a.status !== 'unreachable');
  if (reachable.length === 0) return 'unreachable';
  if (deliverable === false && findings.some((f) => f.severity === 'error')) return 'fail';
  if (dane?.verdict === 'mismatch' || dane?.verdict === 'bogus') return 'fail';
  const worst = reachable.reduce(
    (w, a) => (RANK[a.status] > RANK[w] ? a.status : w),
    'pass' as MailTlsAddress['status'],
  );
  return deliverable === false || addresses.some((a) => a.status === 'unreachable')
    ? worst === 'pass'
      ? 'warn'
      : worst
    : worst;
}

/** The domain: fail when a reachable host fails, unreachable when none could be reached. */
export function domainStatus(hosts: MailTlsHost[]): MailTlsResponse['status'] {
  if (hosts.length === 0) return 'fail';
  const reachable = hosts.filter((h) => h.status !== 'unreachable' && h.status !== 'refused');
  if (reachable.length === 0) return hosts.every((h) => h.status === 'refused') ? 'refused' : 'unreachable';
  if (reachable.some((h) => h.status === 'fail')) return 'fail';
  if (reachable.some((h) => h.status === 'warn') || reachable.length < hosts.length) return 'warn';
  return 'pass';
}

/** How many hosts are in each state, worst first, in words: "1 fails, 2 have warnings, 1 is unreachable, 1 passes". */
function tally(hosts: MailTlsHost[]): string {
  const count = (s: MailTlsHost['status']) => hosts.filter((h) => h.status === s).length;
  const says: [MailTlsHost['status'], string, string][] = [
    ['fail', 'fails', 'fail'],
    ['warn', 'has warnings', 'have warnings'],
    ['unreachable', 'is unreachable', 'are unreachable'],
    ['refused', 'was not contacted (not a public address)', 'were not contacted (not public addresses)'],
    ['pass', 'passes', 'pass'],
  ];
  return says
    .map(([status, one, many]) => [count(status), one, many] as const)
    .filter(([n]) => n > 0)
    .map(([n, one, many]) => `${n} ${n === 1 ? one : many}`)
    .join(', ');
}

/** The headline: every host counted in its state (issue 31), then what the worst of them means to a sender. */
export function summarize(domain: string, hosts: MailTlsHost[], status: MailTlsResponse['status']): string {
  const of = `${hosts.length} MX host${hosts.length === 1 ? '' : 's'}`;
  const counted = `${domain}'s ${of}: ${tally(hosts)}.`;
  switch (status) {
    case 'pass':
      return `All ${of} of ${domain} offer STARTTLS with a certificate valid for their names; DANE and MTA-STS, where published, let senders deliver.`;
    case 'warn':
      return `${counted} Mail is delivered, but a sender that checks certificates or DANE may refuse some hosts (see each host).`;
    case 'fail':
      return `${counted} A sender that insists on TLS (DANE, MTA-STS enforce) would not deliver to a failing host, or it lacks STARTTLS.`;
    case 'unreachable':
      return hosts.some((h) => h.status === 'refused')
        ? `${counted} None could be reached on port 25 from this service.`
        : `None of the ${of} of ${domain} could be reached on port 25 from this service.`;
    case 'refused':
      return `Every address of the ${of} of ${domain} is private or special-use: none was contacted.`;
    default:
      return `${domain} accepts no mail.`;
  }
}

/** What one address's session shows, in words, with the rule. */
export function addressFindings(host: string, a: MailTlsAddress): Finding[] {
  const at = `${host} (${a.address})`;
  const out: Finding[] = [];
  const failure = a.smtp?.failure;
  if (a.status === 'refused')
    out.push(
      finding(
        'info',
        `${at} is not a public address and was not contacted: ${a.refused_reason}.`,
        'RFC 6890',
      ),
    );
  if (failure?.stage === 'connect')
    out.push(
      finding(
        'warning',
        `${at}: no connection to port 25 (${failure.kind}): ${failure.message}.`,
        'RFC 5321 §3.1',
      ),
    );
  else if (failure?.stage === 'banner')
    out.push(finding('error', `${at} did not greet with 220: ${failure.message}.`, 'RFC 5321 §3.1, §4.2'));
  else if (failure?.stage === 'starttls' && a.smtp?.starttls_offered === false)
    out.push(
      finding(
        'error',
        `${at} does not offer STARTTLS: mail to it travels in clear text, and senders enforcing MTA-STS or DANE will not deliver.`,
        'RFC 3207',
      ),
    );
  else if (failure?.stage === 'starttls')
    out.push(finding('error', `${at}: STARTTLS failed: ${failure.message}.`, 'RFC 3207 §4'));
  else if (failure?.stage === 'tls handshake')
    out.push(
      finding(
        'error',
        `${at}: the TLS handshake after STARTTLS failed: ${failure.message}.`,
        'RFC 3207 §4.1',
      ),
    );
  if (a.tls && !a.tls.connection.hostname_matches)
    out.push(
      finding('warning', `${at}: the certificate does not cover ${host}.`, 'RFC 8461 §4.2, RFC 7672 §3.2'),
    );
  if (a.tls && !a.tls.connection.authorized && a.tls.connection.hostname_matches)
    out.push(
      finding(
        'warning',
        `${at}: the certificate does not verify (${a.tls.connection.authorization_error ?? 'untrusted'}); opportunistic TLS still works, MTA-STS does not.`,
        'RFC 8461 §4.2',
      ),
    );
  if (a.fcrdns === false)
    out.push(
      finding(
        'info',
        `${a.address} has no PTR name that resolves back to it (FCrDNS): some receivers distrust such senders.`,
        'RFC 8601 §3',
      ),
    );
  return out;
}

/**
 * Every contacted address timed out at connect: the likely cause is this
 * service's own network blocking outbound port 25, not the domain (many
 * clouds block it). Said plainly, as a finding, instead of blaming the hosts.
 */
export function portBlocked(hosts: MailTlsHost[]): Finding | undefined {
  const probed = hosts.flatMap((h) => h.addresses).filter((a) => a.status !== 'refused');
  const timedOut =
    probed.length > 0 &&
    probed.every((a) => a.smtp?.failure?.stage === 'connect' && a.smtp.failure.kind === 'timeout');
  return timedOut
    ? finding(
        'warning',
        'No MX host answered on port 25 within the deadline. When every host of a domain times out, the likely cause is that this service’s own network blocks outbound port 25 (many cloud providers do); the hosts may well be reachable from a mail server.',
        'RFC 5321 §4.5.3.2',
      )
    : undefined;
}
