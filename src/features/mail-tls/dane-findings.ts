/**
 * DANE's verdict for one MX host in words (dane.ts decides it): the summary line, and the
 * findings with the rule each rests on, saying for records senders do not (yet) apply whether
 * they match the chain the server sent, so the answer tells what signing or repairing the zone
 * would do.
 */
import { describeReason, VALIDATOR_UNAVAILABLE } from '../dnssec/verdicts.js';
import { unusableTlsaFindings } from '../email/tlsa.js';
import { type Finding, finding } from '../email/types.js';
import type { DaneRecordCheck, DaneVerdict, DnssecView } from './dane.js';

export function summaryOf(
  verdict: DaneVerdict,
  name: string,
  host: string,
  checks: DaneRecordCheck[],
  dnssec: DnssecView,
): string {
  const match = checks.find((c) => c.result === 'match');
  switch (verdict) {
    case 'valid':
      return `DANE authenticates ${host}: ${match!.meaning} at ${name} matches the certificates it sent.`;
    case 'mismatch':
      return `No usable TLSA record at ${name} matches the certificates ${host} sent: DANE-aware senders do not deliver to it.`;
    case 'unusable':
      return `The TLSA records at ${name} are validated but none is usable for SMTP: senders require TLS with ${host} and authenticate nothing.`;
    case 'unchecked':
      return `The TLSA records at ${name} are validated and usable, but no TLS handshake with ${host} completed to check them against.`;
    case 'bogus':
      return `DNSSEC bogus: the TLSA answer at ${name} fails validation at ${dnssec.reason?.zone ?? 'a zone'} (${dnssec.reason?.code ?? 'bogus'}): DANE-aware senders defer mail to ${host}.`;
    case 'indeterminate':
      return `The TLSA records at ${name} could not be DNSSEC-validated: whether senders apply them is not known.`;
    default:
      return `The TLSA records at ${name} are in a zone that is not DNSSEC-signed: senders ignore them.`;
  }
}

/**
 * What comparing the records with the chain says, for records senders do not (yet) apply; `fix`
 * is what would make them apply ("signing the zone"), undefined when only a verdict is missing.
 */
function against(checks: DaneRecordCheck[], fix: string | undefined): string {
  const usable = checks.filter((c) => c.usable);
  if (usable.length === 0 || usable.every((c) => c.result === 'unchecked')) return '';
  if (usable.some((c) => c.result === 'match'))
    return fix
      ? ` They match the certificates the server sent: ${fix} would make DANE effective.`
      : ' They match the certificates the server sent.';
  return ` They do not match the certificates the server sent${fix ? ' either' : ''}: correct them${fix ? ` before ${fix}` : ''}, or DANE-aware senders ${fix ? 'will stop' : 'may stop'} delivering.`;
}

export function findingsOf(
  verdict: DaneVerdict,
  name: string,
  host: string,
  checks: DaneRecordCheck[],
  dnssec: DnssecView,
): Finding[] {
  if (verdict === 'insecure') {
    const where = dnssec.reason ? ` (the chain of trust ends at ${dnssec.reason.zone})` : '';
    return [
      finding(
        'warning',
        `TLSA records at ${name} are published in a zone that is not DNSSEC-signed${where}: senders ignore them, so DANE does not protect ${host}.${against(checks, 'signing the zone (with a DS record at its parent)')}`,
        'RFC 7672 §2.2.3',
      ),
    ];
  }
  if (verdict === 'bogus') {
    return [
      finding(
        'error',
        `DNSSEC bogus: the TLSA answer at ${name} fails netdiag's validation at ${describeReason(dnssec.reason)}. ` +
          `Validating resolvers answer SERVFAIL for it, and DANE-aware senders defer mail to ${host} until the chain is repaired, then bounce it.${against(checks, 'repairing the chain')}`,
        'RFC 7672 §2.2',
      ),
    ];
  }
  if (verdict === 'indeterminate') {
    // Not validating here is no fault of the domain's; records that do not match are, either way.
    const quiet =
      dnssec.reason?.code === VALIDATOR_UNAVAILABLE && !checks.some((c) => c.result === 'mismatch');
    return [
      finding(
        quiet ? 'info' : 'warning',
        `The TLSA records at ${name} could not be DNSSEC-validated (${dnssec.reason?.detail ?? 'no verdict'}), so whether DANE-aware senders apply them is not known.${against(checks, undefined)}`,
        'RFC 7672 §2.2.3',
      ),
    ];
  }
  const out = unusableTlsaFindings(name, checks);
  if (verdict === 'mismatch') {
    const reasons = checks
      .filter((c) => c.result === 'mismatch')
      .map((c) => `${c.usage} ${c.selector} ${c.matching_type}: ${c.reason}`)
      .join('; ');
    out.push(
      finding(
        'error',
        `No usable TLSA record at ${name} matches the certificates ${host} sent (${reasons}): DANE-aware senders refuse to deliver mail to ${host}, deferring it until it bounces. ` +
          'The usual cause is a certificate or key renewed without first publishing a TLSA record for the new one; publish records for the current key, and for the next one before each rollover.',
        'RFC 7672 §3.1, §4',
      ),
    );
  }
  if (verdict === 'unchecked') {
    out.push(
      finding(
        'info',
        `The TLSA records at ${name} are validated and usable, but no TLS handshake with ${host} completed, so they were not checked against its certificates. With usable TLSA records DANE-aware senders require TLS with ${host} and never fall back to cleartext.`,
        'RFC 7672 §2.2',
      ),
    );
  }
  return out;
}
