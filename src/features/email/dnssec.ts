/**
 * DNSSEC and DANE for mail, by netdiag's own validation (features/dnssec:
 * iterative resolution from the root, every signature checked from the trust
 * anchor down; no resolver's AD bit): the domain's MX answer and the TXT
 * answers its SPF and DMARC records come from, and for each MX host its
 * address answers and the TLSA records at `_25._tcp.<host>` (RFC 7672,
 * RFC 6698). The TLSA records are not compared with the servers'
 * certificates: that needs an SMTP connection (GET /api/mail-tls makes it).
 *
 * Scored (score.ts, docs/email-security.md say how): a signed domain earns
 * it, a broken chain (bogus) loses it, an unsigned one is left out.
 */
import { isIP } from '../../net/address.js';
import {
  describeReason,
  type Reason,
  type RequestVerdicts,
  VALIDATOR_UNAVAILABLE,
  type ValidationStatus,
  worseVerdict,
} from '../dnssec/verdicts.js';
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
  /** netdiag's verdict on the answer. */
  status: ValidationStatus;
  /** bogus: the first broken link; insecure: where the chain of trust ends; indeterminate: why. */
  reason: Reason | null;
}

/** secure, insecure, bogus, indeterminate: netdiag's verdict on TLSA records present; none; error: the lookup failed. */
export type TlsaState = ValidationStatus | 'none' | 'error';

export interface DnssecHost {
  host: string;
  /** netdiag's verdict on the host's A and AAAA answers, the worse of the two. */
  addresses: ValidationStatus;
  addresses_reason: Reason | null;
  tlsa_name: string;
  tlsa: TlsaState;
  tlsa_reason: Reason | null;
  records: TlsaSummary[];
  /** DANE protects this host: the MX answer, its address answers and its TLSA answer are secure, with a usable record. */
  dane: boolean;
}

export type DnssecState = 'secure' | 'partial' | 'insecure' | 'bogus' | 'indeterminate' | 'not_checked';

export interface DnssecEvaluation {
  /** Over `answers`: bogus if any is, indeterminate if any is, secure if all are, partial if some are. */
  state: DnssecState;
  /** The domain's: the first bogus answer's broken link, else the MX answer's reason. */
  reason: Reason | null;
  answers: DnssecAnswer[];
  /** The MX hosts (the domain itself with no MX record: RFC 7672 §2.2.2), by preference. */
  hosts: DnssecHost[];
  /** How many MX hosts DANE protects; not_applicable without MX hosts; null when they are unknown or not checked. */
  dane: 'all' | 'some' | 'none' | 'not_applicable' | null;
  status: CheckStatus;
  summary: string;
  findings: Finding[];
  /** For the score: the MX answer is secure. */
  signed: boolean;
  /** For the score: MX hosts whose address or TLSA answers are bogus. */
  bogusHosts: string[];
  /** For the score: a verdict is missing (indeterminate, not checked, or a host list unknown). */
  unknown: boolean;
}

const BROKEN_RFC = 'RFC 4035 §5.5';

