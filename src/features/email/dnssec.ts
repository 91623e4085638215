/**
 * DNSSEC and DANE for mail, from DNS alone: whether the resolver validated
 * (the AD bit, RFC 4035 §3.2.3) the domain's MX answer and the TXT answers its
 * SPF and DMARC records come from, and for each MX host whether its address
 * answers validated and whether `_25._tcp.<host>` publishes TLSA records
 * (RFC 7672, RFC 6698), validated or not. The records are not compared with
 * the servers' certificates: that needs an SMTP connection, which this check
 * does not make.
 *
 * Informational: the check carries no points (score.ts, docs/email-security.md
 * say why). AD is the resolver's verdict; netdiag does not verify signatures.
 */
import { isIP } from '../../net/address.js';
import { MAX_RESOLVED_HOSTS, sortMx } from './mx.js';
import { describeTlsa, smtpTlsaName, type TlsaSummary, unusableTlsaFindings } from './tlsa.js';
import {
  type CheckStatus,
  type DnsOutcome,
  type Finding,
  finding,
  type MailDns,
  type MxRecord,
} from './types.js';

export interface DnssecAnswer {
  name: string;
  type: 'MX' | 'TXT';
  /** AD set on the answer; null when the lookup failed. */
  validated: boolean | null;
}

/** validated: TLSA present with AD; not_validated: present without AD (senders ignore it); none; error: the lookup failed. */
export type TlsaState = 'validated' | 'not_validated' | 'none' | 'error';

export interface DnssecHost {
  host: string;
  /** Both the A and the AAAA answer carried AD; null when either lookup failed. */
  addresses_validated: boolean | null;
  tlsa_name: string;
  tlsa: TlsaState;
  records: TlsaSummary[];
  /** DANE applies to this host: the MX answer, its address answers and its TLSA answer validated, with a usable record. */
  dane: boolean;
}

export interface DnssecEvaluation {
  state: 'validated' | 'partial' | 'not_validated' | 'error';
  answers: DnssecAnswer[];
  /** The MX hosts (the domain itself with no MX record: RFC 7672 §2.2.2), by preference. */
  hosts: DnssecHost[];
  /** How many MX hosts DANE protects; not_applicable without MX hosts; null when they are unknown. */
  dane: 'all' | 'some' | 'none' | 'not_applicable' | null;
  status: CheckStatus;
  summary: string;
  findings: Finding[];
}

export async function evaluateDnssec(domain: string, dns: MailDns): Promise<DnssecEvaluation> {
  const dmarcName = `_dmarc.${domain}`;
  const [mx, txt, dmarc] = await Promise.all([dns.mx(domain), dns.txt(domain), dns.txt(dmarcName)]);
  const asked: [DnssecAnswer, DnsOutcome<unknown>][] = [
    [{ name: domain, type: 'MX', validated: validated(mx) }, mx],
    [{ name: domain, type: 'TXT', validated: validated(txt) }, txt],
    [{ name: dmarcName, type: 'TXT', validated: validated(dmarc) }, dmarc],
  ];
  // A name too long to ask has no record whose answer could be validated.
  const kept = asked.filter(([, outcome]) => outcome.kind !== 'invalid_name');
  const answers = kept.map(([answer]) => answer);
  const mxValidated = mx.kind === 'answer' && mx.ad;
  const names = mxHostNames(domain, mx);
  const inspected = await Promise.all((names ?? []).map((host) => inspectHost(host, mxValidated, dns)));
  const hosts = inspected.map((i) => i.host);

  const known = answers.filter((a) => a.validated !== null);
  const state: DnssecEvaluation['state'] =
    known.length < answers.length
      ? 'error'
      : known.every((a) => a.validated)
        ? 'validated'
        : known.some((a) => a.validated)
          ? 'partial'
          : 'not_validated';
  const protectedHosts = hosts.filter((h) => h.dane);
  const dane: DnssecEvaluation['dane'] =
    names === undefined
      ? null
      : hosts.length === 0
        ? 'not_applicable'
        : protectedHosts.length === hosts.length
          ? 'all'
          : protectedHosts.length > 0
            ? 'some'
            : 'none';

  const findings = domainFindings(domain, state, answers);
  for (const i of inspected) findings.push(...hostFindings(i, domain, state, mxValidated));
  if (dane === 'some') {
    const others = hosts.filter((h) => !h.dane).map((h) => h.host);
    findings.push(
      finding(
        'warning',
        `DANE protects ${protectedHosts.length} of ${hosts.length} MX hosts; mail routed to ${others.join(', ')} has no DANE protection.`,
        'RFC 7672 §2.2',
      ),
    );
  }

  const failure =
    kept.flatMap(([a, outcome]) =>
      outcome.kind === 'error' ? [`the ${a.type} lookup for ${a.name} failed (${outcome.message})`] : [],
    )[0] ?? inspected.find((i) => i.failure !== undefined)?.failure;
  const status: CheckStatus = failure
    ? 'error'
    : findings.some((f) => f.severity !== 'info')
      ? 'warn'
      : state === 'validated' && (dane === 'all' || dane === 'not_applicable')
        ? 'pass'
        : 'info';
  return {
    state,
    answers,
    hosts,
    dane,
    status,
    summary: failure
      ? `DNSSEC could not be fully reported: ${failure}.`
      : summaryOf(domain, state, dane, hosts),
    findings,
  };
}

