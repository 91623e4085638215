/**
 * MX: where the domain receives mail (RFC 5321 §5.1), whether each exchange
 * resolves, and the null MX that says "no mail here" (RFC 7505).
 */
import { isIP } from '../../net/address.js';
import {
  type CheckStatus,
  type DnsOutcome,
  type Finding,
  finding,
  type MailDns,
  type MxRecord,
} from './types.js';

export interface MxHost {
  priority: number;
  exchange: string;
  /** A and AAAA addresses, IPv4 first. */
  addresses: string[];
}

export type MxState =
  /** One or more usable MX records. */
  | 'present'
  /** A single `0 .`: the domain accepts no mail (RFC 7505). */
  | 'null_mx'
  /** `.` published next to other MX records, which RFC 7505 §3 forbids. */
  | 'invalid_null_mx'
  /** No MX record: senders fall back to the domain's own A/AAAA (RFC 5321 §5.1). */
  | 'none'
  /** The domain does not exist. */
  | 'nxdomain'
  | 'error';

export interface MxEvaluation {
  state: MxState;
  hosts: MxHost[];
  /** Every exchange has an address; undefined when a DNS failure left that unknown. */
  allResolve: boolean | undefined;
  /** For state `none`: the domain's own addresses, which act as an implicit MX. */
  implicitAddresses: string[];
  status: CheckStatus;
  summary: string;
  findings: Finding[];
}

/** More MX records than any real deployment has; the rest are listed but not resolved. */
export const MAX_RESOLVED_HOSTS = 20;

export async function evaluateMx(domain: string, dns: MailDns): Promise<MxEvaluation> {
  const answer = await dns.mx(domain);
  const base = { hosts: [], allResolve: undefined, implicitAddresses: [] };
  if (answer.kind !== 'answer') {
    return {
      ...base,
      state: 'error',
      status: 'error',
      summary: `The MX lookup failed (${answer.message}); this check is left out of the score.`,
      findings: [],
    };
  }
  if (answer.rcode === 'NXDOMAIN') {
    return {
      ...base,
      state: 'nxdomain',
      status: 'fail',
      summary: `${domain} does not exist (NXDOMAIN): it can neither send nor receive mail.`,
      findings: [finding('error', `${domain} does not exist in the DNS (NXDOMAIN).`, 'RFC 8020')],
    };
  }
  const records = sortMx(answer.records);
  if (records.length === 0) return implicitMx(domain, dns);

  const nullMx = records.filter((r) => r.exchange === '.');
  if (nullMx.length > 0) {
    const hosts = records.map((r) => ({ ...r, addresses: [] }));
    if (records.length > 1) {
      return {
        ...base,
        hosts,
        state: 'invalid_null_mx',
        status: 'fail',
        summary: 'A null MX (".") is published together with other MX records, which is invalid.',
        findings: [
          finding(
            'error',
            'A domain that publishes a null MX must publish no other MX record; senders may ignore either.',
            'RFC 7505 §3',
          ),
        ],
      };
    }
    const findings: Finding[] = [
      finding('info', 'Null MX: the domain declares that it accepts no mail.', 'RFC 7505 §3'),
    ];
    if (nullMx[0]!.priority !== 0) {
      findings.push(
        finding(
          'warning',
          `The null MX should have preference 0, not ${nullMx[0]!.priority}.`,
          'RFC 7505 §3',
        ),
      );
    }
    return {
      ...base,
      hosts,
      state: 'null_mx',
      allResolve: true,
      status: findings.some((f) => f.severity !== 'info') ? 'warn' : 'pass',
      summary: 'Null MX ("0 ."): the domain accepts no mail.',
      findings,
    };
  }

  const findings: Finding[] = [];
  const resolved = await Promise.all(
    records.map(async (r, i) => (i < MAX_RESOLVED_HOSTS ? resolveHost(r, dns) : undefined)),
  );
  const hosts: MxHost[] = [];
  let unknown = false;
  let unresolved = 0;
  records.forEach((r, i) => {
    const res = resolved[i];
    hosts.push({ ...r, addresses: res?.addresses ?? [] });
    if (!res) return;
    findings.push(...res.findings);
    if (res.addresses.length > 0) return;
    if (res.failed) unknown = true;
    else unresolved += 1;
  });
  if (records.length > MAX_RESOLVED_HOSTS) {
    findings.push(
      finding(
        'info',
        `Only the first ${MAX_RESOLVED_HOSTS} of ${records.length} exchanges were resolved.`,
        'RFC 5321 §5.1',
      ),
    );
  }
  const allResolve = unresolved > 0 ? false : unknown ? undefined : true;
  let status: CheckStatus = 'pass';
  let summary = `${records.length} MX record${records.length === 1 ? '' : 's'}; every exchange resolves.`;
  if (unresolved === records.length) {
    status = 'fail';
    summary = 'No MX exchange resolves to an address: mail to this domain cannot be delivered.';
  } else if (unresolved > 0) {
    status = 'warn';
    summary = `${unresolved} of ${records.length} MX exchanges do not resolve to an address.`;
  } else if (unknown) {
    status = 'warn';
    summary = `${records.length} MX records; some exchanges could not be resolved (temporary DNS failure).`;
  } else if (findings.some((f) => f.severity !== 'info')) {
    status = 'warn';
  }
  return { state: 'present', hosts, allResolve, implicitAddresses: [], status, summary, findings };
}