export async function evaluateDnssec(
  domain: string,
  dns: MailDns,
  verdicts: RequestVerdicts,
): Promise<DnssecEvaluation> {
  const dmarcName = `_dmarc.${domain}`;
  const questions = [
    { name: domain, type: 'MX' as const },
    { name: domain, type: 'TXT' as const },
    { name: dmarcName, type: 'TXT' as const },
  ];
  const [mx, ...validated] = await Promise.all([
    dns.mx(domain),
    ...questions.map((q) => verdicts.verdict(q.name, q.type)),
  ]);
  const answers: DnssecAnswer[] = questions.map((q, i) => ({
    ...q,
    status: validated[i]!.status,
    reason: validated[i]!.reason,
  }));
  const signed = answers[0]!.status === 'secure';
  const names = mxHostNames(domain, mx);
  const inspected = await Promise.all((names ?? []).map((host) => inspectHost(host, signed, dns, verdicts)));
  const hosts = inspected.map((i) => i.host);

  const state = stateOf(answers, verdicts.available);
  const worst = answers.reduce((w, a) => worseVerdict(w, a));
  const reason = state === 'bogus' || state === 'indeterminate' ? worst.reason : answers[0]!.reason;
  const protectedHosts = hosts.filter((h) => h.dane);
  const dane: DnssecEvaluation['dane'] =
    names === undefined || state === 'not_checked'
      ? null
      : hosts.length === 0
        ? 'not_applicable'
        : protectedHosts.length === hosts.length
          ? 'all'
          : protectedHosts.length > 0
            ? 'some'
            : 'none';

  const findings = domainFindings(domain, state, answers);
  // A host in the domain's own broken zone breaks at the same link: said once, for the domain.
  const broken = state === 'bogus' ? reason?.zone : undefined;
  for (const i of inspected) findings.push(...hostFindings(i, domain, state, signed, broken));
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

  const bogusHosts = hosts.filter((h) => h.addresses === 'bogus' || h.tlsa === 'bogus').map((h) => h.host);
  const undetermined =
    verdicts.available &&
    (answers.some((a) => a.status === 'indeterminate') ||
      hosts.some((h) => h.addresses === 'indeterminate' || h.tlsa === 'indeterminate'));
  const failure =
    (mx.kind === 'error' ? `the MX lookup for ${domain} failed (${mx.message})` : undefined) ??
    inspected.find((i) => i.failure !== undefined)?.failure;
  const status: CheckStatus =
    failure || undetermined
      ? 'error'
      : state === 'bogus' || bogusHosts.length > 0
        ? 'fail'
        : findings.some((f) => f.severity !== 'info')
          ? 'warn'
          : signed
            ? 'pass'
            : 'info';
  return {
    state,
    reason,
    answers,
    hosts,
    dane,
    status,
    summary: failure
      ? `DNSSEC could not be fully reported: ${failure}.`
      : summaryOf(domain, state, reason, dane, hosts, bogusHosts),
    findings,
    signed,
    bogusHosts,
    unknown: state === 'not_checked' || undetermined || names === undefined,
  };
}