function validated(outcome: DnsOutcome<unknown>): boolean | null {
  return outcome.kind === 'answer' ? outcome.ad : null;
}

/**
 * The hosts mail for the domain goes to: its MX exchanges (by preference, the
 * same first ones the MX check resolves), the domain itself when it has no MX
 * record (RFC 7672 §2.2.2), none for a null MX or a name that does not exist;
 * undefined when the MX lookup failed.
 */
function mxHostNames(domain: string, mx: DnsOutcome<MxRecord>): string[] | undefined {
  if (mx.kind !== 'answer') return undefined;
  if (mx.rcode === 'NXDOMAIN') return [];
  if (mx.records.length === 0) return [domain];
  // A null MX names no host; beside other MX records (invalid, RFC 7505 §3) those others still might.
  const names = sortMx(mx.records.filter((r) => r.exchange !== '.'))
    .slice(0, MAX_RESOLVED_HOSTS)
    .map((r) => r.exchange)
    // An IP literal is no host name (the MX check reports it) and has no TLSA name.
    .filter((name) => isIP(name) === 0);
  return [...new Set(names)];
}

/** One MX host's report, and why it is incomplete when a lookup failed. */
interface Inspected {
  host: DnssecHost;
  failure?: string;
}

async function inspectHost(host: string, mxValidated: boolean, dns: MailDns): Promise<Inspected> {
  const tlsaName = smtpTlsaName(host);
  const [a, aaaa, tlsa] = await Promise.all([dns.a(host), dns.aaaa(host), dns.tlsa(tlsaName)]);
  const failed = [a, aaaa, tlsa].find((o) => o.kind === 'error');
  const addressesValidated = a.kind === 'answer' && aaaa.kind === 'answer' ? a.ad && aaaa.ad : null;
  const records = tlsa.kind === 'answer' ? tlsa.records.map(describeTlsa) : [];
  // A name too long to ask (invalid_name) cannot hold TLSA records.
  const state: TlsaState =
    tlsa.kind === 'error'
      ? 'error'
      : records.length === 0
        ? 'none'
        : tlsa.kind === 'answer' && tlsa.ad
          ? 'validated'
          : 'not_validated';
  return {
    host: {
      host,
      addresses_validated: addressesValidated,
      tlsa_name: tlsaName,
      tlsa: state,
      records,
      dane:
        mxValidated && addressesValidated === true && state === 'validated' && records.some((r) => r.usable),
    },
    ...(failed?.kind === 'error'
      ? {
          failure: `the ${failed === tlsa ? `TLSA lookup for ${tlsaName}` : `address lookup for ${host}`} failed (${failed.message})`,
        }
      : {}),
  };
}