async function implicitMx(domain: string, dns: MailDns): Promise<MxEvaluation> {
  const [a, aaaa] = await Promise.all([dns.a(domain), dns.aaaa(domain)]);
  const addresses = [...records(a), ...records(aaaa)];
  const findings = [
    finding(
      'warning',
      'No MX record: senders fall back to the domain’s own A/AAAA address (implicit MX). Publish an MX, or a null MX if the domain takes no mail.',
      'RFC 5321 §5.1',
    ),
  ];
  return {
    state: 'none',
    hosts: [],
    allResolve: undefined,
    implicitAddresses: addresses,
    status: addresses.length > 0 ? 'warn' : 'fail',
    summary:
      addresses.length > 0
        ? 'No MX record; mail would go to the domain’s own address (implicit MX).'
        : 'No MX record and no address: the domain cannot receive mail.',
    findings,
  };
}

async function resolveHost(
  mx: MxRecord,
  dns: MailDns,
): Promise<{ addresses: string[]; failed: boolean; findings: Finding[] }> {
  const findings: Finding[] = [];
  if (isIP(mx.exchange) !== 0) {
    findings.push(
      finding(
        'error',
        `MX exchange ${mx.exchange} is an IP address; it must be a host name.`,
        'RFC 5321 §5.1',
      ),
    );
    return { addresses: [], failed: false, findings };
  }
  const [a, aaaa] = await Promise.all([dns.a(mx.exchange), dns.aaaa(mx.exchange)]);
  const addresses = [...records(a), ...records(aaaa)];
  const aliases = a.kind === 'answer' ? a.aliases : aaaa.kind === 'answer' ? aaaa.aliases : [];
  if (aliases.length > 0) {
    findings.push(
      finding(
        'warning',
        `MX exchange ${mx.exchange} is an alias (CNAME to ${aliases[aliases.length - 1]}); it must name a host directly.`,
        'RFC 2181 §10.3',
      ),
    );
  }
  const failed = a.kind !== 'answer' || aaaa.kind !== 'answer';
  if (addresses.length === 0 && !failed) {
    findings.push(finding('error', `MX exchange ${mx.exchange} has no A or AAAA record.`, 'RFC 5321 §5.1'));
  }
  return { addresses, failed, findings };
}

function records(outcome: DnsOutcome<string>): string[] {
  return outcome.kind === 'answer' ? outcome.records : [];
}

/** By preference (lower first, RFC 5321 §5.1), then name, so the order is stable. */
export function sortMx(records: MxRecord[]): MxRecord[] {
  return [...records].sort((x, y) => x.priority - y.priority || x.exchange.localeCompare(y.exchange));
}