function stateOf(answers: DnssecAnswer[], available: boolean): DnssecState {
  if (!available) return 'not_checked';
  if (answers.some((a) => a.status === 'bogus')) return 'bogus';
  if (answers.some((a) => a.status === 'indeterminate')) return 'indeterminate';
  const secure = answers.filter((a) => a.status === 'secure').length;
  return secure === answers.length ? 'secure' : secure > 0 ? 'partial' : 'insecure';
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

async function inspectHost(
  host: string,
  signed: boolean,
  dns: MailDns,
  verdicts: RequestVerdicts,
): Promise<Inspected> {
  const tlsaName = smtpTlsaName(host);
  const [a, aaaa, tlsaVerdict, tlsa] = await Promise.all([
    verdicts.verdict(host, 'A'),
    verdicts.verdict(host, 'AAAA'),
    verdicts.verdict(tlsaName, 'TLSA'),
    dns.tlsa(tlsaName),
  ]);
  const addresses = worseVerdict(a, aaaa);
  const records = tlsa.kind === 'answer' ? tlsa.records.map(describeTlsa) : [];
  // A name too long to ask (invalid_name) cannot hold TLSA records.
  const state: TlsaState =
    tlsa.kind === 'error'
      ? 'error'
      : tlsaVerdict.status === 'bogus'
        ? 'bogus'
        : records.length === 0
          ? 'none'
          : tlsaVerdict.status;
  return {
    host: {
      host,
      addresses: addresses.status,
      addresses_reason: addresses.reason,
      tlsa_name: tlsaName,
      tlsa: state,
      tlsa_reason: state === 'none' || state === 'error' ? null : tlsaVerdict.reason,
      records,
      dane: signed && addresses.status === 'secure' && state === 'secure' && records.some((r) => r.usable),
    },
    ...(tlsa.kind === 'error' ? { failure: `the TLSA lookup for ${tlsaName} failed (${tlsa.message})` } : {}),
  };
}

const list = (answers: DnssecAnswer[]) => answers.map((a) => `${a.name} ${a.type}`).join(', ');

function domainFindings(domain: string, state: DnssecState, answers: DnssecAnswer[]): Finding[] {
  if (state === 'not_checked') {
    const why = answers[0]?.reason?.code === VALIDATOR_UNAVAILABLE ? `: ${answers[0]!.reason!.detail}` : '';
    return [finding('info', `DNSSEC was not checked${why}.`, 'RFC 4033 §5')];
  }
  const out: Finding[] = [];
  const bogus = answers.filter((a) => a.status === 'bogus');
  for (const zone of new Set(bogus.map((a) => a.reason?.zone))) {
    const these = bogus.filter((a) => a.reason?.zone === zone);
    const mx = these.some((a) => a.type === 'MX');
    out.push(
      finding(
        'error',
        `DNSSEC bogus: the chain of trust of ${list(these)} is broken at ${describeReason(these[0]!.reason)}. ` +
          `Validating resolvers answer SERVFAIL for ${these.length === 1 ? 'it' : 'them'}: ` +
          `${mx ? `senders that validate cannot deliver mail to ${domain}, and ` : ''}receivers that validate cannot read ${domain}'s SPF, DKIM and DMARC records (temperror). ` +
          'The records its servers publish were still read, by netdiag’s own resolution, and are checked here as published.',
        BROKEN_RFC,
      ),
    );
  }
  const undetermined = answers.filter((a) => a.status === 'indeterminate');
  if (undetermined.length > 0) {
    out.push(
      finding(
        'warning',
        `netdiag could not validate ${list(undetermined)}: ${undetermined[0]!.reason?.detail ?? 'no verdict'}.`,
        'RFC 4033 §5',
      ),
    );
  }
  if (state === 'insecure') {
    out.push(
      finding(
        'info',
        `${domain} is not DNSSEC-signed: the chain of trust ends at ${describeReason(answers[0]!.reason)}. Without DNSSEC, receivers cannot tell forged MX, SPF and DMARC answers from real ones, and DANE cannot protect mail to ${domain}.`,
        'RFC 4033 §5',
      ),
    );
  }
  if (state === 'partial') {
    const insecure = answers.filter((a) => a.status === 'insecure');
    out.push(
      finding(
        'info',
        `Only some answers validate as secure: ${list(answers.filter((a) => a.status === 'secure'))} do; ${list(insecure)} ${insecure.length === 1 ? 'is' : 'are'} not signed (the chain of trust ends at ${insecure[0]?.reason?.zone ?? 'an unsigned zone'}: an alias into an unsigned zone, or a sub-zone without a DS record).`,
        'RFC 4033 §5',
      ),
    );
  }
  return out;
}

function hostFindings(
  { host: h }: Inspected,
  domain: string,
  state: DnssecState,
  signed: boolean,
  broken: string | undefined,
): Finding[] {
  if (state === 'not_checked') return [];
  const out: Finding[] = [];
  const rfc = 'RFC 7672 §2.2';
  if (h.addresses === 'bogus' && h.addresses_reason?.zone !== broken) {
    out.push(
      finding(
        'error',
        `DNSSEC bogus: the address records of MX host ${h.host} fail validation at ${describeReason(h.addresses_reason)}. Senders that validate cannot resolve ${h.host} and do not deliver mail to it.`,
        BROKEN_RFC,
      ),
    );
  } else if (h.addresses === 'indeterminate') {
    out.push(
      finding(
        'warning',
        `netdiag could not validate the address records of ${h.host}: ${h.addresses_reason?.detail ?? 'no verdict'}.`,
        'RFC 4033 §5',
      ),
    );
  }
  switch (h.tlsa) {
    case 'bogus':
      if (h.tlsa_reason?.zone === broken) break;
      out.push(
        finding(
          'error',
          `DNSSEC bogus: the TLSA answer at ${h.tlsa_name} fails validation at ${describeReason(h.tlsa_reason)}. DANE-aware senders defer mail to ${h.host} while its TLSA records cannot be validated.`,
          rfc,
        ),
      );
      break;
    case 'indeterminate':
      out.push(
        finding(
          'warning',
          `netdiag could not validate the TLSA records at ${h.tlsa_name}: ${h.tlsa_reason?.detail ?? 'no verdict'}.`,
          'RFC 4033 §5',
        ),
      );
      break;
    case 'error':
      // DANE applies only where the MX and address answers are secure; there a failed TLSA lookup stops delivery.
      if (signed && h.addresses === 'secure') {
        out.push(
          finding(
            'warning',
            `The TLSA lookup for ${h.tlsa_name} failed: DANE-aware senders defer mail to ${h.host} while it fails.`,
            'RFC 7672 §2.1',
          ),
        );
      }
      break;
    case 'insecure':
      out.push(
        finding(
          'warning',
          `TLSA records at ${h.tlsa_name} are published in a zone that is not signed (the chain of trust ends at ${h.tlsa_reason?.zone ?? 'an unsigned zone'}): senders ignore them, so DANE does not protect ${h.host}.`,
          `${rfc}; RFC 6698 §4.1`,
        ),
      );
      break;
    case 'secure': {
      const unprotected =
        !signed && h.addresses !== 'secure'
          ? `neither the MX answer for ${domain} nor the address answers of ${h.host} are`
          : !signed
            ? `the MX answer for ${domain} is not`
            : h.addresses !== 'secure'
              ? `the address answers of ${h.host} are not`
              : undefined;
      if (unprotected) {
        out.push(
          finding(
            'warning',
            `TLSA records at ${h.tlsa_name} validate, but ${unprotected} secure: senders need not apply DANE to ${h.host}, and an attacker who forges those answers bypasses it.`,
            rfc,
          ),
        );
      }
      out.push(...unusableTlsaFindings(h.tlsa_name, h.records));
      break;
    }
    case 'none':
      // Worth a word only where DANE was otherwise possible, or where the host is why it is not.
      if (signed && h.addresses === 'insecure') {
        out.push(
          finding(
            'info',
            `The address records of MX host ${h.host} are not signed (the chain of trust ends at ${h.addresses_reason?.zone ?? 'an unsigned zone'}), so DANE cannot apply to it.`,
            rfc,
          ),
        );
      }
  }
  return out;
}

function summaryOf(
  domain: string,
  state: DnssecState,
  reason: Reason | null,
  dane: DnssecEvaluation['dane'],
  hosts: DnssecHost[],
  bogusHosts: string[],
): string {
  if (state === 'not_checked') return 'DNSSEC was not checked: netdiag does not validate on this instance.';
  if (state === 'bogus')
    return `DNSSEC bogus: ${domain}'s chain of trust is broken at ${reason?.zone ?? 'a zone'} (${reason?.code ?? 'bogus'}), so validating resolvers refuse its records.`;
  const answers =
    state === 'secure'
      ? `${domain} is DNSSEC-signed and its answers validate`
      : state === 'partial'
        ? `Only some answers for ${domain} validate as secure`
        : state === 'indeterminate'
          ? `netdiag could not validate every answer for ${domain}`
          : `${domain} is not DNSSEC-signed`;
  const count = hosts.filter((h) => h.dane).length;
  const tail =
    bogusHosts.length > 0
      ? `DNSSEC is broken for MX host${bogusHosts.length === 1 ? '' : 's'} ${bogusHosts.join(', ')}`
      : dane === 'not_applicable'
        ? 'no MX host name, so DANE does not apply'
        : dane === 'all'
          ? `DANE (TLSA records that validate) on ${hosts.length === 1 ? 'its MX host' : `all ${hosts.length} MX hosts`}`
          : dane === 'some'
            ? `DANE on ${count} of ${hosts.length} MX hosts`
            : 'no MX host has DANE';
  return `${answers}; ${tail}.`;
}