const AD_RFC = 'RFC 4035 §3.2.3';

function domainFindings(
  domain: string,
  state: DnssecEvaluation['state'],
  answers: DnssecAnswer[],
): Finding[] {
  const list = (want: boolean) =>
    answers
      .filter((a) => a.validated === want)
      .map((a) => `${a.name} ${a.type}`)
      .join(', ');
  if (state === 'not_validated') {
    return [
      finding(
        'info',
        `The answers for ${domain} (MX, TXT) were not DNSSEC-validated: the zone is not signed, or no DS record at its parent links it to the root. Without DNSSEC, DANE cannot protect mail to ${domain}.`,
        AD_RFC,
      ),
    ];
  }
  if (state === 'partial') {
    return [
      finding(
        'info',
        `Only some answers were DNSSEC-validated: ${list(true)} validated; ${list(false)} not (an alias into an unsigned zone, or a sub-zone without a DS record).`,
        AD_RFC,
      ),
    ];
  }
  return [];
}

function hostFindings(
  { host: h }: Inspected,
  domain: string,
  state: DnssecEvaluation['state'],
  mxValidated: boolean,
): Finding[] {
  const out: Finding[] = [];
  const rfc = 'RFC 7672 §2.2';
  if (h.tlsa === 'error') {
    // DANE applies only where the MX and address answers validated; there a failed TLSA lookup stops delivery.
    if (mxValidated && h.addresses_validated) {
      out.push(
        finding(
          'warning',
          `The TLSA lookup for ${h.tlsa_name} failed: DANE-aware senders defer mail to ${h.host} while it fails.`,
          'RFC 7672 §2.1',
        ),
      );
    }
    return out;
  }
  if (h.tlsa === 'not_validated') {
    out.push(
      finding(
        'warning',
        `TLSA records at ${h.tlsa_name} are published but were not DNSSEC-validated: senders ignore them, so DANE does not protect ${h.host}.`,
        `${rfc}; RFC 6698 §4.1`,
      ),
    );
    return out;
  }
  if (h.tlsa === 'validated') {
    const unvalidated =
      !mxValidated && !h.addresses_validated
        ? `neither the MX answer for ${domain} nor the address answers of ${h.host} were`
        : !mxValidated
          ? `the MX answer for ${domain} was not`
          : !h.addresses_validated
            ? `the address answers of ${h.host} were not`
            : undefined;
    if (unvalidated) {
      out.push(
        finding(
          'warning',
          `TLSA records at ${h.tlsa_name} validated, but ${unvalidated}: senders need not apply DANE to ${h.host}, and an attacker who forges those answers bypasses it.`,
          rfc,
        ),
      );
    }
    out.push(...unusableTlsaFindings(h.tlsa_name, h.records));
    return out;
  }
  // No TLSA: worth a word only where DANE was otherwise possible, or where the host is why it is not.
  if (state === 'validated' && h.addresses_validated === false) {
    out.push(
      finding(
        'info',
        `The address answers of MX host ${h.host} were not DNSSEC-validated (its zone is not signed), so DANE cannot apply to it.`,
        rfc,
      ),
    );
  }
  return out;
}

function summaryOf(
  domain: string,
  state: DnssecEvaluation['state'],
  dane: DnssecEvaluation['dane'],
  hosts: DnssecHost[],
): string {
  const answers =
    state === 'validated'
      ? `The answers for ${domain} are DNSSEC-validated`
      : state === 'partial'
        ? `Only some answers for ${domain} are DNSSEC-validated`
        : `The answers for ${domain} are not DNSSEC-validated`;
  const count = hosts.filter((h) => h.dane).length;
  const tail =
    dane === 'not_applicable'
      ? 'no MX host name, so DANE does not apply'
      : dane === 'all'
        ? `DANE (validated TLSA) on ${hosts.length === 1 ? 'its MX host' : `all ${hosts.length} MX hosts`}`
        : dane === 'some'
          ? `DANE on ${count} of ${hosts.length} MX hosts`
          : 'no MX host has DANE';
  return `${answers}; ${tail}.`;
}
